#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's figures for `gpuctl bench -s train` (issue 16): transformers'
GPT2LMHeadModel (124M by default, randomly initialised: nothing is downloaded),
seq 1024, micro-batch 16, the same batch every step (synthetic tokens from a
fixed seed), fused AdamW (lr 3e-4, betas 0.9/0.95, weight decay 0.1), SDPA
attention. Modes: fp32 with TF32 off, tf32, AMP bf16 eager, and AMP bf16 under
torch.compile (bf16_compile, asked for by --modes). Step time: the median of CUDA-event-timed
optimizer steps after warm-up; tokens/s and TFLOP/s counted as gpuctl counts
them (6 params + 12 layers channels seq per token); peak = max allocated.
Prints one JSON document.

Usage: python3 bench/train_torch.py [--model 124M|350M|774M] [--batch 16] [--steps 20]
                                    [--modes fp32,tf32,bf16,bf16_compile]
"""
import argparse
import json
import statistics
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

SIZES = {"124M": (12, 12, 768), "350M": (24, 16, 1024), "774M": (36, 20, 1280)}


def run(mode, args, out):
    layers, heads, channels = SIZES[args.model]
    torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    torch.backends.cudnn.allow_tf32 = mode == "tf32"
    torch.manual_seed(1)
    cfg = GPT2Config(n_layer=layers, n_head=heads, n_embd=channels, n_positions=1024, vocab_size=50257,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="sdpa")
    model = GPT2LMHeadModel(cfg).cuda().train()
    attn = getattr(model.config, "_attn_implementation", "?")
    nparams = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    g = torch.Generator(device="cuda").manual_seed(77)
    seq = torch.randint(0, 50257, (args.batch, args.seq + 1), device="cuda", generator=g)
    x, y = seq[:, :-1].contiguous(), seq[:, 1:].contiguous()
    amp = mode in ("bf16", "bf16_compile")

    def loss_of(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            logits = model(input_ids=x).logits
        return torch.nn.functional.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1))

    fn = torch.compile(loss_of) if mode == "bf16_compile" else loss_of

    def step():
        loss = fn(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t0 = time.time()
    losses = [step().item() for _ in range(3)]
    torch.cuda.synchronize()
    warm_s = time.time() - t0
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.steps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        loss = step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
        losses.append(loss.item())
    ms = statistics.median(times)
    tokens = args.batch * args.seq
    flops = (6 * nparams + 12 * layers * channels * args.seq) * tokens
    out[mode] = {"step_ms": ms, "tokens_per_s": tokens / (ms * 1e-3), "tflops": flops / (ms * 1e-3) / 1e12,
                 "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "params": nparams,
                 "loss_first": losses[0], "loss_last": losses[-1], "warmup_s": warm_s, "attention": attn}
    del model, opt
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="124M", choices=sorted(SIZES))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--modes", default="fp32,tf32,bf16")
    args = ap.parse_args()
    import transformers
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(0),
           "model": args.model, "batch": args.batch, "seq": args.seq}
    modes = args.modes.split(",")
    for mode in modes:
        try:
            run(mode, args, out)
        except Exception as e:  # keep the other modes' figures
            out[mode] = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps({mode: out[mode]}), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
