#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hf_plan_memory.py - what `gpuctl plan` must predict for Hugging Face `transformers` models.

Builds models from configs with `transformers` (random init on the GPU, nothing downloaded):
GPT-2, Llama (GQA, SwiGLU, RMSNorm, RoPE; tied and untied), Qwen2 (QKV bias, 152k vocabulary)
and Mixtral (MoE, top-2 of 8). Training cases: three full steps (forward with the model's own
loss, `labels=input_ids`, backward, optimizer step, zero_grad(set_to_none=True)), each phase's
torch.cuda.max_memory_allocated, the peak reserved, the phase of the peak, and the tensors
autograd saved in the first forward (by torch.autograd.graph.saved_tensors_hooks, grouped by
what they are). Serving cases: one prefill with the last position's logits only
(logits_to_keep=1), the KV cache it leaves, then generate().

The user code it mirrors is the Trainer's: `loss = model(input_ids=x, labels=x).loss`
(the output object, and with it the logits, is dropped before backward), config.use_cache
False in training, HF's gradient_checkpointing_enable() with its defaults.

Robust for one device call: every case runs in a worker process under try/except (an OOM is
a result); a worker that dies is restarted after the case it died in; each result is one JSON
line appended (and flushed) to --out, so a timeout keeps what ran.

    python3 bench/hf_plan_memory.py --list            # the cases, no GPU needed
    python3 bench/hf_plan_memory.py --set smoke --out smoke.jsonl
    python3 bench/hf_plan_memory.py --set all --out cases.jsonl
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time

# name: family, layers, hidden, heads, kv_heads, ffn, vocab, tied, experts, experts_active
MODELS = {
    "gpt2-small": ("gpt2", 12, 768, 12, 12, 3072, 50304, True, 0, 0),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 16, 4096, 50304, True, 0, 0),
    "llama-0.1b": ("llama", 12, 768, 12, 4, 2048, 32000, False, 0, 0),
    "llama-1b": ("llama", 16, 2048, 32, 8, 8192, 128256, True, 0, 0),    # Llama-3.2-1B shape
    "llama-3b": ("llama", 28, 3072, 24, 8, 8192, 128256, True, 0, 0),    # Llama-3.2-3B shape
    "llama-7b": ("llama", 32, 4096, 32, 32, 11008, 32000, False, 0, 0),  # Llama-2-7B shape
    "llama-8b": ("llama", 32, 4096, 32, 8, 14336, 128256, False, 0, 0),  # Llama-3-8B shape
    "qwen2-0.5b": ("qwen2", 24, 896, 14, 2, 4864, 151936, True, 0, 0),   # Qwen2-0.5B shape
    "qwen2-1.5b": ("qwen2", 28, 1536, 12, 2, 8960, 151936, True, 0, 0),  # Qwen2-1.5B shape
    "mixtral-tiny": ("mixtral", 8, 1024, 16, 4, 3584, 32000, False, 8, 2),
    "mixtral-3b": ("mixtral", 12, 2048, 16, 8, 4096, 32000, False, 8, 2),
    # held out: shapes the model was not derived from (--set holdout)
    "smol-360m": ("llama", 32, 960, 15, 5, 2560, 49152, True, 0, 0),     # SmolLM2-360M shape
    "qwen2.5-3b": ("qwen2", 36, 2048, 16, 2, 11008, 151936, True, 0, 0), # Qwen2.5-3B shape
    "mixtral-top1": ("mixtral", 8, 1024, 16, 8, 2816, 32000, False, 4, 1),
    "gpt2-large": ("gpt2", 36, 1280, 20, 20, 5120, 50304, True, 0, 0),
    # round 2 (issue 34): checkpointing, long sequences, large tied vocabularies, GQA ratios
    "tinyllama-1.1b": ("llama", 22, 2048, 32, 4, 5632, 32000, False, 0, 0),  # TinyLlama-1.1B shape
    "llama-1.2b": ("llama", 16, 2048, 32, 8, 8192, 32000, False, 0, 0),      # Llama-3.2-1B, 32k vocab
}


def T(model, prec="amp", ckpt="none", attn="sdpa", seq=1024, mb=8, optim="adamw", **over):
    c = {"kind": "train", "model": model, "precision": prec, "checkpointing": ckpt,
         "attention": attn, "seq": seq, "micro_batch": mb, "optimizer": optim}
    c.update(over)
    return c


