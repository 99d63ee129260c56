#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# json_vocab.sh - one JSON vocabulary (issue 35 item 4; docs/json.md): the JSON of
# every command that runs without a pool, the agent's API and its exposition,
# walked against the field table (src/device/gpu_fields.h):
#   - no removed or drifted name anywhere (the API's old keys, dmon's column
#     keys of sample values, ecc_volatile_*, temp_max_c, a leak's comm, ...);
#   - every key of a "sample" object is a row of the table (or one of the four
#     keys json_util.c adds: timestamp_ns, duration_ns, lost, the reasons' mask,
#     nvlinks, unavailable), and every key of dmon --json is a row's or one of
#     dmon's own derived columns;
#   - no real with more than 15 significant digits in the text as written;
#   - every gpuctl_* family of the exposition is a row's metric or documented in
#     docs/metrics.md, and every row's metric is documented there.
# The walk counts what it saw, and fails when an output it expects is empty, so
# it cannot pass by reading nothing.
# By hand: GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/json_vocab.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need python3 curl

out_dir="$tmp/out"
mkdir -p "$out_dir"
# save NAME ARGS...: the command's stdout in $out_dir/NAME.json (it must exit 0;
# SAVE_RC=N another code, as health's verdict FAIL)
save() {
	local name=$1 rc=0
	shift
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$out_dir/$name.json" 2>"$tmp/$name.err" || rc=$?
	[ "$rc" = "${SAVE_RC:-0}" ] || fail "'$*' exited $rc: $(head -c 400 "$tmp/$name.err")"
}
sim=(--sim h200x8)
save info "${sim[@]}" info --json
save topo "${sim[@]}" topo --json
save dmon "${sim[@]}" dmon --json -c 2 -d 100ms --columns pwr,gtemp,mtemp,sm,mem,mclk,pclk,pviol,tviol,fb,fbpct,sbecc,dbecc,pci,rxpci,txpci,nvrx,nvtx,pst,thr,plim,energy,prcv,smact
save health "${sim[@]}" health --json --window 0
# faults, so that findings, a lost GPU and ECC values are in the outputs too
cat >"$tmp/faults.json" <<'JSON'
{"faults": [{"kind": "gpu_lost", "gpu": 2}, {"kind": "ecc_uncorrectable", "gpu": 1, "count": 2}]}
JSON
SAVE_RC=$("$GPUCTL" --sim "h200x8,faults=$tmp/faults.json" health --window 0 >/dev/null 2>&1; echo $?)
checks=$((checks + 1))
[ "$SAVE_RC" != 0 ] || fail "health passes a lost GPU"
save health_faults --sim "h200x8,faults=$tmp/faults.json" health --json --window 0
SAVE_RC=0
save info_faults --sim "h200x8,faults=$tmp/faults.json" info --json
save data info --data --json
save plan_train plan train --model llama-2-7b --gpu 'H200 SXM' --seq 4k --json
save plan_serve plan serve --model llama-2-7b --context 4k --json
save plan_cost plan cost --instance p4d.24xlarge --hours 2h --json
save plan_mig plan mig --gpu 'H200 SXM' --request 3x1g.18gb,1x3g.71gb --json
save bench bench --results "$src/tests/data/results-h200-train.json" --json
"$GPUCTL" "${sim[@]}" agent --once >"$tmp/exposition.txt" 2>"$tmp/once.err" || fail "agent --once: $(cat "$tmp/once.err")"

# the agent's API, on a free port
"$GPUCTL" "${sim[@]}" agent --listen 127.0.0.1:0 --interval 100ms >/dev/null 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
for ep in gpus health history; do
	checks=$((checks + 1))
	curl -sf --max-time 10 "http://127.0.0.1:$port/api/v1/$ep" >"$out_dir/api_$ep.json" || fail "GET /api/v1/$ep"
done

checks=$((checks + 1))
python3 - "$src/src/device/gpu_fields.h" "$src/docs/metrics.md" "$out_dir" "$tmp/exposition.txt" \
	"$src/src/view/moncol.c" <<'EOF' || fail "the vocabulary"
