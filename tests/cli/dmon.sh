#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dmon.sh - `gpuctl dmon` on simulated servers: lines per GPU and interval,
# column groups and --columns, -i selection, text/CSV/JSON formats, the
# SIMULATED marks, a lost GPU shown as an error (never 0), rates from the
# NVLink counters, and the usage errors with their exit code (64).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/dmon.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3
run() { # run NAME ARGS...: gpuctl ARGS into $tmp/NAME.out / .err, must exit 0
	local name="$1"; shift
	checks=$((checks + 1))
	if ! "$GPUCTL" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		fail "$name: gpuctl $* exited non-zero: $(head -c 300 "$tmp/$name.err")"
		return 1
	fi
	[ -s "$tmp/$name.err" ] && fail "$name: wrote to stderr: $(head -c 300 "$tmp/$name.err")"
	return 0
}

# --- text, default groups (pucm), 2 intervals of 0.2 s on 8 GPUs
start=$(date +%s.%N)
if run text --sim h200x8 dmon -c 2 -d 0.2; then
	end=$(date +%s.%N)
	out="$tmp/text.out"
	check "text: first line is the SIMULATED banner" grep -q '^\*\*\* SIMULATED' <(head -1 "$out")
	check "text: header names" grep -qx '# gpu    pwr gtemp mtemp   sm  mem  mclk  pclk      fb fbpct' "$out"
	check "text: header units" grep -qx '# Idx      W     C     C    %    %   MHz   MHz     MiB     %' "$out"
	data=$(grep -v '^[#*]' "$out")
	check "text: 16 data lines (8 GPUs x 2)" [ "$(echo "$data" | wc -l)" -eq 16 ]
	check "text: every data line has 10 fields" [ "$(echo "$data" | awk 'NF != 10' | wc -l)" -eq 0 ]
	check "text: GPUs 0..7 in order, twice" [ "$(echo "$data" | awk '{printf "%s", $1}')" = "0123456701234567" ]
	# a loaded H200 draws hundreds of watts, an idle one tens; neither is 0
	check "text: power is a plausible number on every line" \
		[ "$(echo "$data" | awk '$2 !~ /^[0-9]+$/ || $2 < 20 || $2 > 800' | wc -l)" -eq 0 ]
	check "text: 2 intervals of 0.2 s take at least 0.4 s" \
		awk -v a="$start" -v b="$end" 'BEGIN { exit !(b - a >= 0.4) }'
fi

# --- groups in table order, columns added after them, -i selection, -o DT
if run groups --sim h200x8 dmon -c 1 -d 0.2 -s sv --columns plim,pwr -i 1,3 -o DT; then
	out="$tmp/groups.out"
	check "groups: header" grep -qx '#Date     Time      gpu pviol tviol pst      thr  plim    pwr' "$out"
	data=$(grep -v '^[#*]' "$out")
	check "groups: only GPUs 1 and 3" [ "$(echo "$data" | awk '{printf "%s ", $3}')" = "1 3 " ]
	check "groups: date and time columns" [ "$(echo "$data" | awk '$1 !~ /^[0-9]+$/ || length($1) != 8 || $2 !~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/' | wc -l)" -eq 0 ]
	check "groups: P-state and power limit" [ "$(echo "$data" | awk '$6 != "P0" || $8 != 700' | wc -l)" -eq 0 ]
fi

# --- CSV
if run csv --sim h200x8 dmon --csv -c 2 -d 0.2 -s pn; then
	out="$tmp/csv.out"
	check "csv: header" grep -qx 'timestamp,gpu,uuid,power_w,gpu_temp_c,mem_temp_c,nvlink_rx_mbs,nvlink_tx_mbs,simulated' <(head -1 "$out")
	check "csv: 16 rows" [ "$(tail -n +2 "$out" | wc -l)" -eq 16 ]
	check "csv: 9 fields per row, simulated=true" \
		[ "$(tail -n +2 "$out" | awk -F, 'NF != 9 || $9 != "true"' | wc -l)" -eq 0 ]
	check "csv: no banner in machine output" [ "$(grep -c SIMULATED "$out")" -eq 0 ]
	check "csv: ISO timestamps and UUIDs" \
		[ "$(tail -n +2 "$out" | awk -F, '$1 !~ /^20[0-9-]+T[0-9:]+Z$/ || $3 !~ /^GPU-/' | wc -l)" -eq 0 ]
	# GPUs 0-3 run a job that moves data over NVLink: a positive rate
	check "csv: NVLink rate on a busy GPU" \
		[ "$(awk -F, '$2 == 0 && $8 + 0 > 1000' "$out" | wc -l)" -eq 2 ]