def S(model, batch, prompt, new=16, attn="sdpa", **over):
    c = {"kind": "serve", "model": model, "batch": batch, "prompt": prompt, "new_tokens": new,
         "attention": attn}
    c.update(over)
    return c


def case_list(which):
    smoke = [T("gpt2-small", seq=128, mb=2, steps=1), T("llama-0.1b", seq=128, mb=2, steps=1),
             T("qwen2-0.5b", seq=128, mb=2, steps=1, ckpt="full"),
             T("mixtral-tiny", seq=128, mb=2, steps=1), S("llama-0.1b", 2, 64, new=4)]
    if which == "smoke":
        return smoke
    # round 2 (issue 34): 12 cases the planner's checkpointing and logits terms are fitted to,
    # and 12 held out that nothing is fitted to (report both halves apart)
    tl, l12, q5, l0 = "tinyllama-1.1b", "llama-1.2b", "qwen2-0.5b", "llama-0.1b"
    if which == "r2fit":
        return sorted([
            T("llama-3b", ckpt="full", seq=4096, mb=1), T(tl, ckpt="full", seq=2048, mb=4),
            T(q5, ckpt="full", seq=4096, mb=4), T(l12, ckpt="full", seq=4096, mb=2), T(q5, seq=1024, mb=8),
            T(l0, ckpt="full", seq=8192, mb=1, vocab=151936), T(l0, "bf16", ckpt="full", mb=16, tied=True),
            T("mixtral-tiny", ckpt="full", seq=4096, mb=2), T("llama-1b", ckpt="full", seq=8192, mb=1),
            T("gpt2-medium", ckpt="full", mb=16), T("qwen2-1.5b", ckpt="full", seq=4096, mb=2, optim="adamw-fused"),
            T(l0, seq=4096, mb=4, kv_heads=12),
        ], key=case_cost)
    if which == "r2holdout":
        return sorted([
            T("llama-3b", ckpt="full", seq=8192, mb=1), T(tl, seq=2048, mb=2),
            T(q5, "bf16", ckpt="full", seq=2048, mb=8), T(l12, seq=2048, mb=2),
            T(q5, ckpt="full", mb=16, tied=False), T(l0, ckpt="full", seq=2048, mb=8, vocab=128256, kv_heads=2),
            T("smol-360m", ckpt="full", seq=4096, mb=4), T("mixtral-3b", ckpt="full", seq=4096, mb=1),
            T("llama-1b", ckpt="full", seq=4096, mb=4, tied=False), T("gpt2-large", ckpt="full", mb=8),
            T("qwen2.5-3b", ckpt="full", seq=4096, mb=1, optim="adamw-fused"), T(tl, "bf16", ckpt="full", seq=8192, mb=1),
        ], key=case_cost)
    if which == "holdout":
        sm, q3, m1, gl = "smol-360m", "qwen2.5-3b", "mixtral-top1", "gpt2-large"
        return sorted([
            T(sm, seq=2048), T(sm, "bf16", attn="eager", mb=4), T(sm, "fp32", ckpt="full"),
            T(sm, ckpt="full", seq=4096, mb=4, optim="sgd"),
            T(q3, "bf16", ckpt="full", seq=4096, mb=2, optim="adamw-fused"),
            T(q3, ckpt="full", seq=2048, mb=2, optim="adamw-fused"),
            T("qwen2-0.5b", seq=4096, mb=2, optim="adamw-fused"), T("qwen2-0.5b", "bf16", ckpt="full", seq=8192, mb=2),
            T(m1), T(m1, "bf16", ckpt="full", seq=2048, mb=4), T(m1, "fp32", mb=4),
            T("mixtral-tiny", seq=2048, mb=4, optim="adamw-fused"),
            T(gl, mb=4), T(gl, "fp32", ckpt="full"), T(gl, "bf16", attn="eager", mb=2),
            T("gpt2-medium", seq=512, mb=16, optim="sgd"),
            T("llama-8b", "bf16", ckpt="full", seq=4096, mb=1, optim="adamw-fused"),
            T("llama-1b", "bf16", mb=8, optim="sgd"), T("llama-1b", mb=8, attn="eager"),
            S("gpt2-medium", 4, 1024, attn="eager"), S("qwen2-0.5b", 16, 1024), S(m1, 8, 2048),
            S("llama-3b", 2, 16384), S(sm, 8, 2048, attn="eager"),
        ], key=case_cost)
    g, l0, l1 = "gpt2-small", "llama-0.1b", "llama-1b"
    out = [
        # the GPT-2 (vocabulary 50304, sequence 1024, micro-batch 16, fused AdamW, SDPA)
        T(g, mb=16, optim="adamw-fused"), T(g, "fp32", mb=16, optim="adamw-fused"),
        T(g, "bf16", mb=16), T(g, ckpt="full", mb=16), T(g, attn="eager", mb=16),
        T(g, mb=16, optim="sgd"), T(g, "fp32", ckpt="full", mb=16), T(g, seq=512, mb=8),
        T("gpt2-medium"), T("gpt2-medium", ckpt="full"), T("gpt2-medium", "fp32"),
        T("gpt2-medium", "bf16"),
        # Llama 0.1B: precision, optimizer, attention, checkpointing, vocabulary, tying
        T(l0, mb=16), T(l0, mb=16, optim="adamw-fused"), T(l0, "fp32", mb=16), T(l0, "bf16", mb=16),
        T(l0, ckpt="full", mb=16), T(l0, attn="eager", mb=16), T(l0, mb=16, optim="sgd"),
        T(l0, "fp32", ckpt="full", mb=16), T(l0, seq=2048, mb=8), T(l0, mb=16, tied=True),
        T(l0, mb=16, vocab=50304), T(l0, mb=16, vocab=128256), T(l0, mb=16, vocab=151936),
        T(l0, "bf16", ckpt="full", mb=16, optim="sgd"), T(l0, "fp32", attn="eager", mb=8),
        # Llama 1B (Llama-3.2-1B shape: tied, 128k)
        T(l1, seq=2048, mb=4), T(l1, ckpt="full", seq=2048, mb=4, optim="adamw-fused"),
        T(l1, "bf16", seq=2048, mb=4), T(l1, "bf16", ckpt="full", seq=2048, mb=4),
        T(l1, "fp32", ckpt="full", seq=2048, mb=2), T(l1, attn="eager", seq=2048, mb=2),
        T(l1, seq=2048, mb=4, tied=False), T(l1, seq=2048, mb=4, optim="sgd"),
        T(l1, ckpt="full", seq=4096, mb=2),
        # Llama 3B, 7B, 8B
        T("llama-3b", ckpt="full", seq=2048, mb=4, optim="adamw-fused"),
        T("llama-3b", "bf16", ckpt="full", seq=2048, mb=4),
        T("llama-3b", "bf16", seq=2048, mb=2),
        T("llama-3b", ckpt="full", seq=2048, mb=8),
        T("llama-7b", "bf16", ckpt="full", seq=4096, mb=2, optim="adamw-fused"),
        T("llama-8b", "bf16", ckpt="full", seq=2048, mb=4, optim="adamw-fused"),
        T("llama-8b", "bf16", ckpt="full", seq=2048, mb=4, optim="sgd"),
        # Qwen2
        T("qwen2-0.5b"), T("qwen2-0.5b", ckpt="full", optim="adamw-fused"), T("qwen2-0.5b", "fp32"),
        T("qwen2-0.5b", "bf16"), T("qwen2-0.5b", attn="eager", mb=4), T("qwen2-0.5b", optim="sgd"),
        T("qwen2-0.5b", seq=2048, mb=4),
        T("qwen2-1.5b", seq=2048, mb=4, optim="adamw-fused"),
        T("qwen2-1.5b", ckpt="full", seq=2048, mb=4, optim="adamw-fused"),
        T("qwen2-1.5b", "bf16", ckpt="full", seq=2048, mb=4),
        T("qwen2-1.5b", "fp32", ckpt="full", seq=1024, mb=4),
        # Mixtral
        T("mixtral-tiny"), T("mixtral-tiny", ckpt="full", optim="adamw-fused"),
        T("mixtral-tiny", "fp32"), T("mixtral-tiny", "bf16"), T("mixtral-tiny", attn="eager", mb=4),
        T("mixtral-tiny", optim="sgd"), T("mixtral-tiny", "bf16", ckpt="full"),
        T("mixtral-3b", ckpt="full", seq=2048, mb=4, optim="adamw-fused"),
        T("mixtral-3b", "bf16", ckpt="full", seq=2048, mb=4),
        T("mixtral-3b", "bf16", seq=2048, mb=2),
        # serving: transformers generation, BF16 weights
        S("gpt2-small", 8, 512, new=32), S(l0, 8, 1024), S(l0, 4, 1024, attn="eager"),
        S(l1, 8, 2048), S(l1, 1, 8192), S("qwen2-1.5b", 8, 2048), S("mixtral-tiny", 8, 1024),
        S("mixtral-3b", 4, 2048), S("llama-8b", 4, 4096),
    ]
    # cheapest first: a run cut short by its time limit loses the largest cases, not a family
    return sorted(out, key=case_cost)


