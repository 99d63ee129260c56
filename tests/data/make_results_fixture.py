#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes tests/data/results-h200x2.json (stdout): a results file in the format
of `gpuctl bench --save` (docs/bench.md) for the report and output tests.

Its figures are REAL, but it was not written by `gpuctl bench`: they are the
kernels module's own timing run on the lent 2x H200 SXM machine (2026-11-30,
bench/kernels-run3/timing.jsonl, recorded in bench/RESULTS.md), shaped here
into results-file form. Per-sample times are rebuilt from each test's
min/median/max (the run kept no single samples); there is no telemetry (the
self-test read none), no host memcpy and no sustained run. Replace it with a
real `gpuctl bench --quick --save` (scripts/gpu/bench.sh) once one is recorded.

    python3 tests/data/make_results_fixture.py > tests/data/results-h200x2.json
"""
import json, math, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "..", "bench", "kernels-run3", "timing.jsonl")
GiB, MiB = 1 << 30, 1 << 20
rows = [json.loads(l) for l in open(src)]

def stats(x):
    s = sorted(x); n = len(s)
    def pct(p):
        r = p / 100 * (n - 1); lo = math.floor(r); hi = min(lo + 1, n - 1)
        return s[lo] + (s[hi] - s[lo]) * (r - lo)
    mean = sum(s) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in s) / (n - 1)) if n > 1 else 0.0
    med = pct(50)
    return {"n": n, "median": med, "min": s[0], "max": s[-1], "mean": mean, "stddev": sd,
            "p10": pct(10), "p90": pct(90), "spread_pct": 100 * (s[-1] - s[0]) / med if med else None}

def samples(row):
    """n times with the row's min, median and max (the middle pair both at the median)."""
    n, lo, med, hi = row["samples"], row["min_ms"], row["median_ms"], row["max_ms"]
    half = n // 2
    below = [lo + (med - lo) * i / max(half - 1, 1) for i in range(half)]
    above = [med + (hi - med) * i / max(n - half - 1, 1) for i in range(n - half)]
    if n % 2 == 0:
        below[-1] = med
    return sorted(below + above)

results = []
def add(row, suite, test, variant, metric, unit, gpu=0, peer=-1, ngpus=1, size=0, dims=0, scale=None, aux=()):
    ms = samples(row)
    b, f = row["bytes"], row["flops"]
    if metric == "bandwidth":
        v = lambda m: b / (m * 1e-3) / 1e9
    elif metric == "tflops":
        v = lambda m: f / (m * 1e-3) / 1e12
    elif metric == "gflops":
        v = lambda m: f / (m * 1e-3) / 1e9
    elif metric == "busbw":
        v = lambda m: b / (m * 1e-3) / 1e9 * scale
    elif metric == "rate":
        v = lambda m: scale / (m * 1e-3) / 1e6
    elif metric == "latency":
        scale = row["latency_ns"] / row["median_ms"]
        v = lambda m: m * scale
    vs = stats([v(m) for m in ms])
    known = {"name", "params", "rc", "samples", "median_ms", "min_ms", "max_ms", "bytes", "flops", "rate", "unit",
             "datasheet", "verified", "mismatches", "nans", "max_err", "variant", "err", "variants_wrong"}
    extra = [(k, float(row[k]), "") for k in row if k not in known and isinstance(row[k], (int, float))][:6]
    results.append({
        "suite": suite, "test": test, "variant": variant, "gpu": gpu, "peer": peer, "ngpus": ngpus,
        "size_bytes": size, "m": dims, "n": dims, "k": dims, "status": "ok", "metric": metric, "unit": unit,
        "median": vs["median"], "limit": None, "limit_what": "", "ratio": None, "min_ratio": None,
        "value": vs, "time_ms": stats(ms), "bytes": float(b), "flops": float(f), "scale": scale,
        "algbw_gbs": vs["median"] / scale if metric == "busbw" else None,
        "verified": bool(row["verified"]), "max_err": row.get("max_err"), "message": "", "samples_ms": ms,
        "aux": [{"name": k, "value": x, "unit": u} for k, x, u in list(aux) + extra],
        "telemetry": {"samples": 0, "clock_event_reasons": 0}, "gflops_per_watt": None})