fi

# --- JSON lines
if run json --sim h200x8 dmon --json -c 1 -d 0.2 -s pmt; then
	checks=$((checks + 1))
	python3 - "$tmp/json.out" <<'EOF' || fail "json: content"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 8, len(lines)
for i, l in enumerate(lines):
    o = json.loads(l)
    assert o["gpu"] == i and o["simulated"] is True and o["up"] is True, o
    # a sample value under --json's key, exact, and only there (the column keys went in issue 35)
    assert isinstance(o["power_mw"], int) and o["power_mw"] > 20000, o
    assert "power_w" not in o and "fb_used_mib" not in o and "gpu_temp_c" not in o, o
    assert o["mem_used_bytes"] >= 0, o
    assert 0 <= o["fb_used_pct"] <= 100, o
    assert "pcie_rx_kbps" in o or "pcie_rx_kbps" in o["unavailable"], o
    for k, why in o["unavailable"].items():
        assert k not in o and why in ("not supported", "error", "not ready"), (k, why)
EOF
fi

# --- a lost GPU: ERR in text, "up": false and reasons in JSON, never a 0
cat >"$tmp/faults.json" <<'EOF'
{"faults": [{"kind": "gpu_lost", "gpu": 2}]}
EOF
if run lost_text --sim "h200x8,faults=$tmp/faults.json" dmon -c 1 -d 0.2; then
	line=$(grep -v '^[#*]' "$tmp/lost_text.out" | awk '$1 == 2')
	check "lost: GPU 2 reads ERR in every column" [ "$(echo "$line" | tr -s ' ' '\n' | grep -c '^ERR$')" -eq 9 ]
	check "lost: GPU 3 still has values" [ "$(grep -v '^[#*]' "$tmp/lost_text.out" | awk '$1 == 3 && $2 ~ /^[0-9]+$/' | wc -l)" -eq 1 ]
fi
if run lost_json --sim "h200x8,faults=$tmp/faults.json" dmon --json -c 1 -d 0.2 -i 2; then
	checks=$((checks + 1))
	python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["up"] is False and "power_mw" not in o and o["unavailable"]["power_mw"] == "error", o
assert "power_w" not in o["unavailable"], o
' "$tmp/lost_json.out" || fail "lost: JSON"
fi

# --- another server: a GPU without NVLink says n/a, not 0
if run nonv --sim rtx4090x2 dmon -c 1 -d 200ms -s n; then
	check "no NVLink: n/a" [ "$(grep -v '^[#*]' "$tmp/nonv.out" | awk '$2 != "n/a" || $3 != "n/a"' | wc -l)" -eq 0 ]
fi

# --- usage errors: one line, 'gpuctl dmon: ...', exit 64
usage_error() {
	local want="$1"; shift
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/u.out" 2>"$tmp/u.err"
	local rc=$?
	if [ $rc -ne 64 ] || [ "$(wc -l <"$tmp/u.err")" -ne 1 ] || ! grep -q "^gpuctl dmon: $want" "$tmp/u.err"; then
		fail "gpuctl $*: want exit 64 and 'gpuctl dmon: $want', got $rc '$(cat "$tmp/u.err")'"
	fi
}
usage_error "unknown group 'x'" --sim h200x8 dmon -s x -c 1
usage_error "unknown column 'watts'" --sim h200x8 dmon --columns watts -c 1
usage_error "option '-c': '0' is not a whole number from 1 to 100000000" --sim h200x8 dmon -c 0
usage_error "option '-d': duration '0' out of range (100ms to 1h)" --sim h200x8 dmon -d 0
usage_error "option '--delay': bad duration '1x' " --sim h200x8 dmon --delay=1x
usage_error "--csv and --json exclude each other" --sim h200x8 dmon --csv --json
usage_error "GPU index 9 out of range" --sim h200x8 dmon -i 9 -c 1
usage_error "unknown option '--bogus'" --sim h200x8 dmon --bogus
usage_error "option '-d' needs a value" --sim h200x8 dmon -d
checks=$((checks + 1))
"$GPUCTL" dmon --help >"$tmp/help.out" 2>&1 && grep -q 'nvlink_tx_mbs' "$tmp/help.out" || fail "dmon --help lists the columns"

finish
