# SPDX-License-Identifier: Apache-2.0
"""accept_gpm.py - accept.py's "gpm" group (issue 32): gpuctl's profiling metrics (NVML GPM:
SM activity, SM occupancy, tensor and DRAM activity) against `nvidia-smi dmon --gpm-metrics`
over the same seconds, in a loaded window (a BF16 8192^3 matmul loop in PyTorch) and an idle
one. Both sample every second at once; the averages of each window agree within 3 points
(percentage points, the issue's bar). Also gpuctl's CPU for GPM per GPU per tick (dmon with
and without the g group), against the issue's budget.

nvidia-smi's --gpm-metrics ids are NVML's nvmlGpmMetricId_t (2 SM activity, 3 SM occupancy,
5 any-tensor activity, 10 DRAM bandwidth; nvidia-smi dmon --help lists them); their columns
come last on each line, in the order asked, so they are read by position.
"""
import json
import os
import shutil
import subprocess
import time

GPM = [  # (nvidia-smi --gpm-metrics id, gpuctl dmon --json key)
    (2, "prof_sm_active_pct"),
    (3, "prof_sm_occupancy_pct"),
    (5, "prof_tensor_active_pct"),
    (10, "prof_dram_active_pct"),
]
TOL = 3  # percentage points
WINDOW_S = int(os.environ.get("GPUCTL_ACCEPT_GPM_WINDOW_S", "60"))  # the bar: a loaded and an idle minute
WARM_S = 2  # after the load's first GEMMs: its clocks settle before the window opens

LOAD = r"""
import sys, time, torch
d = torch.device("cuda:%d" % int(sys.argv[1]))
n = 8192
a = torch.randn(n, n, device=d, dtype=torch.bfloat16)
b = torch.randn(n, n, device=d, dtype=torch.bfloat16)
end = time.time() + float(sys.argv[2])
ready = False
while time.time() < end:
    for _ in range(8):
        c = a @ b
    torch.cuda.synchronize(d)
    if not ready:  # the GPU is under the load now: the harness opens its window after this line
        print("ready", flush=True)
        ready = True
"""


def smi_has_gpm(acc):
    rc, so, se = acc.sh(["nvidia-smi", "dmon", "--help"], timeout=30)
    return "gpm-metrics" in (so + se)


