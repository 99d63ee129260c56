#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""plan_memory.py - measure what `gpuctl plan --framework pytorch` predicts: peak GPU memory and step time.
(Hugging Face transformers models, the default framework: bench/hf_plan_memory.py.)

Builds GPT-2 small/medium/large with plain torch.nn modules (random weights, no downloads),
trains a few AdamW steps in FP32 and in BF16 autocast, with and without activation
checkpointing, at two sequence lengths, and runs inference with a preallocated KV cache.
For every case it prints one JSON object with torch.cuda.max_memory_allocated for the
forward+backward phase and the optimizer phase, the memory held by model states, the
CUDA context + allocator overhead, and the median step time.

Usage (one process per GPU; the cases are split between them):
    python3 bench/plan_memory.py --out results.json            # all GPUs it sees
    python3 bench/plan_memory.py --gpu 0 --shard 0/2 --out a.json
Everything is deterministic (seeded); nothing is downloaded.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

GPT2 = {  # name: (layers, hidden, heads)  - Radford et al. 2019, table 2
    "gpt2-small": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
}
VOCAB = 50257


class Block(nn.Module):
    def __init__(self, h, a, attention):
        super().__init__()
        self.h, self.a, self.attention = h, a, attention
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def attn(self, x, cache=None, pos=0):
        b, s, h = x.shape
        d = h // self.a
        q, k, v = self.qkv(x).split(h, dim=2)
        q = q.view(b, s, self.a, d).transpose(1, 2)
        k = k.view(b, s, self.a, d).transpose(1, 2)
        v = v.view(b, s, self.a, d).transpose(1, 2)
        if cache is not None:  # inference: write into the preallocated KV cache
            kc, vc = cache
            kc[:, :, pos:pos + s] = k
            vc[:, :, pos:pos + s] = v
            k, v = kc[:, :, :pos + s], vc[:, :, :pos + s]
            y = F.scaled_dot_product_attention(q, k, v, is_causal=(s > 1))
        elif self.attention == "eager":
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = att @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, s, h)
        return self.proj(y)

    def forward(self, x, cache=None, pos=0):
        x = x + self.attn(self.ln1(x), cache, pos)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x


class GPT(nn.Module):
    def __init__(self, layers, h, a, seq, attention="sdpa"):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, a, attention) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, VOCAB, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2
        self.ckpt = False

    def forward(self, idx, caches=None, pos=0, last_only=False):
        b, s = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(pos, pos + s, device=idx.device))
        for i, blk in enumerate(self.blocks):
            if caches is not None:
                x = blk(x, caches[i], pos)
            elif self.ckpt:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        x = self.ln_f(x)
        if last_only:
            x = x[:, -1:, :]
        return self.head(x)


def cuda_overhead_bytes(dev):
    """Device memory in use that PyTorch's allocator does not account for (CUDA context,
    cuBLAS workspace, kernels): total - free - reserved."""
    free, total = torch.cuda.mem_get_info(dev)
    return total - free - torch.cuda.memory_reserved(dev)


def train_case(dev, model_name, precision, ckpt, seq, batch, attention, steps=4):
    layers, h, a = GPT2[model_name]
    torch.manual_seed(0)
    model = GPT(layers, h, a, seq, attention).to(dev)
    model.ckpt = ckpt
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, VOCAB, (batch, seq), device=dev)
    y = torch.randint(0, VOCAB, (batch, seq), device=dev)
    amp = precision == "bf16-amp"
    times, fb_peaks, opt_peaks, after_fwd = [], [], [], []
    states = None
    for step in range(steps):
        torch.cuda.synchronize(dev)
        base = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            logits = model(x)
        loss = F.cross_entropy(logits.view(-1, VOCAB).float(), y.view(-1))
        del logits
        torch.cuda.synchronize(dev)
        after_fwd.append(torch.cuda.memory_allocated(dev) - base)
        loss.backward()
        torch.cuda.synchronize(dev)
        fb_peaks.append(torch.cuda.max_memory_allocated(dev))
        torch.cuda.reset_peak_memory_stats(dev)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize(dev)
        opt_peaks.append(torch.cuda.max_memory_allocated(dev))
        times.append(time.perf_counter() - t0)
        if step == 0:
            states = torch.cuda.memory_allocated(dev)  # weights + AdamW states (+ inputs)
    overhead = cuda_overhead_bytes(dev)
    reserved = torch.cuda.max_memory_reserved(dev)
    res = {
        "kind": "train", "model": model_name, "layers": layers, "hidden": h, "heads": a,
        "vocab": VOCAB, "params": params, "precision": precision,
        "checkpointing": "full" if ckpt else "none", "attention": attention,
        "seq": seq, "micro_batch": batch, "optimizer": "adamw",
        "model_states_bytes": states,
        "activations_after_forward_bytes": statistics.median(after_fwd[1:]),
        "peak_fwd_bwd_bytes": max(fb_peaks[1:]),
        "peak_optimizer_bytes": max(opt_peaks[1:]),
        "peak_bytes": max(max(fb_peaks[1:]), max(opt_peaks[1:])),
        "max_reserved_bytes": reserved,
        "cuda_overhead_bytes": overhead,
        "step_time_s": statistics.median(times[1:]),
        "tokens_per_step": batch * seq,
    }
    del model, opt, x, y, loss
    torch.cuda.empty_cache()
    return res