import json, os, re, sys
fields_h, metrics_md, out_dir, expo, moncol_c = sys.argv[1:6]
text = open(fields_h).read()
rows = re.findall(r'X\((\w+), (\w+), (\w+), (NULL|"[^"]*"), (FAMILY|SERIES|NONE), (NULL|"[^"]*")', text)
assert len(rows) > 40, "the field table did not parse: %d rows" % len(rows)
members = {r[0] for r in rows}
table_metrics = {r[5].strip('"') for r in rows if r[5] != "NULL"}
old_api = {r[3].strip('"') for r in rows if r[3] != "NULL"} - members
# the dmon/top columns of one field: view/moncol.c's FCOL(member, name, key, unit, grp, width, calc, ...)
cols = re.findall(r'FCOL\(\w+, "[^"]*", "(\w+)", "[^"]*", [^,]+, \d+, (\w+),', open(moncol_c).read())
assert len(cols) > 15, "the columns did not parse"
old_cols = {key for key, calc in cols if calc in ("VALUE", "PSTATE")} - members
derived_cols = {key for key, calc in cols if calc not in ("VALUE", "PSTATE")}
dmon_own = {"fb_used_pct", "nvlink_rx_mbs", "nvlink_tx_mbs"}  # view/moncol.c's columns of other values
drifted = {"ecc_volatile_uncorrected", "ecc_volatile_corrected", "ecc_volatile_corrected_rate", "ecc_uncorrected",
           "temp_max_c", "power_max_w", "clock_min_mhz", "comm", "last_error"}
# energy_j: energy in joules over an object's own window (a bench test's telemetry, a pool
# job's accounting), dmon's CSV column's unit too: one meaning, so not a drifted name
banned = (old_api | old_cols | drifted) - members - {"energy_j"}
sample_extra = {"timestamp_ns", "duration_ns", "lost", "clock_event_reasons_mask", "nvlinks", "unavailable"}
dmon_extra = {"timestamp", "timestamp_ns", "gpu", "uuid", "up", "simulated", "unavailable"}
problems, seen = [], {"keys": 0, "samples": 0, "reals": 0}

def walk(o, where):
    if isinstance(o, dict):
        for k, v in o.items():
            seen["keys"] += 1
            if k in banned:
                problems.append("%s: removed or drifted key '%s'" % (where, k))
            if k == "sample" and isinstance(v, dict):
                seen["samples"] += 1
                for sk in v:
                    if sk not in members and sk not in sample_extra:
                        problems.append("%s: sample key '%s' is no row of the field table" % (where, sk))
            walk(v, where + "." + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, "%s[%d]" % (where, i))

number = re.compile(r'(?<![\w".])-?(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w"])')
def reals(raw, where):
    # the numbers outside strings, as written
    for chunk in re.split(r'"(?:[^"\\]|\\.)*"', raw):
        for m in number.finditer(chunk):
            n = m.group(1)
            if "." not in n and "e" not in n.lower():
                continue
            seen["reals"] += 1
            mant = re.split(r'[eE]', n)[0].replace(".", "").lstrip("0")
            if len(mant) > 15:
                problems.append("%s: real %s has %d significant digits" % (where, n, len(mant)))

files = sorted(os.listdir(out_dir))
assert len(files) >= 15, files
for f in files:
    raw = open(os.path.join(out_dir, f)).read()
    assert raw.strip(), "%s is empty" % f
    docs = [json.loads(l) for l in raw.splitlines() if l.strip()] if f == "dmon.json" else [json.loads(raw)]
    for d in docs:
        walk(d, f)
    reals(raw, f)
    if f == "dmon.json":
        assert len(docs) == 16, len(docs)
        for d in docs:
            for k in d:
                if k not in members and k not in derived_cols and k not in dmon_own and k not in dmon_extra:
                    problems.append("dmon.json: key '%s' is neither a row nor a derived column" % k)
            if not isinstance(d.get("pstate", 0), int):
                problems.append("dmon.json: pstate is not the sample's integer: %r" % d["pstate"])
assert seen["samples"] >= 16 and seen["reals"] > 50, seen

# the exposition: every family a row's metric or documented; every row's metric documented
documented = set(re.findall(r'`(gpuctl_[a-z0-9_]+)`', open(metrics_md).read()))
families = re.findall(r'^# TYPE (\S+) ', open(expo).read(), re.M)
assert len(families) > 30, len(families)
for fam in families:
    if fam not in table_metrics and fam not in documented:
        problems.append("exposition: family %s is neither in the field table nor in docs/metrics.md" % fam)
for m in table_metrics - documented:
    problems.append("field table: metric %s is not in docs/metrics.md" % m)
for p in problems[:40]:
    print(p)
print("walked %d keys, %d samples, %d reals, %d families; %d problems" %
      (seen["keys"], seen["samples"], seen["reals"], len(families), len(problems)))
sys.exit(1 if problems else 0)
EOF
finish