def case_cost(c):
    fam, layers, h, heads, kvh, ffn, vocab, tied, experts, k = MODELS[c["model"]]
    params = layers * (4 * h * h + 3 * h * ffn * max(experts, 1)) + 2 * c.get("vocab", vocab) * h
    if c["kind"] == "serve":
        return params * (1 + c["batch"] * c["prompt"] / 4096)
    tokens = c["seq"] * c["micro_batch"] * (8 if c["precision"] == "fp32" else 1)
    return params * (20 + tokens / 256)


# ---------------------------------------------------------------------------------------------
# worker side (imports torch and transformers)

def build(c, dtype, attn, max_pos, use_cache):
    import torch
    import transformers as tf
    fam, layers, h, heads, kvh, ffn, vocab, tied, experts, k = MODELS[c["model"]]
    vocab = c.get("vocab", vocab)
    tied = c.get("tied", tied)
    kvh = c.get("kv_heads", kvh)
    common = dict(vocab_size=vocab, tie_word_embeddings=tied, use_cache=use_cache)
    if fam == "gpt2":
        cfg = tf.GPT2Config(n_layer=layers, n_embd=h, n_head=heads, n_inner=ffn,
                            n_positions=max_pos, **common)
    else:
        kw = dict(hidden_size=h, intermediate_size=ffn, num_hidden_layers=layers,
                  num_attention_heads=heads, num_key_value_heads=kvh,
                  max_position_embeddings=max(max_pos, 4096), **common)
        if fam == "llama":
            cfg = tf.LlamaConfig(**kw)
        elif fam == "qwen2":
            cfg = tf.Qwen2Config(**kw)
        else:
            cfg = tf.MixtralConfig(num_local_experts=experts, num_experts_per_tok=k, **kw)
    try:
        cfg._attn_implementation = attn
    except Exception:
        pass  # from_config's attn_implementation below sets it
    def make():
        try:
            return tf.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=dtype)
        except TypeError:
            return tf.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, torch_dtype=dtype)
    torch.manual_seed(0)
    try:  # initialised on the GPU: a CPU init of billions of parameters takes minutes
        with torch.device("cuda"):
            model = make()
        if any(p.device.type != "cuda" for p in model.parameters()):
            raise RuntimeError("parameters off the GPU")
    except Exception:
        model = None
        gc.collect()
        torch.cuda.empty_cache()
        model = make().to("cuda")
    info = {"family": fam, "layers": layers, "hidden": h, "heads": heads, "kv_heads": kvh,
            "ffn": ffn, "vocab": vocab, "tied": tied, "experts": experts, "experts_active": k,
            "params": sum(p.numel() for p in model.parameters()),
            "param_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
            "attn_impl": getattr(model.config, "_attn_implementation", None),
            "experts_impl": getattr(model.config, "_experts_implementation", None),
            "dropout": [getattr(cfg, a) for a in ("resid_pdrop", "embd_pdrop", "attn_pdrop",
                                                   "attention_dropout") if hasattr(cfg, a)]}
    return model, info


