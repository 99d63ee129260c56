#!/usr/bin/env python3
"""Writes tests/data/results-h200x2.json: a HAND-MADE test fixture in the
format of `gpuctl bench --save` (docs/bench.md), for the report and output
tests. Its figures are NOT gpuctl measurements: they are set near what
shared/docs/h200-readings.md records for a 2x H200 SXM server (PyTorch,
nvbandwidth, nccl-tests), with made-up ones where that page has none (host
memcpy, FMA, our GEMM kernels, apps, telemetry). Replace it with a real
`gpuctl bench --quick --save` from the GPU machine when one is recorded in
bench/RESULTS.md."""
import json, math, sys

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
results = []

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

def tel(power, clock_min=1755, temp=52, reasons=0, samples=4):
    return {"samples": samples, "window_s": 0.2 * samples, "sm_clock_mhz_min": clock_min,
            "sm_clock_mhz_max": 1980, "mem_clock_mhz_min": 3201, "power_w_avg": power,
            "power_w_max": power * 1.08, "temp_c_max": temp, "temp_mem_c_max": temp + 6,
            "energy_j": power * 0.2 * (samples - 1), "clock_event_reasons": reasons}

def add(suite, test, variant, metric, unit, value, bytes_=0.0, flops=0.0, gpu=0, peer=-1, ngpus=1,
        size=0, dims=0, scale=None, aux=(), power=300.0, reasons=0):
    # ten samples within +-1% around the figure, slowest to fastest
    if metric == "bandwidth":
        t = bytes_ / (value * 1e9) * 1e3
    elif metric == "tflops":
        t = flops / (value * 1e12) * 1e3
    elif metric == "gflops":
        t = flops / (value * 1e9) * 1e3
    elif metric == "busbw":
        t = bytes_ / (value / scale * 1e9) * 1e3
    elif metric == "rate":
        t = scale / (value * 1e6) * 1e3
    elif metric == "latency":
        t = 10.0
        scale = value / t
    ms = [t * (1 + 0.002 * (i - 4.5)) for i in range(10)]
    def v(m):
        return {"bandwidth": lambda: bytes_ / (m * 1e-3) / 1e9, "tflops": lambda: flops / (m * 1e-3) / 1e12,
                "gflops": lambda: flops / (m * 1e-3) / 1e9, "busbw": lambda: bytes_ / (m * 1e-3) / 1e9 * scale,
                "rate": lambda: scale / (m * 1e-3) / 1e6, "latency": lambda: m * scale}[metric]()
    vals = [v(m) for m in ms]
    vs = stats(vals)
    r = {"suite": suite, "test": test, "variant": variant, "gpu": gpu, "peer": peer, "ngpus": ngpus,
         "size_bytes": size, "m": dims, "n": dims, "k": dims, "status": "ok", "metric": metric, "unit": unit,
         "median": vs["median"], "limit": None, "limit_what": "", "ratio": None, "min_ratio": None,
         "value": vs, "time_ms": stats(ms), "bytes": float(bytes_), "flops": float(flops),
         "scale": scale, "algbw_gbs": vs["median"] / scale if metric == "busbw" else None,
         "verified": True, "max_err": 1e-6, "message": "", "samples_ms": ms,
         "aux": [{"name": a, "value": b, "unit": c} for a, b, c in aux],
         "telemetry": tel(power, reasons=reasons),
         "gflops_per_watt": flops / 1e9 / (stats(ms)["median"] * 1e-3) / power if flops else None}
    results.append(r)

add("host", "memcpy", "", "bandwidth", "GB/s", 38.0, bytes_=2 * 512 * MiB, gpu=-1, ngpus=0, size=512 * MiB,
    aux=[("threads", 32, "")])
