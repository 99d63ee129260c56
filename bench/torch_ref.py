#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's figures for the operations gpuctl's kernels module measures, so
the two can stand side by side in bench/RESULTS.md (issue 4).

Measures, each as the median of CUDA-event-timed runs after warm-up, on random
non-zero data: device-to-device copy (bytes read + written), pinned H2D/D2H,
GEMM 8192^3 per precision (FP64, FP32 without TF32, TF32, FP16, BF16, FP8 e4m3
through torch._scaled_mm), P2P copy GPU0->GPU1 one way and both ways, and NCCL
all-reduce 1 MiB..4 GiB through torch.distributed with one process a GPU
(bus bandwidth with nccl-tests' 2(n-1)/n factor). Prints one JSON document.

Usage: NCCL_NVLS_ENABLE=0 python3 bench/torch_ref.py [--quick]
"""
import json
import os
import statistics
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast on shared hosts
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402

GiB = 1 << 30
MiB = 1 << 20


def timed(fn, iters=20, warmup=3, stream=None):
    """Median milliseconds of fn() between two events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record(stream)
        fn()
        b.record(stream)
        b.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


def rand_nonzero(shape, dtype, device):
    x = torch.rand(shape, device=device, dtype=torch.float32) * 0.9375 + 0.0625
    sign = torch.randint(0, 2, shape, device=device, dtype=torch.int8) * 2 - 1
    return (x * sign).to(dtype)


def device_copy(res):
    n = 4 * GiB
    src = torch.randint(1, 255, (n,), dtype=torch.uint8, device="cuda:0")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src))
    assert torch.equal(dst[:1 << 20], src[:1 << 20]) and torch.equal(dst[-(1 << 20):], src[-(1 << 20):])
    res["device_copy_4GiB_TBps"] = 2 * n / (ms * 1e-3) / 1e12
    del src, dst


def host_copies(res):
    n = GiB
    h = torch.randint(1, 255, (n,), dtype=torch.uint8).pin_memory()
    d = torch.empty(n, dtype=torch.uint8, device="cuda:0")
    ms = timed(lambda: d.copy_(h, non_blocking=True))
    res["h2d_pinned_1GiB_GBps"] = n / (ms * 1e-3) / 1e9
    h2 = torch.empty(n, dtype=torch.uint8).pin_memory()
    ms = timed(lambda: h2.copy_(d, non_blocking=True))
    assert torch.equal(h2[:1 << 20], h[:1 << 20])
    res["d2h_pinned_1GiB_GBps"] = n / (ms * 1e-3) / 1e9
    del h, h2, d


def gemms(res, quick):
    n = 4096 if quick else 8192
    flops = 2.0 * n * n * n
    torch.backends.cuda.matmul.allow_tf32 = False
    for name, dt, tf32 in (("fp64", torch.float64, False), ("fp32", torch.float32, False), ("tf32", torch.float32, True),
                           ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = rand_nonzero((n, n), dt, "cuda:0")
        b = rand_nonzero((n, n), dt, "cuda:0")
        ms = timed(lambda: torch.matmul(a, b), iters=20)
        ref = a[:64].double() @ b.double()
        err = ((torch.matmul(a, b)[:64].double() - ref).norm() / ref.norm()).item()
        res[f"gemm_{name}_{n}_TFLOPs"] = flops / (ms * 1e-3) / 1e12
        res[f"gemm_{name}_rel_err"] = err
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        a = rand_nonzero((n, n), torch.float32, "cuda:0").to(torch.float8_e4m3fn)
        b = rand_nonzero((n, n), torch.float32, "cuda:0").to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.tensor(1.0, device="cuda:0")
        ms = timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), iters=20)
        res[f"gemm_fp8_e4m3_{n}_TFLOPs"] = flops / (ms * 1e-3) / 1e12
    except Exception as e:  # noqa: BLE001 - report, don't crash the run
        res["gemm_fp8_error"] = str(e)[:200]


def p2p(res):
    if torch.cuda.device_count() < 2:
        return
    n = GiB
    a0 = torch.randint(1, 255, (n,), dtype=torch.uint8, device="cuda:0")
    b1 = torch.empty(n, dtype=torch.uint8, device="cuda:1")
    a1 = torch.randint(1, 255, (n,), dtype=torch.uint8, device="cuda:1")
    b0 = torch.empty(n, dtype=torch.uint8, device="cuda:0")
    ms = timed(lambda: b1.copy_(a0, non_blocking=True))
    res["p2p_0to1_1GiB_GBps"] = n / (ms * 1e-3) / 1e9
    s0 = torch.cuda.Stream(device="cuda:0")
    s1 = torch.cuda.Stream(device="cuda:1")

    def both():
        with torch.cuda.stream(s0):
            b1.copy_(a0, non_blocking=True)
        with torch.cuda.stream(s1):
            b0.copy_(a1, non_blocking=True)
        s0.synchronize()
        s1.synchronize()

    import time
    both()
    t = []
    for _ in range(10):
        t0 = time.perf_counter()
        both()
        t.append(time.perf_counter() - t0)
    res["p2p_bidir_1GiB_GBps_wall"] = 2 * n / statistics.median(t) / 1e9
    assert torch.equal(b1[:1 << 20].cpu(), a0[:1 << 20].cpu())
    del a0, a1, b0, b1


def _allreduce_worker(rank, world, sizes, q):
    import torch.distributed as dist
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29517"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    out = {}
    for size in sizes:
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        iters = 20
        times = []
        for _ in range(iters):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            dist.all_reduce(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        ms = statistics.median(times)
        out[size] = (size / (ms * 1e-3) / 1e9 * 2 * (world - 1) / world, ms)
        del x
    if rank == 0:
        q.put(out)
    dist.destroy_process_group()


def allreduce(res, quick):
    world = torch.cuda.device_count()
    if world < 2:
        return
    import torch.multiprocessing as mp
    sizes = [MiB << (2 * i) for i in range(7 if not quick else 4)]  # 1 MiB .. 4 GiB
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_allreduce_worker, args=(r, world, sizes, q)) for r in range(world)]
    for p in procs:
        p.start()
    out = q.get(timeout=600)
    for p in procs:
        p.join(timeout=60)
    for size, (busbw, ms) in out.items():
        res[f"allreduce_{size // MiB}MiB_busbw_GBps"] = busbw
        res[f"allreduce_{size // MiB}MiB_us"] = ms * 1e3


def main():
    quick = "--quick" in sys.argv
    res = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": torch.cuda.device_count(),
           "name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    if not torch.cuda.is_available():
        res["error"] = "no CUDA device"
        print(json.dumps(res, indent=1))
        return 69
    for step in (device_copy, host_copies, lambda r: gemms(r, quick), p2p, lambda r: allreduce(r, quick)):
        try:
            step(res)
        except Exception as e:  # noqa: BLE001 - one failing step must not hide the others
            res.setdefault("errors", []).append(f"{getattr(step, '__name__', 'step')}: {str(e)[:200]}")
        torch.cuda.empty_cache()
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