class SavedTensors:
    """Sums the distinct storages autograd saves, grouped by what they are."""

    def __init__(self, model, info):
        self.params = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self.param_shapes = {tuple(p.shape) for p in model.parameters()}
        self.seen = {}
        d = info["hidden"] // info["heads"]
        self.dims = {}  # last dimension -> name; later entries win where sizes coincide
        for size, name in ((3 * info["hidden"], "3hidden"), (2 * info["ffn"], "2ffn"),
                           (info["kv_heads"] * d, "kv_dim"), (d, "head_dim"), (info["ffn"], "ffn"),
                           (info["vocab"], "vocab"), (info["hidden"], "hidden")):
            self.dims[size] = name

    def pack(self, t):
        try:
            st = t.untyped_storage()
            ptr = st.data_ptr()
            if ptr in self.params or ptr in self.seen or t.device.type != "cuda":
                return t
            if tuple(t.shape) in self.param_shapes and t.dim() >= 1 and t.dtype != self.pdtype:
                what = "weight_cast"
            elif t.dim() == 0:
                what = "scalar"
            else:
                what = self.dims.get(t.shape[-1], "other")
            self.seen[ptr] = (st.nbytes(), str(t.dtype).replace("torch.", ""), what,
                              list(t.shape))
        except Exception:
            pass
        return t

    def summary(self):
        groups = {}
        for nbytes, dt, what, _ in self.seen.values():
            key = f"{what}:{dt}"
            groups[key] = groups.get(key, 0) + nbytes
        big = sorted(self.seen.values(), key=lambda v: -v[0])[:6]
        return {"total_bytes": sum(v[0] for v in self.seen.values()), "count": len(self.seen),
                "by_kind": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
                "largest": [[v[0], v[1], v[2], v[3]] for v in big]}