def parse_smi(text, n):
    """Per line of nvidia-smi dmon: the last n columns as numbers (None for '-')."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.split()
        if len(cols) < n + 1:
            continue
        rows.append([to_num(c) for c in cols[-n:]])
    return rows


def to_num(v):
    try:
        return float(v)
    except ValueError:
        return None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def window(acc, gpu, load):
    """Samples both tools for WINDOW_S seconds (under the load when asked); their averages per metric."""
    ids = ",".join(str(i) for i, _ in GPM)
    loader = None
    if load:
        py = os.environ.get("PYTHON", "python3")
        loader = subprocess.Popen([py, "-c", LOAD, str(gpu), str(WINDOW_S + WARM_S + 70)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # PyTorch's import and CUDA start take seconds: a fixed wait let the first 3-4 s of the
        # window be idle (bench/runs/2026-12-04-accept-gpm), and the two tools' windows, a second
        # apart, then averaged different shares of idle. The window opens once the load runs.
        line = loader.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("the PyTorch load did not start: %s" % loader.stderr.read()[-200:])
        time.sleep(WARM_S)
    try:
        smi = subprocess.Popen(["nvidia-smi", "dmon", "-i", str(gpu), "-s", "u", "-d", "1", "-c", str(WINDOW_S),
                                "--gpm-metrics", ids], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # +1: gpuctl's first line is n/a for GPM (no previous reading yet)
        rc, so, se = acc.gpuctl("dmon", "-i", str(gpu), "-s", "g", "-d", "1s", "-c", str(WINDOW_S + 1), "--json",
                                timeout=WINDOW_S + 60)
        sso, sse = smi.communicate(timeout=60)
    finally:
        if loader:
            loader.kill()
            loader.wait()
    acc.log("nvidia-smi dmon --gpm-metrics %s -> rc %d\n%s%s" % (ids, smi.returncode, sso, sse[-500:]))
    acc.log("gpuctl dmon -s g --json -> rc %d\n%s" % (rc, so))
    if rc != 0:
        raise RuntimeError("gpuctl dmon -s g: exit %d: %s" % (rc, se.strip()[-200:]))
    ours = [json.loads(l) for l in so.splitlines() if l.strip()]
    theirs = parse_smi(sso, len(GPM))
    out = {}
    for k, (_, key) in enumerate(GPM):
        out[key] = (mean(acc.num(l.get(key)) for l in ours), mean(r[k] for r in theirs))
    return out


def cpu_cost(acc, gpu, few=10, many=60):
    """gpuctl's CPU for GPM per GPU per tick, ms: dmon -s ug against -s u (the same but GPM), each
    run for `few` and for `many` ticks; the per-tick cost is the slope, so that what is paid once
    (NVML's start, the GPM support query, the sample buffers) is not spread over the ticks. CPU
    time from wait4's rusage (microseconds), not os.times (clock ticks of 10 ms)."""
    def cpu(groups, ticks):
        args = [acc.G, "dmon", "-i", str(gpu), "-s", groups, "-d", "100ms", "-c", str(ticks), "--json"]
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode("utf-8", "replace")
        p.stderr.close()
        acc.log("$ %s  -> rc %d, CPU %.1f ms" % (" ".join(args), p.returncode, (ru.ru_utime + ru.ru_stime) * 1e3))
        if p.returncode != 0:
            raise RuntimeError("gpuctl dmon -s %s: exit %d: %s" % (groups, p.returncode, err.strip()[-200:]))
        return ru.ru_utime + ru.ru_stime
    extra_many = cpu("ug", many) - cpu("u", many)
    extra_few = cpu("ug", few) - cpu("u", few)
    return max(0.0, extra_many - extra_few) / (many - few) * 1000, max(0.0, extra_few) * 1000


def check(acc):
    """The gpm group: rows into acc (accept.py), or a not_run line where it cannot run."""
    if not shutil.which("nvidia-smi"):
        acc.not_run("gpm", "no nvidia-smi")
        return
    if not smi_has_gpm(acc):
        acc.not_run("gpm", "this nvidia-smi has no dmon --gpm-metrics (driver before 525?)")
        return
    rc, info = acc.gpuctl_json("info", "--json", timeout=120)
    gpu = None
    for g in info.get("gpus", []):
        cc = acc.num(str(g.get("compute_capability") or "").split(".")[0])
        if cc is not None and cc >= 9:
            gpu = g.get("index", 0)
            break
    if gpu is None:
        acc.not_run("gpm", "no GPU with GPM here (Hopper or later)")
        return
    # the budget: the whole agent under 1 % of a core at 1 s on 8 GPUs = 1.25 ms per GPU per tick
    try:
        ms, once = cpu_cost(acc, gpu)
        acc.row("gpm", "GPU%s GPM CPU per tick (dmon -s ug vs -s u, 60 vs 10 ticks)" % gpu, round(ms, 3), "<= 1.25 ms",
                "budget", ms <= 1.25, "2 NVML calls per GPU per tick; %.0f ms paid once with 10 ticks" % once)
    except RuntimeError as e:
        acc.not_run("gpm", "CPU cost: %s" % e)
    for label, load in (("idle", False), ("loaded", True)):
        try:
            avg = window(acc, gpu, load)
        except RuntimeError as e:
            acc.not_run("gpm", "%s window: %s" % (label, e))
            continue
        for key, (ours, ref) in avg.items():
            ok = ours is not None and ref is not None and abs(ours - ref) <= TOL
            acc.row("gpm", "GPU%s %s %s (%d s avg)" % (gpu, label, key, WINDOW_S),
                    None if ours is None else round(ours, 1), None if ref is None else round(ref, 1),
                    "+-%d pts" % TOL, ok, "" if ref is not None else "nvidia-smi gave no value")
