#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""accept.py - the real-GPU acceptance gate (issue 31); scripts/gpu/accept.sh runs it.

Runs every gpuctl command on the real GPUs of this machine and holds each figure or verdict
against an independent reference measured in the same run: nvidia-smi (--query-gpu, topo -m,
its power and memory readings beside a pool job), PyTorch (bench/torch_ref.py,
bench/train_torch.py), a reference pointer chase (bench/chase_ref.cu) and gpuctl's own other
commands where the two must agree (diag's PCIe figure against bench's). Prints one table
(group | what | gpuctl | reference | tolerance | agree) and writes it as accept.json; exits 1
on any disagreement, 0 when all agree, 69 when it could not run.

A dynamic value (power, temperature, clocks, memory used) is read between two nvidia-smi
readings and agrees when it lies within [min - tol, max + tol] of them. Never changes clocks,
power limits, MIG, persistence or compute mode.

  python3 scripts/gpu/accept.py --gpuctl PATH --out DIR [--quick] [--only GROUP,...]
Environment: GPUCTL_KERNELS (the kernels module), GPUCTL_DATA_DIR, CHASE_REF (the built
bench/chase_ref.cu), PYTHON (with torch and transformers; default python3).
"""
import argparse
import csv
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accept_gpm  # noqa: E402 - the gpm group (issue 32), beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = []
NOT_RUN = []
G = None  # gpuctl
OUT = None
LOG = None


def log(msg):
    LOG.write(msg + "\n")
    LOG.flush()


def row(group, what, ours, ref, tol, agree, note=""):
    r = {"group": group, "what": what, "gpuctl": ours, "reference": ref, "tolerance": tol, "agree": bool(agree),
         "note": note}
    ROWS.append(r)
    with open(os.path.join(OUT, "rows.jsonl"), "a") as f:  # as it goes: a run cut short keeps its rows
        f.write(json.dumps(r) + "\n")


def not_run(group, why):
    NOT_RUN.append({"group": group, "why": why})


def sh(args, timeout=600, env=None, check=False):
    """Runs args; returns (rc, stdout, stderr); logs the command and its time."""
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, so, se = 124, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    log("$ %s  -> rc %d, %.1f s%s" % (" ".join(args), rc, time.time() - t0, ("\n" + se.strip()[-2000:]) if se.strip() else ""))
    if check and rc != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args[:3]), rc, se.strip()[-300:]))
    return rc, so, se


def gpuctl(*args, timeout=600, env=None):
    return sh([G] + list(args), timeout=timeout, env=env)


def gpuctl_json(*args, timeout=600, ok=(0, 1, 2)):
    rc, so, se = gpuctl(*args, timeout=timeout)
    if rc not in ok:
        raise RuntimeError("gpuctl %s: exit %d: %s" % (" ".join(args), rc, se.strip()[-300:]))
    return rc, json.loads(so)


def smi_query(fields):
    """{field: [value per GPU]} from one nvidia-smi --query-gpu call per field (an unknown field fails alone)."""
    out = {}
    for f in fields:
        rc, so, _ = sh(["nvidia-smi", "--query-gpu=" + f, "--format=csv,noheader,nounits"], timeout=60)
        out[f] = [v.strip() for v in so.strip().splitlines()] if rc == 0 else None
    return out


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def get(d, path):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def busid(s):
    m = re.match(r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-7])$", s or "")
    return tuple(int(x or "0", 16) for x in m.groups()) if m else s


def bracket(group, what, ours, before, after, tol, unit=""):
    """A moving value: agrees when within [min - tol, max + tol] of the readings around it."""
    b, a = num(before), num(after)
    if ours is None or b is None or a is None:
        row(group, what, ours, "%s / %s" % (before, after), "+-%g %s" % (tol, unit), False, "a reading is missing")
        return
    lo, hi = min(a, b), max(a, b)
    ok = lo - tol <= ours <= hi + tol
    ref = "%g" % lo if lo == hi else "%g..%g" % (lo, hi)
    row(group, what, round(ours, 3), ref, "+-%g %s" % (tol, unit), ok)


def ratio_row(group, what, ours, ref, rel, note=""):
    ok = ours is not None and ref is not None and ref > 0 and abs(ours - ref) / ref <= rel
    row(group, what, None if ours is None else round(ours, 3), None if ref is None else round(ref, 3),
        "+-%g%%" % (rel * 100), ok, note)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8", "replace")


# ---- info, topo ------------------------------------------------------------------------------
# (gpuctl info --json key, nvidia-smi field, gpuctl value -> nvidia-smi's unit, how, tolerance)
ONOFF = lambda v: "Enabled" if v else "Disabled"  # noqa: E731
INFO_STATIC = [
    ("name", "name", str, "eq"), ("uuid", "uuid", str, "eq"), ("pci_bus_id", "pci.bus_id", str, "bus"),
    ("serial", "serial", str, "eq"), ("vbios_version", "vbios_version", str, "eq"),
    ("compute_capability", "compute_cap", str, "eq"), ("mem_total_bytes", "memory.total", lambda v: v >> 20, "num"),
    ("power_limit_mw", "power.limit", lambda v: v / 1000, "num"),
    ("power_default_limit_mw", "power.default_limit", lambda v: v / 1000, "num"),
    ("power_max_limit_mw", "power.max_limit", lambda v: v / 1000, "num"),
    ("max_sm_clock_mhz", "clocks.max.sm", int, "num"), ("max_mem_clock_mhz", "clocks.max.memory", int, "num"),
    ("ecc_mode", "ecc.mode.current", ONOFF, "eq"), ("mig_mode", "mig.mode.current", ONOFF, "eq"),
    ("persistence_mode", "persistence_mode", ONOFF, "eq"), ("compute_mode", "compute_mode", str, "eq"),
    ("pcie_gen_max", "pcie.link.gen.gpumax", int, "num"), ("pcie_width_max", "pcie.link.width.max", int, "num"),
]
# moving values: (gpuctl key, nvidia-smi field, convert, tolerance, unit)
INFO_DYNAMIC = [
    ("sample.temp_c", "temperature.gpu", float, 2, "C"),
    ("sample.power_mw", "power.draw", lambda v: v / 1000, 15, "W"),
    ("sample.mem_used_bytes", "memory.used", lambda v: v / 2**20, 64, "MiB"),
    ("sample.sm_clock_mhz", "clocks.sm", float, 50, "MHz"),
    ("sample.mem_clock_mhz", "clocks.mem", float, 50, "MHz"),
    ("sample.pcie_gen", "pcie.link.gen.gpucurrent", float, 0, ""),
    ("sample.pcie_width", "pcie.link.width.current", float, 0, ""),
]


def compare_static(group, gpus, smi, keyfn=None):
    for key, field, conv, how in INFO_STATIC:
        vals = smi.get(field)
        for g in gpus:
            i = g["index"]
            mine = get(g, key)
            theirs = vals[i] if vals and i < len(vals) else None
            if theirs is None or theirs in ("[N/A]", "N/A", "[Not Supported]"):
                if mine is None:
                    continue  # neither has it: nothing to compare
                row(group, "GPU%d %s" % (i, key), mine, theirs, "equal", False, "nvidia-smi has none")
                continue
            m = conv(mine) if mine is not None else None
            if how == "eq":
                ok = str(m) == theirs
            elif how == "bus":
                ok = busid(m) == busid(theirs)
            else:
                ok = m is not None and num(theirs) is not None and abs(float(m) - float(theirs)) <= 0.5
            row(group, "GPU%d %s" % (i, key), m, theirs, "equal", ok)


def smi_dynamic():
    return smi_query([f for _, f, _, _, _ in INFO_DYNAMIC])


def compare_dynamic(group, gpus, before, after, sample_of=lambda g: g.get("sample")):
    for key, field, conv, tol, unit in INFO_DYNAMIC:
        for g in gpus:
            i = g["index"]
            s = sample_of(g) or {}
            v = get({"sample": s}, key)
            b = (before.get(field) or [None] * (i + 1))[i]
            a = (after.get(field) or [None] * (i + 1))[i]
            bracket(group, "GPU%d %s" % (i, key.split(".")[-1]), None if v is None else conv(v), b, a, tol, unit)


def check_info():
    before = smi_dynamic()
    _, info = gpuctl_json("info", "--json")
    after = smi_dynamic()
    json.dump(info, open(os.path.join(OUT, "info.json"), "w"), indent=1)
    smi = smi_query([f for _, f, _, _ in INFO_STATIC] + ["driver_version"])
    if smi.get("pcie.link.gen.gpumax") is None:
        smi["pcie.link.gen.gpumax"] = smi_query(["pcie.link.gen.max"])["pcie.link.gen.max"]
    compare_static("info", info["gpus"], smi)
    compare_dynamic("info", info["gpus"], before, after)
    drv = (smi.get("driver_version") or [None])[0]
    row("info", "driver_version", get(info, "system.driver_version"), drv, "equal",
        get(info, "system.driver_version") == drv)
    rc, q, _ = sh(["nvidia-smi", "-q"], timeout=60)
    m = re.search(r"CUDA Version\s*:\s*(\S+)", q)
    row("info", "cuda_driver_version", get(info, "system.cuda_driver_version"), m.group(1) if m else None, "equal",
        bool(m) and m.group(1) == get(info, "system.cuda_driver_version"))
    return info


def check_topo():
    _, topo = gpuctl_json("topo", "--json")
    rc, text, _ = sh(["nvidia-smi", "topo", "-m"], timeout=60)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    lines = [l for l in text.splitlines() if l.strip()]
    header = [c.strip() for c in lines[0].split("\t")] if lines else []
    gcols = {c: k for k, c in enumerate(header) if re.match(r"^GPU\d+$", c)}
    tg = topo["gpus"]
    for l in lines[1:]:
        cells = [c.strip() for c in l.split("\t")]
        if not re.match(r"^GPU\d+$", cells[0]):
            continue
        a = int(cells[0][3:])
        ra = next((k for k, g in enumerate(tg) if g["index"] == a), None)
        if ra is None:
            row("topo", "GPU%d" % a, None, "listed", "present", False, "gpuctl topo lacks it")
            continue
        for name, k in gcols.items():
            b = int(name[3:])
            rb = next((j for j, g in enumerate(tg) if g["index"] == b), None)
            if rb is not None and k < len(cells):
                row("topo", "GPU%d-GPU%d link" % (a, b), topo["matrix"][ra][rb], cells[k], "equal",
                    topo["matrix"][ra][rb] == cells[k])
        for label, col, mine in (("cpu_affinity", "CPU Affinity", tg[ra].get("cpu_affinity")),
                                 ("numa_affinity", "NUMA Affinity", tg[ra].get("numa_node"))):
            if col in header and header.index(col) < len(cells):
                theirs = cells[header.index(col)]
                m = "N/A" if mine is None or mine == -1 else str(mine)
                row("topo", "GPU%d %s" % (a, label), m, theirs, "equal", m == theirs)


# ---- dmon, agent, web page -------------------------------------------------------------------
DMON = [("power_mw", "power.draw", 1e-3, 15, "W"), ("temp_c", "temperature.gpu", 1, 2, "C"),
        ("sm_clock_mhz", "clocks.sm", 1, 50, "MHz"), ("mem_clock_mhz", "clocks.mem", 1, 50, "MHz"),
        ("mem_used_bytes", "memory.used", 1 / 2**20, 64, "MiB")]


def check_dmon():
    before = smi_query([f for _, f, _, _, _ in DMON])
    rc, so, _ = gpuctl("dmon", "-c", "2", "-d", "500ms", "--json", timeout=60)
    after = smi_query([f for _, f, _, _, _ in DMON])
    lines = [json.loads(l) for l in so.splitlines() if l.strip()]
    last = {}
    for l in lines:
        last[l["gpu"]] = l
    if rc != 0 or not last:
        row("dmon", "dmon -c 2 --json", rc, 0, "exit 0 with lines", False)
        return
    for i, l in sorted(last.items()):
        for key, field, scale, tol, unit in DMON:
            v = num(l.get(key))
            bracket("dmon", "GPU%d %s" % (i, key), None if v is None else v * scale, (before.get(field) or [None] * (i + 1))[i],
                    (after.get(field) or [None] * (i + 1))[i], tol, unit)


METRICS = [  # (metric, nvidia-smi field, scale to nvidia-smi's unit, tolerance, unit)
    ("gpuctl_gpu_power_watts", "power.draw", 1, 15, "W"),
    ("gpuctl_gpu_temperature_celsius", "temperature.gpu", 1, 2, "C"),
    ("gpuctl_gpu_memory_used_bytes", "memory.used", 1 / 2**20, 64, "MiB"),
    ("gpuctl_gpu_memory_total_bytes", "memory.total", 1 / 2**20, 0.5, "MiB"),
    ("gpuctl_gpu_sm_clock_hertz", "clocks.sm", 1e-6, 50, "MHz"),
    ("gpuctl_gpu_memory_clock_hertz", "clocks.mem", 1e-6, 50, "MHz"),
    ("gpuctl_gpu_power_limit_watts", "power.limit", 1, 0.5, "W"),
    ("gpuctl_gpu_pcie_link_generation", "pcie.link.gen.gpucurrent", 1, 0, ""),
    ("gpuctl_gpu_pcie_link_width", "pcie.link.width.current", 1, 0, ""),
]


def parse_metrics(text):
    out = {}
    for l in text.splitlines():
        m = re.match(r'^(\w+)\{([^}]*)\}\s+(\S+)', l)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def check_agent():
    port = free_port()
    err = open(os.path.join(OUT, "agent.err"), "w")
    p = subprocess.Popen([G, "agent", "--listen", "127.0.0.1:%d" % port, "--interval", "500ms"],
                         stdout=subprocess.DEVNULL, stderr=err)
    base = "http://127.0.0.1:%d" % port
    try:
        for _ in range(100):
            try:
                if http_get(base + "/healthz", 1)[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        time.sleep(1.2)  # two samples: the rates have a base
        fields = sorted({f for _, f, _, _, _ in METRICS})
        before = smi_query(fields)
        st, mtext = http_get(base + "/metrics")
        st2, gtext = http_get(base + "/api/v1/gpus")
        after = smi_query(fields)
        open(os.path.join(OUT, "metrics.txt"), "w").write(mtext)
        mets = parse_metrics(mtext)
        for name, field, scale, tol, unit in METRICS:
            for labels, v in mets.get(name, []):
                i = int(labels["gpu"])
                bracket("agent /metrics", "GPU%d %s" % (i, name), v * scale, (before.get(field) or [None] * (i + 1))[i],
                        (after.get(field) or [None] * (i + 1))[i], tol, unit)
            if not mets.get(name):
                row("agent /metrics", name, None, "present", "present", False, "series missing")
        api = json.loads(gtext)
        json.dump(api, open(os.path.join(OUT, "api_gpus.json"), "w"), indent=1)
        smi = smi_query(["name", "uuid", "pci.bus_id", "serial", "vbios_version", "compute_cap", "memory.total"])
        for g in api["gpus"]:
            i = g["index"]
            for key, field, conv in (("name", "name", str), ("uuid", "uuid", str), ("serial", "serial", str),
                                     ("vbios_version", "vbios_version", str), ("compute_capability", "compute_cap", str),
                                     ("mem_total_bytes", "memory.total", lambda v: str(v >> 20))):
                theirs = (smi.get(field) or [None] * (i + 1))[i]
                row("agent /api/v1/gpus", "GPU%d %s" % (i, key), conv(g.get(key)), theirs, "equal",
                    conv(g.get(key)) == theirs)
        compare_dynamic("agent /api/v1/gpus", api["gpus"], before, after)
        st3, htext = http_get(base + "/api/v1/health")
        h = json.loads(htext)
        row("agent /api/v1/health", "verdict at idle", h.get("verdict"), "not FAIL", "no FAIL", h.get("verdict") != "FAIL")
        # the web page: its HTML and script are served, and it draws its cards from
        # /api/v1/gpus and its charts from /api/v1/history (read here beside nvidia-smi)
        st4, page = http_get(base + "/")
        st5, js = http_get(base + "/app.js")
        row("web page", "/ and /app.js served", "%d, %d" % (st4, st5), "200, 200", "equal",
            st4 == 200 and st5 == 200 and "app.js" in page and "/api/v1/gpus" in js)
        hist_fields = ["power.draw", "memory.used", "temperature.gpu", "clocks.sm"]
        before = smi_query(hist_fields)
        st6, hist = http_get(base + "/api/v1/history")
        after = smi_query(hist_fields)
        hd = json.loads(hist)
        json.dump(hd, open(os.path.join(OUT, "api_history.json"), "w"))
        for g in hd.get("gpus", []):
            i = g["index"]
            for key, field, scale, tol, unit in (("power_mw", "power.draw", 1e-3, 15, "W"),
                                                 ("mem_used_bytes", "memory.used", 1 / 2**20, 64, "MiB"),
                                                 ("temp_c", "temperature.gpu", 1, 2, "C"),
                                                 ("sm_clock_mhz", "clocks.sm", 1, 50, "MHz")):
                pts = g.get(key) or []
                v = pts[-1] if pts and pts[-1] is not None else None
                bracket("web page (history)", "GPU%d newest %s" % (i, key), None if v is None else v * scale,
                        (before.get(field) or [None] * (i + 1))[i], (after.get(field) or [None] * (i + 1))[i], tol, unit)
    finally:
        p.terminate()
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            row("agent", "stops on SIGTERM within 15 s", "no", "yes", "equal", False)


# ---- health, diag ----------------------------------------------------------------------------
def warnings_in(doc, path=""):
    """Every WARN in a diag or health document, wherever it sits, with what it says."""
    out = []
    if isinstance(doc, dict):
        if doc.get("verdict") == "WARN" and any(k in doc for k in ("test", "rule", "detail", "evidence")):
            out.append("%s: %s" % (doc.get("test") or doc.get("rule") or path,
                                   str(doc.get("detail") or doc.get("evidence") or "")[:120]))
        for k, v in doc.items():
            out += warnings_in(v, k)
    elif isinstance(doc, list):
        for v in doc:
            out += warnings_in(v, path)
    return out


def diag_failed(doc):
    return [t for t in doc.get("tests", []) if t.get("verdict") == "FAIL"]


def check_health_diag(quick):
    rc, h = gpuctl_json("health", "--json")
    row("health", "verdict at idle", h.get("verdict"), "not FAIL", "no FAIL", h.get("verdict") != "FAIL",
        "; ".join(warnings_in(h)))
    pcie = {}
    # --quick: level 2 three times (the level a Slurm health check runs), 1 once, 3 not at all
    for level, runs in ((1, 1 if quick else 3), (2, 3), (3, 0 if quick else 3)):
        for k in range(runs):
            rc, d = gpuctl_json("diag", "-r", str(level), "--json", timeout=900)
            json.dump(d, open(os.path.join(OUT, "diag_r%d_%d.json" % (level, k + 1)), "w"), indent=1)
            bad = diag_failed(d)
            warns = warnings_in(d)
            row("diag", "diag -r %d run %d" % (level, k + 1), d.get("verdict"), "PASS", "equal (a healthy GPU)",
                d.get("verdict") == "PASS",
                "; ".join("%s GPU %s: %s" % (t["test"], t.get("gpu"), t.get("detail", "")[:80]) for t in bad) or
                ("WARN: " + "; ".join(warns) if warns else ""))
            for t in d.get("tests", []):
                if t.get("test") in ("pcie_h2d", "pcie_d2h") and t.get("value") is not None:
                    pcie.setdefault((t["test"], t["gpu"]), []).append(t["value"])
    # planted faults: a corrupted memory test, and a catalog whose PCIe is a generation above the card's
    rc, d = gpuctl_json("diag", "-r", "2", "-i", "0", "--flip-bits", "64", "--json", timeout=600)
    named = sorted({t["test"] for t in diag_failed(d)})
    row("diag (planted fault)", "-r 2 --flip-bits 64", ",".join(named) or d.get("verdict"), "FAIL memtest_*",
        "FAIL, test named", d.get("verdict") == "FAIL" and named and all(n.startswith("memtest") for n in named))
    tmp = tempfile.mkdtemp(prefix="accept-data-")
    try:
        shutil.copytree(os.environ.get("GPUCTL_DATA_DIR", os.path.join(ROOT, "data")), tmp, dirs_exist_ok=True)
        cat_path = os.path.join(tmp, "catalog", "gpus.json")
        cat = json.load(open(cat_path))
        for g in cat["gpus"]:
            if g.get("pcie"):
                g["pcie"]["gen"] = 6  # a threshold above what any card here can do
        json.dump(cat, open(cat_path, "w"), indent=1)
        env = dict(os.environ, GPUCTL_DATA_DIR=tmp)
        rc, so, _ = gpuctl("diag", "-r", "2", "-i", "0", "--json", timeout=600, env=env)
        d = json.loads(so) if so.strip() else {}
        named = sorted({t["test"] for t in diag_failed(d)})
        row("diag (planted fault)", "-r 2, catalog PCIe Gen6", ",".join(named) or d.get("verdict"),
            "FAIL pcie_h2d,pcie_d2h", "FAIL, tests named", named == ["pcie_d2h", "pcie_h2d"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return pcie


# ---- bench against PyTorch and a reference chase -----------------------------------------------
def bench_get(results, suite, test, variant, size=None):
    for r in results:
        if r["suite"] == suite and r["test"] == test and r["variant"] == variant and r["status"] == "ok" and \
                (size is None or r["size_bytes"] == size) and r["gpu"] in (0, -1):
            return r["median"]
    return None


def check_bench(quick, pcie):
    path = os.path.join(OUT, "bench.json")
    suites = ["-s", "copy,memory,compute"] if quick else []  # --quick: no apps, no training step
    rc, so, se = gpuctl("bench", "--quick", "-i", "0", *suites, "--save", path, "--quiet", timeout=600)
    if not os.path.exists(path):
        row("bench", "bench --quick", rc, 0, "a results file", False, se.strip()[-200:])
        return
    res = json.load(open(path))["results"]
    py = os.environ.get("PYTHON", "python3")
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", CUDA_VISIBLE_DEVICES="0")
    rc, so, se = sh([py, os.path.join(ROOT, "bench", "torch_ref.py")], timeout=600, env=env)
    open(os.path.join(OUT, "torch_ref.json"), "w").write(so)
    try:
        t = json.loads(so)
    except ValueError:
        t = None
    if not t or "error" in t:
        not_run("bench vs PyTorch", "bench/torch_ref.py failed: %s" % (se.strip()[-200:] or so[:200]))
    else:
        ratio_row("bench vs PyTorch", "copy h2d pinned 1 GiB, GB/s", bench_get(res, "copy", "h2d", "pinned", 1 << 30),
                  t.get("h2d_pinned_1GiB_GBps"), 0.05)
        ratio_row("bench vs PyTorch", "copy d2h pinned 1 GiB, GB/s", bench_get(res, "copy", "d2h", "pinned", 1 << 30),
                  t.get("d2h_pinned_1GiB_GBps"), 0.05)
        dc = t.get("device_copy_4GiB_TBps")
        ratio_row("bench vs PyTorch", "device copy (cudaMemcpy 1 GiB vs torch copy_ 4 GiB), GB/s",
                  bench_get(res, "memory", "copy", "cudaMemcpy"), dc * 1000 if dc else None, 0.07)
        for prec, key in (("fp64", "fp64"), ("fp32", "fp32"), ("tf32", "tf32"), ("fp16", "fp16"), ("bf16", "bf16")):
            ratio_row("bench vs PyTorch", "cuBLAS GEMM %s 8192^3, TFLOP/s" % prec,
                      bench_get(res, "compute", "cublas", prec), t.get("gemm_%s_8192_TFLOPs" % key), 0.10)
        ratio_row("bench vs PyTorch", "GEMM fp8 e4m3 8192^3 (cuBLASLt vs torch._scaled_mm), TFLOP/s",
                  bench_get(res, "compute", "cublaslt", "fp8_e4m3"), t.get("gemm_fp8_e4m3_8192_TFLOPs"), 0.15)
    for (test, gpu), vals in sorted(pcie.items()):
        if gpu != 0:
            continue
        ref = bench_get(res, "copy", test.split("_")[1], "pinned", 1 << 30)
        for k, v in enumerate(vals):
            ratio_row("diag vs bench", "%s GPU %d, diag run %d vs bench 1 GiB, GB/s" % (test, gpu, k + 1), v, ref, 0.10)
    chase = os.environ.get("CHASE_REF")
    if chase and os.access(chase, os.X_OK):
        for variant, size in (("hbm", 1 << 30), ("l2", 4 << 20)):
            rc, so, se = sh([chase, str(size)], timeout=120, env=env)
            ref = json.loads(so)["ns"] if rc == 0 and so.strip() else None
            ratio_row("bench vs reference chase", "latency %s (%d MiB working set), ns" % (variant, size >> 20),
                      bench_get(res, "memory", "latency", variant), ref, 0.10)
    else:
        not_run("bench vs reference chase", "no CHASE_REF (nvcc failed?)")
    if quick:
        return
    train = next((r for r in res if r["suite"] == "train" and r["test"] == "124M" and r["variant"] == "bf16"
                  and r["status"] == "ok"), None)
    rc, so, se = sh([py, os.path.join(ROOT, "bench", "train_torch.py"), "--modes", "bf16", "--steps", "12"],
                    timeout=400, env=env)
    open(os.path.join(OUT, "train_torch.json"), "w").write(so)
    try:
        tt = json.loads(so)["bf16"]
    except (ValueError, KeyError):
        tt = None
    if train and tt:
        ours = train["median"]
        ratio = ours / tt["tflops"] if tt.get("tflops") else None
        row("bench vs PyTorch", "train GPT-2 124M bf16, TFLOP/s (gpuctl / PyTorch eager)", round(ours, 1),
            round(tt["tflops"], 1), "ratio 1.0-3.0", ratio is not None and 1.0 <= ratio <= 3.0,
            "ratio %.2f; the same FLOP count (6N + 12 L C S per token)" % (ratio or 0))
    else:
        not_run("train vs PyTorch", "train row %s, PyTorch %s" % (bool(train), (se.strip()[-200:] if not tt else "ok")))


# ---- the pool ----------------------------------------------------------------------------------
JOB = r"""
import sys, time, torch
gib, secs = float(sys.argv[1]), float(sys.argv[2])
x = torch.ones(int(gib * 2**30) // 4, device="cuda")
a = torch.randn(8192, 8192, device="cuda")
t0 = time.time()
while time.time() - t0 < secs:
    a = torch.tanh(a @ a) 
    torch.cuda.synchronize()
print("done", float(x.sum()) == x.numel())
"""


def check_pool():
    tmp = tempfile.mkdtemp(prefix="accept-pool-")
    sock = os.path.join(tmp, "pool.sock")
    env = dict(os.environ, GPUCTL_POOL_SOCKET=sock)
    err = open(os.path.join(OUT, "pool_agent.err"), "w")
    p = subprocess.Popen([G, "agent", "--listen", "127.0.0.1:0", "--interval", "250ms", "--pool", "--pool-dir",
                          os.path.join(tmp, "state"), "--pool-socket", sock], stdout=subprocess.DEVNULL, stderr=err)
    smi = None
    try:
        for _ in range(150):
            if sh([G, "queue"], env=env, timeout=10)[0] == 0:
                break
            time.sleep(0.1)
        jobpy = os.path.join(tmp, "job.py")
        open(jobpy, "w").write(JOB)
        smi_csv = open(os.path.join(OUT, "pool_smi.csv"), "w")
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,index,power.draw,memory.used",
                                "--format=csv,noheader,nounits", "-lms", "100"], stdout=smi_csv, stderr=subprocess.DEVNULL)
        time.sleep(1)
        py = os.environ.get("PYTHON", "python3")
        rc, so, se = sh([G, "submit", "--id-only", "--gpu-ids", "0", "--name", "accept", "--", py, jobpy, "6", "10"],
                        env=env, timeout=30)
        job = so.strip()
        sh([G, "wait", "--timeout", "120s", job], env=env, timeout=130)
        time.sleep(0.5)
        smi.terminate()
        smi.wait(5)
        smi_csv.close()
        rc, so, se = sh([G, "jobs", "--history", "--json"], env=env, timeout=30)
        jobs = {str(j["id"]): j for j in json.loads(so)["jobs"]}
        j = jobs.get(job)
        if not j or j.get("state") != "done":
            row("pool", "job ended done", j and j.get("state"), "done", "equal", False, j and j.get("reason"))
            return
        row("pool", "job ended done", j["state"], "done", "equal", True)
        t0, t1 = j["start_ns"] / 1e9, j["end_ns"] / 1e9
        pts = []
        for r in csv.reader(open(os.path.join(OUT, "pool_smi.csv"))):
            try:
                t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                if int(r[1]) == 0:
                    pts.append((t, float(r[2]), float(r[3])))
            except (ValueError, IndexError):
                pass
        w = [x for x in pts if t0 <= x[0] <= t1]
        acc = next((a for a in j.get("accounting", []) if a["gpu"] == 0), {})
        e = sum((w[i + 1][0] - w[i][0]) * (w[i][1] + w[i + 1][1]) / 2 for i in range(len(w) - 1))
        if w:
            e += (w[0][0] - t0) * w[0][1] + (t1 - w[-1][0]) * w[-1][1]
        ratio_row("pool", "job energy, J (nvidia-smi: power.draw integrated at 100 ms)", acc.get("energy_j"), e, 0.10,
                  "%d nvidia-smi samples" % len(w))
        ratio_row("pool", "job GPU-seconds (nvidia-smi: its samples' span x 1 GPU)", acc.get("gpu_seconds"),
                  (w[-1][0] - w[0][0]) if len(w) > 1 else None, 0.05)
        mp = max((x[2] for x in w), default=None)
        ratio_row("pool", "job peak memory, MiB", None if acc.get("mem_peak_bytes") is None else acc["mem_peak_bytes"] / 2**20,
                  mp, 0.05)
    finally:
        if smi and smi.poll() is None:
            smi.kill()
        p.terminate()
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    if not (shutil.which("podman") or shutil.which("docker")):
        not_run("pool container (CDI)", "no podman or docker on this machine")


# ---- the table ----------------------------------------------------------------------------------
def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v
    return "-" if v is None else str(v)


def main():
    global G, OUT, LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuctl", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    G, OUT = a.gpuctl, a.out
    os.makedirs(OUT, exist_ok=True)
    LOG = open(os.path.join(OUT, "accept.log"), "w")
    open(os.path.join(OUT, "rows.jsonl"), "w").close()
    groups = [("info", check_info), ("topo", check_topo), ("dmon", check_dmon), ("agent", check_agent),
              ("gpm", lambda: accept_gpm.check(sys.modules[__name__])),
              ("diag", lambda: None), ("bench", lambda: None), ("pool", check_pool)]
    only = set(filter(None, a.only.split(",")))
    t_start = time.time()
    times = {}
    pcie = {}
    for name, fn in groups:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            if name == "diag":
                pcie = check_health_diag(a.quick)
            elif name == "bench":
                check_bench(a.quick, pcie)
            else:
                fn()
        except Exception as e:  # noqa: BLE001 - one group's failure is a disagreement, the others go on
            row(name, "the group ran", "error", "ran", "ran", False, str(e)[:200])
            log("%s: %r" % (name, e))
        times[name] = round(time.time() - t0, 1)
    bad = [r for r in ROWS if not r["agree"]]
    w = [max([len(fmt(r[k])) for r in ROWS] + [len(k)]) for k in ("group", "what", "gpuctl", "reference", "tolerance")]
    lines = ["%-*s  %-*s  %*s  %*s  %-*s  %s" % (w[0], "group", w[1], "what", w[2], "gpuctl", w[3], "reference", w[4],
                                                 "tolerance", "agree")]
    for r in ROWS:
        lines.append("%-*s  %-*s  %*s  %*s  %-*s  %s%s" % (w[0], r["group"], w[1], r["what"], w[2], fmt(r["gpuctl"]), w[3],
                                                       fmt(r["reference"]), w[4], r["tolerance"],
                                                       "yes" if r["agree"] else "NO", ("  (" + r["note"] + ")") if r["note"] else ""))
    for n in NOT_RUN:
        lines.append("not run: %s: %s" % (n["group"], n["why"]))
    total = time.time() - t_start
    lines.append("%d compared, %d agree, %d disagree; %.0f s (%s)" % (
        len(ROWS), len(ROWS) - len(bad), len(bad), total, ", ".join("%s %.0f s" % kv for kv in times.items())))
    text = "\n".join(lines)
    print(text)
    open(os.path.join(OUT, "accept.txt"), "w").write(text + "\n")
    rc, smi_l, _ = sh(["nvidia-smi", "-L"], timeout=30)
    drv = smi_query(["driver_version"]).get("driver_version") or ["?"]
    json.dump({"schema": "gpuctl-accept", "version": 1, "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "host": socket.gethostname(), "gpus": smi_l.strip().splitlines(), "driver_version": drv[0],
               "quick": a.quick, "seconds": round(total, 1), "group_seconds": times, "compared": len(ROWS),
               "disagree": len(bad), "rows": ROWS, "not_run": NOT_RUN},
              open(os.path.join(OUT, "accept.json"), "w"), indent=1)
    return 1 if bad or not ROWS else 0


if __name__ == "__main__":
    sys.exit(main())