def train_case(c):
    import torch
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = torch.bfloat16 if c["precision"] == "bf16" else torch.float32
    model, info = build(c, dtype, c["attention"], max(c["seq"], 1024), use_cache=False)
    model.train()
    if c["checkpointing"] == "full":
        model.gradient_checkpointing_enable()
    if c["optimizer"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    else:
        fused = c["optimizer"] == "adamw-fused"
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused, foreach=None if fused else True)
    torch.manual_seed(1)
    x = torch.randint(0, info["vocab"], (c["micro_batch"], c["seq"]), device=dev)
    torch.cuda.synchronize()
    weights_alloc = torch.cuda.memory_allocated()
    amp = c["precision"] == "amp"
    phases = {"forward": [], "backward": [], "optimizer": []}
    after = {"forward": [], "backward": [], "optimizer": [], "zero_grad": []}
    reserved, times = 0, []
    saved = SavedTensors(model, info)
    saved.pdtype = dtype

    def mark(phase):  # the phase just run: its peak and what it left allocated
        nonlocal reserved
        torch.cuda.synchronize()
        if phase in phases:
            phases[phase].append(torch.cuda.max_memory_allocated())
        after[phase].append(torch.cuda.memory_allocated())
        reserved = max(reserved, torch.cuda.max_memory_reserved())
        torch.cuda.reset_peak_memory_stats()

    for step in range(c.get("steps", 3)):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda.reset_peak_memory_stats()
        hooks = (torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t) if step == 0
                 else None)
        if hooks:
            hooks.__enter__()
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = model(input_ids=x, labels=x).loss
        finally:
            if hooks:
                hooks.__exit__(None, None, None)
        mark("forward")
        loss.backward()
        mark("backward")
        del loss
        opt.step()
        mark("optimizer")
        opt.zero_grad(set_to_none=True)
        mark("zero_grad")
        times.append(time.perf_counter() - t0)
    peak_phase = max(phases, key=lambda k: max(phases[k]))
    r = dict(c)
    r.update(info)
    r.update({
        "weights_alloc_bytes": weights_alloc,
        "peak_bytes": max(max(v) for v in phases.values()),
        "peak_phase": peak_phase,
        "peak_step": phases[peak_phase].index(max(phases[peak_phase])),
        "phase_peaks": phases, "allocated_after": after,
        "max_reserved_bytes": reserved,
        "saved_tensors_first_forward": saved.summary(),
        "step_time_s": times,
    })
    del model, opt, x
    return r


def cache_bytes(cache):
    """Bytes of the key and value tensors a transformers cache holds."""
    seen, total = set(), 0

    def add(t):
        nonlocal total
        if hasattr(t, "untyped_storage") and t.untyped_storage().data_ptr() not in seen:
            seen.add(t.untyped_storage().data_ptr())
            total += t.numel() * t.element_size()
    for layer in getattr(cache, "layers", None) or []:
        for name in ("keys", "values"):
            if getattr(layer, name, None) is not None:
                add(getattr(layer, name))
    for name in ("key_cache", "value_cache"):
        for t in getattr(cache, name, None) or []:
            add(t)
    if total == 0 and isinstance(cache, (tuple, list)):
        for kv in cache:
            for t in kv:
                add(t)
    return total