@torch.no_grad()
def infer_case(dev, model_name, batch, prompt, ctx, new_tokens):
    layers, h, a = GPT2[model_name]
    torch.manual_seed(0)
    model = GPT(layers, h, a, ctx).to(dev).to(torch.bfloat16).eval()
    params = sum(p.numel() for p in model.parameters())
    torch.cuda.synchronize(dev)
    weights = torch.cuda.memory_allocated(dev)
    d = h // a
    caches = [(torch.empty(batch, a, ctx, d, device=dev, dtype=torch.bfloat16),
               torch.empty(batch, a, ctx, d, device=dev, dtype=torch.bfloat16))
              for _ in range(layers)]
    torch.cuda.synchronize(dev)
    kv = torch.cuda.memory_allocated(dev) - weights
    torch.cuda.reset_peak_memory_stats(dev)
    idx = torch.randint(0, VOCAB, (batch, prompt), device=dev)
    torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    logits = model(idx, caches, 0, last_only=True)
    torch.cuda.synchronize(dev)
    prefill_s = time.perf_counter() - t0
    tok = logits[:, -1].argmax(-1, keepdim=True)
    step_times = []
    for i in range(new_tokens):
        torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        logits = model(tok, caches, prompt + i, last_only=True)
        tok = logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize(dev)
        step_times.append(time.perf_counter() - t0)
    res = {
        "kind": "serve", "model": model_name, "layers": layers, "hidden": h, "heads": a,
        "vocab": VOCAB, "params": params, "precision": "bf16", "batch": batch,
        "prompt": prompt, "context": ctx, "new_tokens": new_tokens,
        "weights_bytes": weights, "kv_cache_bytes": kv,
        "peak_bytes": torch.cuda.max_memory_allocated(dev),
        "cuda_overhead_bytes": cuda_overhead_bytes(dev),
        "prefill_s": prefill_s,
        "decode_step_s": statistics.median(step_times[4:]),
        "decode_tokens_per_s": batch / statistics.median(step_times[4:]),
    }
    del model, caches
    torch.cuda.empty_cache()
    return res


def cases():
    out = []
    for m in GPT2:
        for prec in ("fp32", "bf16-amp"):
            for ckpt in (False, True):
                for seq in (512, 1024):
                    out.append(("train", m, prec, ckpt, seq, 8, "sdpa"))
    for seq in (512, 1024):
        out.append(("train", "gpt2-small", "bf16-amp", False, seq, 8, "eager"))
    for m in GPT2:
        out.append(("serve", m, 8, 512, 1024, 32))
        out.append(("serve", m, 32, 1024, 2048, 32))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", type=int, default=None, help="run one shard on this GPU")
    ap.add_argument("--shard", default="0/1", help="i/n: run every n-th case from i")
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    if args.gpu is None:  # parent: one child per GPU, then merge
        n = torch.cuda.device_count()
        outs = [f"/tmp/plan_memory_{i}.json" for i in range(n)]
        procs = [subprocess.Popen([sys.executable, __file__, "--gpu", str(i), "--shard",
                                   f"{i}/{n}", "--out", outs[i]]) for i in range(n)]
        rc = max(p.wait() for p in procs)
        results = []
        for o in outs:
            if os.path.exists(o):
                results += json.load(open(o))["cases"]
        doc = {"machine": torch.cuda.get_device_name(0), "gpus": n,
               "torch": torch.__version__, "cuda": torch.version.cuda,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "cases": results}
        text = json.dumps(doc, indent=1)
        if args.out == "-":
            print(text)
        else:
            open(args.out, "w").write(text)
        print(f"{len(results)} cases", file=sys.stderr)
        return rc
    i, n = map(int, args.shard.split("/"))
    dev = torch.device("cuda", args.gpu)
    torch.cuda.set_device(dev)
    torch.empty(1, device=dev)  # create the context before the first reading
    results = []
    for c in cases()[i::n]:
        try:
            r = train_case(dev, *c[1:]) if c[0] == "train" else infer_case(dev, *c[1:])
        except torch.cuda.OutOfMemoryError as e:
            r = {"case": list(c), "error": str(e).splitlines()[0]}
            torch.cuda.empty_cache()
        print(json.dumps(r), flush=True)
        results.append(r)
        json.dump({"cases": results}, open(args.out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