for g in (0, 1):
    for size, h2d, d2h in ((4 * KiB, 1.1, 1.3), (1 * MiB, 38.2, 40.1), (64 * MiB, 54.6, 54.9), (1 * GiB, 55.4, 55.3)):
        add("copy", "h2d", "pinned", "bandwidth", "GB/s", h2d, bytes_=size, gpu=g, size=size, power=120)
        add("copy", "d2h", "pinned", "bandwidth", "GB/s", d2h, bytes_=size, gpu=g, size=size, power=120)
    add("copy", "h2d", "pinned_sync", "bandwidth", "GB/s", 53.1, bytes_=GiB, gpu=g, size=GiB, power=120)
    add("copy", "d2h", "pinned_sync", "bandwidth", "GB/s", 53.8, bytes_=GiB, gpu=g, size=GiB, power=120)
    add("copy", "h2d", "pageable", "bandwidth", "GB/s", 7.6, bytes_=GiB, gpu=g, size=GiB, power=110)
    add("copy", "d2h", "pageable", "bandwidth", "GB/s", 14.8, bytes_=GiB, gpu=g, size=GiB, power=110)
    add("copy", "bidir", "pinned", "bandwidth", "GB/s", 97.0, bytes_=2 * GiB, gpu=g, size=GiB, power=125)
    add("copy", "h2d", "pinned_sm", "bandwidth", "GB/s", 51.4, bytes_=GiB, gpu=g, size=GiB, power=160)
    add("copy", "d2h", "pinned_sm", "bandwidth", "GB/s", 52.6, bytes_=GiB, gpu=g, size=GiB, power=160)
    add("copy", "h2d", "pinned_overlap", "bandwidth", "GB/s", 54.1, bytes_=GiB, gpu=g, size=GiB, power=380,
        aux=[("copy_alone_ms", 19.4, "ms"), ("kernel_alone_ms", 18.0, "ms"), ("both_ms", 20.6, "ms"), ("overlap", 0.93, "")])
    for op, bw, mult in (("read", 4350, 1), ("write", 4210, 1), ("copy", 4160, 2), ("triad", 4250, 3)):
        add("memory", op, "", "bandwidth", "GB/s", bw, bytes_=mult * GiB, gpu=g, size=GiB, power=480)
    add("memory", "latency", "", "latency", "ns", 652.0, gpu=g, size=GiB, aux=[("latency_ns", 652.0, "ns")], power=110)
    for prec, tf in (("fp64", 32.5), ("fp32", 61.5), ("fp16x2", 123.0), ("bf16x2", 122.4)):
        add("compute", "fma", prec, "tflops", "TFLOP/s", tf, flops=tf * 1e12 * 0.01, gpu=g, power=600, reasons=4)
    for prec, tf in (("fp64", 56.5), ("fp32", 50.7), ("tf32", 404.0), ("fp16", 752.0), ("bf16", 781.0), ("fp8_e4m3", 1375.0)):
        lib = "cublaslt" if prec == "fp8_e4m3" else "cublas"
        add("compute", lib, prec, "tflops", "TFLOP/s", tf, flops=2.0 * 8192 ** 3, gpu=g, dims=8192,
            power=690, reasons=4)
    for name, tf in (("naive", 4.1), ("tiled", 9.8), ("regblock", 38.5), ("cublas", 48.9)):
        add("gemm", name, "fp32", "tflops", "TFLOP/s", tf, flops=2.0 * 4096 ** 3, gpu=g, dims=4096, power=520)