def serve_case(c):
    import torch
    model, info = build(c, torch.bfloat16, c["attention"], c["prompt"] + c["new_tokens"] + 8,
                        use_cache=True)
    model.eval()
    torch.manual_seed(1)
    x = torch.randint(0, info["vocab"], (c["batch"], c["prompt"]), device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    r = dict(c)
    r.update(info)
    r["weights_alloc_bytes"] = base - x.numel() * x.element_size()
    with torch.no_grad():
        torch.cuda.reset_peak_memory_stats()
        try:
            out = model(input_ids=x, use_cache=True, logits_to_keep=1)
            r["logits_to_keep"] = 1
        except TypeError:  # a model without logits_to_keep: every position's logits
            torch.cuda.reset_peak_memory_stats()
            out = model(input_ids=x, use_cache=True)
            r["logits_to_keep"] = 0
        torch.cuda.synchronize()
        r["prefill_peak_bytes"] = torch.cuda.max_memory_allocated() - base
        r["logits_shape"] = list(out.logits.shape)
        r["logits_dtype"] = str(out.logits.dtype)
        held = torch.cuda.memory_allocated() - base
        r["after_prefill_bytes"] = held
        r["kv_cache_bytes_walked"] = cache_bytes(out.past_key_values)
        r["kv_cache_bytes"] = held - out.logits.numel() * out.logits.element_size()
        r["kv_per_token_bytes"] = r["kv_cache_bytes"] / (c["batch"] * c["prompt"])
        del out
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        seqs = model.generate(input_ids=x, max_new_tokens=c["new_tokens"], min_new_tokens=c["new_tokens"],
                              do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
        r["generate_s"] = time.perf_counter() - t0
        r["generate_peak_bytes"] = torch.cuda.max_memory_allocated() - base
        r["generated"] = list(seqs.shape)
        r["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
    del model, x
    return r


def worker(args):
    import torch
    import transformers
    cases = case_list(args.set)
    torch.empty(1, device="cuda")
    free, total = torch.cuda.mem_get_info()
    meta = {"torch": torch.__version__, "transformers": transformers.__version__,
            "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
            "context_bytes": total - free - torch.cuda.memory_reserved()}
    with open(args.out, "a") as f:
        for i in range(args.start, len(cases)):
            c = cases[i]
            t0 = time.time()
            before = torch.cuda.memory_allocated()
            try:
                r = train_case(c) if c["kind"] == "train" else serve_case(c)
            except torch.OutOfMemoryError as e:
                r = dict(c, error="OOM", detail=str(e).splitlines()[0][:300])
            except Exception as e:  # record and go on: one broken case must not stop the rest
                r = dict(c, error=type(e).__name__, detail=str(e)[:400])
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            r.update(index=i, case_s=round(time.time() - t0, 2), alloc_before_bytes=before, **meta)
            f.write(json.dumps(r) + "\n")
            f.flush()
            status = r.get("error") or f"{r.get('peak_bytes', r.get('prefill_peak_bytes', 0)) / 2**30:.2f} GiB"
            print(f"[{i}] {c['kind']} {c['model']} {c.get('precision', '')} {status} {r['case_s']}s",
                  flush=True)
    return 0


def done_indices(path):
    out = set()
    if os.path.exists(path):
        for line in open(path):
            try:
                out.add(json.loads(line)["index"])
            except (ValueError, KeyError):
                pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="all", choices=("all", "smoke", "holdout", "r2fit", "r2holdout"))
    ap.add_argument("--out", default="hf_plan_memory.jsonl")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--start", type=int, default=0)
    args = ap.parse_args()
    cases = case_list(args.set)
    if args.list:
        for i, c in enumerate(cases):
            print(i, json.dumps(c))
        print(f"{len(cases)} cases, {sum(c['kind'] == 'train' for c in cases)} training", file=sys.stderr)
        return 0
    if args.worker:
        return worker(args)
    start, deaths = 0, 0
    while start < len(cases):  # a worker that dies is restarted after the case it died in
        before = len(done_indices(args.out))
        rc = subprocess.call([sys.executable, __file__, "--worker", "--set", args.set, "--out", args.out,
                              "--start", str(start)])
        done = done_indices(args.out)
        deaths = deaths + 1 if len(done) == before else 0
        if deaths >= 2:
            print("the worker dies before its first case: stopping", file=sys.stderr)
            return 1
        nxt = next((i for i in range(start, len(cases)) if i not in done), len(cases))
        if nxt < len(cases):
            with open(args.out, "a") as f:
                f.write(json.dumps(dict(cases[nxt], index=nxt, error="worker died", rc=rc)) + "\n")
        start = nxt + 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
