#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# prometheus.sh - a real Prometheus server (Debian's `prometheus`, installed by
# scripts/deps.sh with GPUCTL_TEST_DEPS=1) scrapes `gpuctl agent` on the
# simulated 8x H200 every second; the test then asks Prometheus's HTTP API for
# the series and checks them. Also: `promtool check metrics` on the agent's
# output, `promtool check rules` and `promtool test rules` on
# contrib/prometheus/alerts.yml, and the rules loaded by the server.
# Everything it starts is killed by PID on exit; its waits are bounded to 120 s
# in all.
#
# Run by CTest. By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/prometheus.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need prometheus promtool curl python3
agent_pid=""
prom_pid=""
on_exit 'for p in $prom_pid $agent_pid; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done'
limit=120
deadline=$(($(date +%s) + limit))
left() { echo $((deadline - $(date +%s))); }

# --- the rules, offline
check "promtool check rules" promtool check rules "$src/contrib/prometheus/alerts.yml"
check "promtool test rules" bash -c "cd '$src/contrib/prometheus' && promtool test rules alerts_test.yml"

# --- the agent, on a free loopback port
"$GPUCTL" --sim h200x8,latency_us=2000 agent --listen 127.0.0.1:0 --interval 1s --kernel-log off \
	>"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
agent_port "$tmp/agent.err" "$agent_pid"
if [ -z "$port" ]; then
	echo "FAIL: the agent did not start: $(cat "$tmp/agent.err")"
	exit 1
fi
curl -s --max-time 30 "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt"
check "promtool check metrics on the agent's output" promtool check metrics <"$tmp/metrics.txt"

# --- Prometheus, scraping it every second
prometheus_start gpuctl "$port" "$src/contrib/prometheus/alerts.yml"

query() { # query PROMQL: the JSON answer
	curl -s --max-time 10 --get --data-urlencode "query=$1" "$api/query"
}
# query_holds PROMQL PYTHON-EXPRESSION-ON-r: the answer (in $out) passes the expression
query_holds() {
	out=$(query "$1")
	python3 -c "
import json,sys
r=json.loads(sys.argv[1])['data']['result']
sys.exit(0 if ($2) else 1)" "$out" 2>/dev/null
}
# waits (within the test's bound) until the answer to PROMQL passes the expression
wait_query() { # wait_query DESCRIPTION PROMQL PYTHON-EXPRESSION-ON-r
	local what="$1" q="$2" expr="$3"
	out=""
	checks=$((checks + 1))
	wait_until "$(left)" query_holds "$q" "$expr" && return 0
	fail "$what (query '$q' answered: $(echo "$out" | head -c 300))"
	return 1
}

wait_query "the scrape target is up" 'up{job="gpuctl"}' 'len(r) == 1 and r[0]["value"][1] == "1"'
wait_query "8 gpuctl_gpu_up series equal to 1" 'gpuctl_gpu_up' \
	'len(r) == 8 and all(s["value"][1] == "1" for s in r) and sorted(s["metric"]["gpu"] for s in r) == [str(i) for i in range(8)]'
wait_query "every GPU series has uuid, pci_bus_id, model, hostname" 'gpuctl_gpu_up' \
	'all(s["metric"]["uuid"].startswith("GPU-") and s["metric"]["model"] == "NVIDIA H200" and s["metric"]["pci_bus_id"] and s["metric"]["hostname"] for s in r)'
wait_query "power within the simulated H200 range (50-700 W)" 'gpuctl_gpu_power_watts' \
	'len(r) == 8 and all(50 <= float(s["value"][1]) <= 700 for s in r)'
wait_query "memory total is the H200's 141 GiB-class size" 'gpuctl_gpu_memory_total_bytes' \
	'len(r) == 8 and all(140e9 < float(s["value"][1]) < 160e9 for s in r)'
wait_query "energy counter increases" 'rate(gpuctl_gpu_energy_joules_total[5s])' \
	'len(r) == 8 and all(float(s["value"][1]) > 0 for s in r)'
wait_query "18 NVLinks up per GPU" 'count by (gpu) (gpuctl_gpu_nvlink_up == 1)' \
	'len(r) == 8 and all(s["value"][1] == "18" for s in r)'
wait_query "samples are fresh" 'max(gpuctl_gpu_sample_age_seconds)' 'len(r) == 1 and float(r[0]["value"][1]) < 2'
wait_query "the agent says it is simulated" 'gpuctl_agent_info{simulated="true"}' 'len(r) == 1'
# a rule's health is "unknown" until its first evaluation: wait for that
rules_ok() {
	rules=$(curl -s --max-time 10 "$api/rules")
	python3 -c '
import json,sys
g=json.loads(sys.argv[1])["data"]["groups"]
names={r["name"] for grp in g for r in grp["rules"]}
assert {"GPULost","GPUUncorrectableECC","GPUNVLinkDown","GPUXidCritical"} <= names, names
assert all(r["health"] == "ok" for grp in g for r in grp["rules"]), [r for grp in g for r in grp["rules"] if r["health"] != "ok"]
' "$rules" 2>/dev/null
}
check "the alert rules are loaded and evaluate without error" wait_until "$(left)" rules_ok

# --- the Grafana dashboard: valid JSON, known metrics only, every query accepted by Prometheus
checks=$((checks + 1))
python3 - "$src/contrib/grafana/gpuctl.json" "$src/docs/metrics.md" "$api" <<'PY' || fail "Grafana dashboard queries"
import json, re, sys, urllib.parse, urllib.request
dash = json.load(open(sys.argv[1]))
known = set(re.findall(r"\| `(gpuctl_[a-z0-9_]+)` \|", open(sys.argv[2]).read()))
bad = []
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
assert len(exprs) > 20, len(exprs)
for e in exprs:
    for name in re.findall(r"gpuctl_[a-z0-9_]+", e):
        if name not in known:
            bad.append("unknown metric %s in %s" % (name, e))
    q = e.replace("$hostname", ".*").replace("$gpu", ".*").replace("$__rate_interval", "5s").replace("$__range", "1m")
    url = sys.argv[3] + "/query?" + urllib.parse.urlencode({"query": q})
    try:
        ans = json.load(urllib.request.urlopen(url, timeout=5))
        if ans.get("status") != "success":
            bad.append("%s: %s" % (q, ans))
    except Exception as ex:
        bad.append("%s: %s" % (q, ex))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

echo "$((limit - $(left))) s"
finish
