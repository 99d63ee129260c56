#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dcgm_compat.sh - the agent's `dcgm_compat` setting (docs/metrics.md,
# "dcgm-exporter names") against dcgm-exporter's own published lists, written
# down in tests/data/dcgm-exporter/: on a simulated 8x H200,
#   - every counter of its default list (default-counters.csv) that
#     docs/metrics.md does not mark "not served" is served, for all 8 GPUs,
#     with dcgm-exporter's labels; without the setting none is;
#   - every metric its Grafana dashboard's queries name is served;
#   - a real Prometheus scraping the agent (OpenMetrics, as it asks) returns
#     data for every panel query and both template variables of that dashboard.
# Everything it starts is killed by PID on exit; its waits are bounded (120 s).
#
# Run by CTest. By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/dcgm_compat.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need curl python3
data="$src/tests/data/dcgm-exporter"
agent_pid=""
prom_pid=""
on_exit 'for p in $prom_pid $agent_pid; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done'
limit=120
deadline=$(($(date +%s) + limit))
left() { echo $((deadline - $(date +%s))); }

# --- without the setting: none of the names
expect_exit 0 "$GPUCTL" --sim h200x8 agent --once --kernel-log off
if grep -q '^DCGM_' <<<"$out"; then fail "DCGM_ names served without dcgm_compat"; fi

# --- with it (config file key), on a free loopback port
printf 'dcgm_compat = on\nkernel_log = off\n' >"$tmp/agent.conf"
"$GPUCTL" --sim h200x8 agent --config "$tmp/agent.conf" --listen 127.0.0.1:0 --interval 1s \
	>"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
agent_port "$tmp/agent.err" "$agent_pid"
if [ -z "$port" ]; then
	echo "FAIL: the agent did not start: $(cat "$tmp/agent.err")"
	exit 1
fi
# the profiling figures need two readings of each GPU: wait for them
gpm_served() {
	curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt" &&
		[ "$(grep -c '^DCGM_FI_PROF_SM_ACTIVE{' "$tmp/metrics.txt")" = 8 ]
}
check "DCGM_FI_PROF_SM_ACTIVE for 8 GPUs" wait_until "$(left)" gpm_served

checks=$((checks + 1))
python3 - "$tmp/metrics.txt" "$data/default-counters.csv" "$data/dashboard-queries.tsv" "$src/docs/metrics.md" <<'PY' || fail "dcgm-exporter's names in the exposition"
import re, sys
text = open(sys.argv[1]).read()
series = {}
for line in text.splitlines():
    m = re.match(r"(DCGM_FI_[A-Z0-9_]+)\{([^}]*)\} (\S+)$", line)
    if m:
        series.setdefault(m.group(1), []).append(dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))))
doc = open(sys.argv[4]).read()
not_served = set(re.findall(r"\| `(DCGM_FI_[A-Z0-9_]+)` \| not served", doc))
bad = []
defaults = [l.split(",")[0].strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
assert len(defaults) >= 20, defaults
for name in defaults:
    if name in not_served:
        if name in series:
            bad.append("%s is marked not served but is" % name)
        continue
    if len(series.get(name, [])) != 8:
        bad.append("default counter %s: %d series, want 8" % (name, len(series.get(name, []))))
for name, labs in series.items():
    for l in labs:
        for k in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "container", "namespace", "pod"):
            if k not in l:
                bad.append("%s lacks label %s" % (name, k))
        if not l.get("UUID", "").startswith("GPU-") or l.get("device") != "nvidia" + l.get("gpu", "?") or l.get("modelName") != "NVIDIA H200":
            bad.append("%s labels %s" % (name, l))
        if l.get("container") or l.get("namespace") or l.get("pod"):
            bad.append("%s: Kubernetes labels not empty: %s" % (name, l))
queries = [l.rstrip("\n").split("\t") for l in open(sys.argv[3]) if not l.startswith("#")]
assert len(queries) >= 10, queries
for kind, title, q in queries:
    for name in re.findall(r"DCGM_FI_[A-Z0-9_]+", q):
        if name not in series:
            bad.append("dashboard %s '%s' names %s, not served" % (kind, title, name))
if bad:
    print("\n".join(sorted(set(bad))[:40]))
    sys.exit(1)
PY

# --- a real Prometheus, and the dashboard's queries (skipped without Prometheus, a failure in CI)
need prometheus
prometheus_start dcgm "$port"
# every panel query returns a series for each of the 8 GPUs (the sums and averages: one),
# and both variables the 8 GPUs and the one instance
panels_answer() {
	python3 - "$data/dashboard-queries.tsv" "$api" >"$tmp/panels.out" 2>&1 <<'PY'
import json, sys, urllib.parse, urllib.request
def get(path, **params):
    url = sys.argv[2] + path + "?" + urllib.parse.urlencode(params, doseq=True)
    ans = json.load(urllib.request.urlopen(url, timeout=5))
    assert ans.get("status") == "success", ans
    return ans["data"]
bad = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    kind, title, q = line.rstrip("\n").split("\t")
    if kind == "panel":
        expr = q.replace('"$instance"', '".+"').replace('"$gpu"', '".+"')
        r = get("/query", query=expr)["result"]
        want = 1 if expr.startswith(("avg(", "sum(")) else 8
        if len(r) != want:
            bad.append("panel '%s': %d series, want %d (%s)" % (title, len(r), want, expr))
    else:  # label_values(METRIC, LABEL)
        metric, label = q[len("label_values("):-1].split(", ")
        vals = get("/label/%s/values" % label, **{"match[]": metric})
        want = 8 if label == "gpu" else 1
        if len(vals) != want:
            bad.append("variable %s: %s, want %d values" % (title, vals, want))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
if ! wait_until "$(left)" panels_answer; then
	fail "dcgm-exporter's dashboard against Prometheus: $(head -c 1500 "$tmp/panels.out"); $(tail -3 "$tmp/prom.log")"
fi
# and Prometheus took the scrape whole (OpenMetrics, as it asks: the counters typed unknown)
up_ok() {
	curl -s --max-time 10 --get --data-urlencode 'query=up{job="dcgm"}' "$api/query" | grep -q '"value":\[[0-9.]*,"1"\]'
}
check "the scrape is up" up_ok
echo "$((limit - $(left))) s"
finish