for src, dst in ((0, 1), (1, 0)):
    for size, bw in ((1 * MiB, 120.0), (16 * MiB, 310.0), (256 * MiB, 385.0), (1 * GiB, 391.0 + 2 * src)):
        add("p2p", "ce", "uni", "bandwidth", "GB/s", bw, bytes_=size, gpu=src, peer=dst, ngpus=2, size=size,
            aux=[("nvlinks", 18, "links")], power=150)
    add("p2p", "sm", "uni", "bandwidth", "GB/s", 376.3, bytes_=GiB, gpu=src, peer=dst, ngpus=2, size=GiB,
        aux=[("nvlinks", 18, "links")], power=200)
    add("p2p", "host", "uni", "bandwidth", "GB/s", 24.5, bytes_=GiB, gpu=src, peer=dst, ngpus=2, size=GiB,
        aux=[("nvlinks", 18, "links")], power=120)
    if src == 0:
        add("p2p", "ce", "bidir", "bandwidth", "GB/s", 783.4, bytes_=2 * GiB, gpu=src, peer=dst, ngpus=2, size=GiB,
            aux=[("nvlinks", 18, "links")], power=160)
    add("p2p", "latency", "uni", "latency", "ns", 829.0, gpu=src, peer=dst, ngpus=2,
        aux=[("nvlinks", 18, "links"), ("latency_ns", 829.0, "ns")], power=110)
factor = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "broadcast": 1.0, "all_to_all": 0.5}
busbw = {"all_reduce": (64, 268, 327), "all_gather": (40, 150, 170), "reduce_scatter": (42, 160, 175),
         "broadcast": (30, 250, 330), "all_to_all": (30, 180, 200)}
for op in factor:
    for size, bb in zip((MiB, 64 * MiB, GiB), busbw[op]):
        add("nccl", op, "", "busbw", "GB/s", bb, bytes_=size, gpu=-1, ngpus=2, size=size, scale=factor[op],
            aux=[("nccl_version", 22803, "")], power=300)
add("apps", "spmv", "", "gflops", "GFLOP/s", 180.0, flops=2 * 27 * 2 * MiB, bytes_=27 * 2 * MiB * 12 + 2 * MiB * 24,
    gpu=0, aux=[("rows", 2 * MiB, ""), ("cpu_ms", 41.2, "ms"), ("speedup", 35.0, "x")], power=350)
add("apps", "lj", "", "gflops", "GFLOP/s", 2500.0, flops=20 * 32 * KiB * 90, gpu=0,
    aux=[("atoms", 32 * KiB, ""), ("cpu_ms", 55.0, "ms"), ("speedup", 120.0, "x"), ("pairs", 32 * KiB * 90, "")], power=420)
add("apps", "bvh", "", "rate", "Mrays/s", 900.0, gpu=0, scale=float(MiB),
    aux=[("triangles", 128 * KiB, ""), ("rays", MiB, ""), ("cpu_ms", 70.0, "ms"), ("speedup", 60.0, "x")], power=380)
add("sustained", "gemm", "bf16", "tflops", "TFLOP/s", 760.0, flops=2.0 * 8192 ** 3, gpu=0, dims=8192, power=695,
    reasons=4, aux=[("first_tflops", 781.0, "TFLOP/s"), ("last_tflops", 742.0, "TFLOP/s"), ("loss_pct", 4.99, "%"),
                    ("step_s", 1.0, "s"), ("clock_min_mhz", 1650, "MHz"), ("temp_max_c", 71, "C"), ("power_max_w", 700, "W")])

run = {"schema": "gpuctl-bench-results", "version": 1, "simulated": False, "gpuctl_version": "0.1.0",
       "started_utc": "2026-11-29T12:00:00Z", "host": "fixture-h200x2", "driver_version": "580.159.04",
       "cuda_version": "13.0", "kernels_build": "hand-made fixture (no kernels ran)", "mode": "quick",
       "note": "HAND-MADE TEST FIXTURE (tests/data/make_results_fixture.py): figures set near "
               "shared/docs/h200-readings.md, not measured by gpuctl",
       "duration_s": 48.0,
       "gpus": [{"index": i, "name": "NVIDIA H200", "uuid": "GPU-fixture-%d" % i,
                 "pci_bus_id": "00000000:%02X:00.0" % (0x18 + 0x1a * i), "catalog_model": "H200 SXM"} for i in (0, 1)],
       "results": results}
json.dump(run, sys.stdout, indent=1)
sys.stdout.write("\n")