def size_of(params):
    m = re.match(r"(\d+) (GiB|MiB)", params)
    return int(m.group(1)) * (GiB if m.group(2) == "GiB" else MiB) if m else 0

for r in rows:
    name, p = r["name"], r["params"]
    w = name.split()
    if w[0] == "memory" and w[1] != "latency":
        add(r, "memory", w[1], "", "bandwidth", "GB/s", size=size_of(p))
    elif name == "memory latency":
        add(r, "memory", "latency", "", "latency", "ns", size=GiB)
    elif w[0] == "copy" and w[1] in ("h2d", "d2h", "bidir"):
        variant = {"pinned ce": "pinned", "pinned ce sync": "pinned_sync", "pageable": "pageable",
                   "pinned sm": "pinned_sm"}.get(" ".join(w[2:]))
        if variant and not (w[1] == "bidir" and variant != "pinned"):
            add(r, "copy", w[1], variant, "bandwidth", "GB/s", size=GiB)
    elif w[0] == "fma":
        add(r, "compute", "fma", w[1], "tflops", "TFLOP/s")
    elif w[0] == "gemm" and p.endswith("TN") and (w[2] == "cublas" or w[1] == "fp8_e4m3"):
        add(r, "compute", w[2].lower(), w[1], "tflops", "TFLOP/s", dims=8192)
    elif w[0] == "own":
        add(r, "gemm", w[2], "fp32", "tflops", "TFLOP/s", dims=int(p.split("^")[0]))
    elif w[0] == "p2p" and w[1] == "0->1":
        test = {"ce": "ce", "sm": "sm", "host-staged": "host"}[w[2]]
        if test == "host" and w[3] == "bidir":
            continue
        add(r, "p2p", test, w[3], "bandwidth", "GB/s", peer=1, ngpus=2, size=GiB, aux=[("nvlinks", 18, "links")])
    elif name == "p2p latency":
        add(r, "p2p", "latency", "uni", "latency", "ns", peer=1, ngpus=2, aux=[("nvlinks", 18, "links")])
    elif w[0] == "nccl":
        factor = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "broadcast": 1.0, "all_to_all": 0.5}[w[1]]
        add(r, "nccl", w[1], "", "busbw", "GB/s", gpu=-1, ngpus=2, size=size_of(p), scale=factor)
    elif name == "apps spmv":
        add(r, "apps", "spmv", "", "gflops", "GFLOP/s", aux=[("rows", 4 * MiB, "")])
    elif name == "apps lj":
        add(r, "apps", "lj", "", "gflops", "GFLOP/s", aux=[("atoms", 32768, "")])
    elif name == "apps bvh":
        add(r, "apps", "bvh", "", "rate", "Mrays/s", scale=float(2 * MiB),
            aux=[("triangles", MiB, ""), ("rays", 2 * MiB, "")])

run = {"schema": "gpuctl-bench-results", "version": 1, "simulated": False, "gpuctl_version": "0.1.0",
       "started_utc": "2026-11-30T00:32:00Z", "host": "lent nvidia-h200-x2", "driver_version": "580.159.04",
       "cuda_version": "13.0", "kernels_build": "gpuctl kernels ABI 1, CUDA 13000, sm_80 sm_90", "mode": "quick",
       "note": "TEST FIXTURE: real figures of the kernels module's timing run (bench/kernels-run3, see "
               "bench/RESULTS.md) put into this format by tests/data/make_results_fixture.py, not written by "
               "gpuctl bench; samples rebuilt from min/median/max",
       "duration_s": None,
       "gpus": [{"index": i, "name": "NVIDIA H200", "uuid": "", "pci_bus_id": "00000000:00:%02X.0" % (6 + i),
                 "catalog_model": "H200 SXM"} for i in (0, 1)],
       "results": results}
json.dump(run, sys.stdout, indent=1)
sys.stdout.write("\n")
