/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuctl_kernels.h - the C ABI of the CUDA kernels module (gpuctl_kernels.so).
 *
 * The module exports ONE symbol:
 *     const struct gk_api *gpuctl_kernels_api(void);
 * which returns a table of entry points. The host loader (src/kernels_host/kmod.c)
 * dlopens the module, calls it and refuses a table whose abi_version differs
 * from GK_ABI_VERSION (or whose struct_size is smaller than the caller's).
 *
 * Conventions, for every entry point:
 *  - Each takes a const args struct (first member: struct gk_common) and fills a
 *    result struct. It returns 0 (GK_OK) or a negative GK_E* code; on error the
 *    result's err[] holds one line "file.cu:123: cudaMalloc: out of memory".
 *    The module never prints, never exits, never reads the environment.
 *  - Timing: device events around the timed region, after common.warmup untimed
 *    runs; common.iters timed samples (clamped to [GK_MIN_SAMPLES, GK_MAX_SAMPLES]),
 *    each in samples_ms[]. Statistics (median, spread) are the host's job.
 *  - bytes / flops: what ONE sample counted (e.g. device copy: bytes read + bytes
 *    written). Rates are bytes / (sample_ms * 1e-3).
 *  - Verification: every result is checked against a reference before its time
 *    counts; verify.verified is true only when the check ran and passed. A failed
 *    check returns GK_EVERIFY with the samples still filled (so diag can report them).
 *  - Inputs are random and non-zero, drawn from common.seed (0: a fixed default).
 *  - Deadlines: common.deadline_ns is an absolute CLOCK_MONOTONIC time in ns
 *    (0: none). Long operations poll (cudaStreamQuery / cudaEventQuery) instead of
 *    blocking and return GK_ETIMEOUT once it is passed; the device may then still
 *    be busy: the caller should treat that GPU as hung.
 *  - aux[]: extra named figures an entry documents below (name, value, unit).
 *
 * Only C types here: this header is included by C11 host code and by the .cu files.
 */
#ifndef GPUCTL_KERNELS_H
#define GPUCTL_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_ABI_VERSION 2
#define GK_SYMBOL "gpuctl_kernels_api"
#define GK_MIN_SAMPLES 10
#define GK_MAX_SAMPLES 128
#define GK_ERR_LEN 256
#define GK_MAX_AUX 8
#define GK_MAX_DEVS 16

enum gk_rc {
	GK_OK = 0,
	GK_ECUDA = -1,        /* a CUDA call failed (message names it, with file:line) */
	GK_EUNSUPPORTED = -2, /* not on this GPU/arch, or a library missing (cuBLAS, NCCL) */
	GK_EARG = -3,         /* bad argument */
	GK_ETIMEOUT = -4,     /* deadline passed; the GPU may still be busy (hung) */
	GK_EVERIFY = -5,      /* ran, but the result did not match its reference */
	GK_ENOMEM = -6,       /* device or pinned host allocation failed */
	GK_ENODEV = -7,       /* no CUDA device / index out of range / no driver */
};

/* What every args struct starts with. */
struct gk_common {
	int device;            /* CUDA device ordinal (as CUDA_VISIBLE_DEVICES shows it) */
	int warmup;            /* untimed runs first (0: the entry's default, >= 1) */
	int iters;             /* timed samples (clamped to [GK_MIN_SAMPLES, GK_MAX_SAMPLES]) */
	uint64_t deadline_ns;  /* absolute CLOCK_MONOTONIC ns; 0 = none */
	uint64_t seed;         /* input RNG seed; 0 = fixed default */
};

struct gk_verify {
	bool verified;         /* the check ran and passed */
	double max_err;        /* max relative error (or abs, said by the entry) */
	uint64_t checked;      /* elements compared */
	uint64_t mismatches;   /* elements over tolerance (memtest: wrong words) */
	uint64_t nans;         /* NaN or Inf found in the output */
};

struct gk_aux { char name[24]; double value; char unit[12]; };

struct gk_result {
	int rc;                            /* same as the return value */
	int nsamples;
	double samples_ms[GK_MAX_SAMPLES]; /* one per timed sample, device-event time */
	double bytes;                      /* bytes counted per sample (0 if n/a) */
	double flops;                      /* floating-point ops per sample (0 if n/a) */
	struct gk_verify verify;
	int naux;
	struct gk_aux aux[GK_MAX_AUX];
	char err[GK_ERR_LEN];              /* one line on error, "" otherwise */
};

/* ---- device info -------------------------------------------------------- */
struct gk_device_info {
	char name[96];
	char pci_bus_id[32];
	int cc_major, cc_minor;
	int sm_count;
	int l2_bytes;
	int shared_per_block_optin_bytes;
	int mem_bus_width_bits;
	int clock_khz, mem_clock_khz;       /* as reported by the runtime (0 if unavailable) */
	uint64_t mem_total_bytes, mem_free_bytes;
	int runtime_version, driver_version; /* e.g. 13000 */
	char err[GK_ERR_LEN];
};

/* ---- copy: host<->device ------------------------------------------------ */
enum gk_copy_dir { GK_H2D = 0, GK_D2H = 1, GK_BIDIR = 2 /* H2D and D2H at once, two streams */ };
enum gk_host_mem { GK_PINNED = 0, GK_PAGEABLE = 1 };
enum gk_copy_engine { GK_CE = 0 /* cudaMemcpy(Async) */, GK_SM = 1 /* kernel reading/writing mapped pinned memory */ };
struct gk_copy_args {
	struct gk_common c;
	int dir;               /* enum gk_copy_dir */
	int host_mem;          /* enum gk_host_mem (GK_SM needs GK_PINNED) */
	int engine;            /* enum gk_copy_engine */
	bool async;            /* cudaMemcpyAsync on a stream vs cudaMemcpy */
	bool overlap;          /* run a compute kernel on a second stream during the copy */
	size_t bytes;          /* per direction */
};
/* result: bytes = bytes moved per sample (both directions for GK_BIDIR).
 * aux with overlap: "copy_alone_ms", "kernel_alone_ms", "both_ms", "overlap" (0..1:
 * share of the shorter operation hidden). Verified: device data compared to host. */

/* ---- memory: device bandwidth and latency ------------------------------ */
enum gk_mem_op { GK_MEM_READ = 0, GK_MEM_WRITE, GK_MEM_COPY, GK_MEM_TRIAD, GK_MEM_LATENCY };
struct gk_mem_args {
	struct gk_common c;
	int op;                /* enum gk_mem_op */
	size_t bytes;          /* per array (triad uses 3, copy 2); latency: working set */
	size_t stride;         /* latency: bytes between chased elements (0: 128) */
	bool runtime_copy;     /* COPY: time the runtime's cudaMemcpyAsync device-to-device
	                          (variant 27) instead of picking among our kernels */
};
/* result: bytes = read + written per sample (READ: n, WRITE: n, COPY: 2n, TRIAD: 3n).
 * WRITE/COPY/TRIAD first time several kernel variants (each checked) and keep the
 * fastest: aux "variant" (0..23 load/store kernels, 24..26 bulk copy, 27 the
 * runtime's copy), "variants_wrong". Every variant's output is checked the same way.
 * LATENCY: a random cycle over the working set at `stride`, one thread; each
 * sample starts at a fresh slot (evenly spaced along the cycle from a random
 * offset, consecutive samples about half the cycle apart) and makes as many
 * dependent loads as the L2 has lines (at least 65536), plain loads (L1 and L2
 * cache them). aux
 * "latency_ns" (median sample, per load), "working_set", "loads" (per sample),
 * "stride"; samples are whole chases. */

/* ---- FMA peak ------------------------------------------------------------ */
enum gk_prec {
	GK_FP64 = 0, GK_FP32, GK_TF32, GK_FP16, GK_BF16, GK_FP8_E4M3,
	GK_FP16X2, GK_BF16X2, /* packed: FMA peak only */
	GK_PREC_COUNT
};
struct gk_fma_args {
	struct gk_common c;
	int prec;              /* GK_FP64, GK_FP32, GK_FP16X2, GK_BF16X2 */
};
/* result: flops = 2 per FMA lane. Verified against the closed form of the recurrence. */

/* ---- GEMM through cuBLAS / cuBLASLt (C = A^T B, "TN", column-major) ------ */
enum gk_blas { GK_CUBLAS = 0, GK_CUBLASLT = 1 };
struct gk_gemm_args {
	struct gk_common c;
	int lib;               /* enum gk_blas (FP8 needs GK_CUBLASLT and sm_89+) */
	int prec;              /* GK_FP64..GK_FP8_E4M3 (TF32: FP32 data, TF32 compute) */
	int m, n, k;
	bool nn;               /* C = A B, both untransposed (what a row-major framework's
	                          A @ B becomes in cuBLAS); false: TN. FP8 is TN only. */
};
/* result: flops = 2mnk. Verified: sampled entries against an FP64 dot product of
 * the (rounded) inputs, tolerance by precision. aux "max_rel_err", "algos_tried".
 * cuBLASLt: a 64 MiB workspace; the heuristic's first 8 algorithms for that
 * workspace are each timed (3 runs) and the fastest is kept: aux "algo_rank"
 * (its place in the heuristic's list, 0 = its first choice), "algo_id",
 * "algo_tile", "algo_stages" (cublasLtMatmulAlgoConfigAttributes_t values). */

/* ---- our own FP32 GEMM (C = A B, row-major) ----------------------------- */
enum gk_own_gemm { GK_GEMM_NAIVE = 0, GK_GEMM_TILED = 1, GK_GEMM_REGBLOCK = 2 };
struct gk_own_gemm_args {
	struct gk_common c;
	int variant;           /* enum gk_own_gemm */
	int m, n, k;           /* any sizes (>0) */
};
/* result: flops = 2mnk. Verified against cuBLAS FP32 (no TF32) when it loads, else
 * against sampled FP64 dot products. aux "max_rel_err", "vs_cublas" (1/0). */

/* ---- P2P between two GPUs ------------------------------------------------ */
enum gk_p2p_mode { GK_P2P_CE = 0, GK_P2P_SM = 1, GK_P2P_HOST_STAGED = 2, GK_P2P_LATENCY = 3 };
struct gk_p2p_args {
	struct gk_common c;    /* c.device = source GPU */
	int peer;              /* destination GPU */
	int mode;              /* enum gk_p2p_mode */
	bool bidirectional;    /* both directions at once */
	size_t bytes;          /* per direction */
};
/* result: bytes = moved per sample (both directions if bidirectional).
 * aux "peer_access" (1/0); CE: "streams" (the copy is cut into 1, 2 or 4 pieces on as
 * many streams, whichever moved 64 MiB+ fastest before the samples). LATENCY: aux "latency_ns" (SM pointer chase in peer memory).
 * GK_EUNSUPPORTED when peer access is impossible for CE/SM/LATENCY. */

/* ---- NCCL collectives (single process, one thread, group over devices) --- */
enum gk_coll { GK_ALL_REDUCE = 0, GK_ALL_GATHER, GK_REDUCE_SCATTER, GK_BROADCAST, GK_ALL_TO_ALL };
struct gk_nccl_args {
	struct gk_common c;    /* c.device ignored */
	int op;                /* enum gk_coll */
	int ndevs;
	int devs[GK_MAX_DEVS];
	size_t bytes;          /* nccl-tests' "size": the largest buffer (float32, sum) */
};
/* result: bytes = size as nccl-tests counts it; samples are the slowest rank.
 * algbw = bytes / time; busbw by the host (nccl-tests factors). aux "nccl_version". */

/* ---- application proxies ------------------------------------------------
 * The caller owns all host buffers: it makes the inputs (src/kernels_host/cpu_ref.h
 * has generators and multi-threaded CPU references) and compares the output. */
struct gk_spmv_args {
	struct gk_common c;
	int rows, cols;
	int64_t nnz;
	const int64_t *row_ptr; /* rows + 1 */
	const int *col_idx;     /* nnz */
	const double *vals;     /* nnz */
	const double *x;        /* cols */
	double *y;              /* out: rows */
};
/* flops = 2 nnz, bytes = CSR + x + y traffic (minimum). */
struct gk_lj_args {
	struct gk_common c;
	int natoms;
	const float *pos;       /* 3 * natoms, in [0, box) */
	float box;              /* periodic cubic box edge */
	float cutoff, epsilon, sigma;
	float *force;           /* out: 3 * natoms */
	double *energy;         /* out: total potential energy */
};
/* flops = 20 per pair inside the cut-off counted on the device (aux "pairs"). */
struct gk_bvh_node {        /* 32 bytes */
	float lo[3]; int left_or_first; /* inner: left child; its right child is left + 1 */
	float hi[3]; int count;         /* leaf: count > 0 triangles from left_or_first; inner: 0 */
};
struct gk_bvh_args {
	struct gk_common c;
	int nnodes, ntris, nrays;
	const struct gk_bvh_node *nodes; /* node 0 is the root */
	const float *tris;      /* 9 floats per triangle: v0, v1, v2 */
	const float *rays;      /* 6 floats per ray: origin, direction */
	float *hit_t;           /* out: nrays, INFINITY for a miss */
	int *hit_tri;           /* out: nrays, -1 for a miss */
};
/* aux "rays_per_s" of the median sample. */

/* ---- diag: memory test --------------------------------------------------- */
enum gk_memtest_pattern { GK_MT_WALKING_ONES = 0, GK_MT_ADDRESS = 1, GK_MT_RANDOM = 2 };
struct gk_memtest_args {
	struct gk_common c;    /* iters: passes (>= 1; not clamped) */
	int pattern;           /* enum gk_memtest_pattern */
	double fraction;       /* of free memory to test, (0, 0.95] */
	uint64_t flip_bits;    /* TEST ONLY: bits flipped in the buffer after writing, so a FAIL shows */
};
/* result: bytes = tested bytes per pass (written and read back); verify.mismatches =
 * wrong 32-bit words; verify.checked = words checked; aux "first_bad_offset" (-1: none). */

/* ---- diag / bench: verified GEMM stress and sustained load --------------- */
struct gk_stress_args {
	struct gk_common c;    /* iters ignored */
	int prec;              /* GK_FP32, GK_TF32, GK_BF16, GK_FP16, GK_FP8_E4M3, GK_FP64 */
	int n;                 /* square size (0: 8192) */
	double seconds;        /* run for this long (deadline still applies) */
};
/* Repeats C = A^T B through cuBLASLt; every result is compared with the first one
 * (which is checked against sampled FP64 dot products). result: samples_ms =
 * per-GEMM times spread over the run (at most GK_MAX_SAMPLES, evenly picked),
 * flops per GEMM, verify.mismatches = miscompares, verify.nans. aux "gemms". */

/* Sustained load: state kept between steps so the host can sample telemetry
 * between them (clocks, power, temperature each second). */
struct gk_load;
struct gk_load_args {
	struct gk_common c;
	int prec;              /* as for stress */
	int n;                 /* square size (0: 8192) */
};

/* ---- training step: GPT-2 (kernels/gk_train*.cu; docs/bench.md) ----------
 * Decoder-only transformer as GPT-2: learned positions, pre-LayerNorm blocks,
 * tanh GELU, tied input/output embeddings (wte), plain causal attention
 * (Q K^T and att V as cuBLASLt batched GEMMs, a softmax kernel between them),
 * cross-entropy, AdamW. Parameters are 16 tensors in the order of
 * gk_train_param_sizes (below); wte has vocab_pad rows, the rows past vocab
 * never see a gradient. */
struct gk_train_cfg {
	int vocab;             /* V: token ids are [0, V) (GPT-2: 50257) */
	int vocab_pad;         /* rows of wte, >= vocab (GPT-2 runs: 50304, a multiple of 128) */
	int max_seq;           /* rows of wpe (1024) */
	int layers, heads, channels;
};
#define GK_TRAIN_NTENSORS 16
/* Element counts of the 16 parameter tensors: wte, wpe, ln1w, ln1b, qkvw,
 * qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb
 * (each per-layer tensor holds all layers); returns their sum. */
static inline size_t gk_train_param_sizes(const struct gk_train_cfg *m, size_t sz[GK_TRAIN_NTENSORS])
{
	size_t V = (size_t)m->vocab_pad, C = (size_t)m->channels, L = (size_t)m->layers, T = (size_t)m->max_seq;
	size_t s[GK_TRAIN_NTENSORS] = { V * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C,
					L * C, L * C, L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C };
	size_t n = 0;
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) { sz[i] = s[i]; n += s[i]; }
	return n;
}
struct gk_train_args {
	struct gk_common c;    /* warmup: untimed steps first (0: 3); iters: timed steps [10, 128] */
	struct gk_train_cfg m;
	int prec;              /* GK_FP32 (TF32 off), GK_TF32, or GK_BF16: BF16 weights copy and
	                          activations, FP32 accumulation, FP32 master weights, gradients
	                          and AdamW state */
	int batch, seq;        /* micro-batch and sequence length (seq <= max_seq) */
	int grad_accum;        /* micro-batches per optimizer step (0: 1) */
	float lr, beta1, beta2, eps, weight_decay; /* AdamW; decay on the 2-D weights only */
	const float *params_in; /* host, optional: initial parameters (sum of gk_train_param_sizes
	                           floats); NULL: GPT-2 init (N(0, 0.02), projections / sqrt(2L),
	                           LayerNorm 1 and 0, biases 0) from c.seed */
	const int *tokens_in;  /* host, optional: grad_accum * batch * (seq + 1) token ids, one row
	                          of seq + 1 per sequence (inputs, then shifted targets); NULL:
	                          uniform synthetic tokens from c.seed. The same batch every step. */
	float *grads_out;      /* host, optional: run ONE forward and backward (all micro-batches),
	                          no update, no timing: the gradients of the mean loss, same layout
	                          as params_in, and the loss in losses_out[0] */
	float *losses_out;     /* host, optional: the mean loss of every step run (warmup + timed) */
	int ndevs;             /* 0: c.device alone. >= 1: data parallel, one replica on each of
	                          devs[0..ndevs) (CUDA ordinals, one thread each), each on its own
	                          synthetic batch, gradients averaged by NCCL all-reduce in buckets (a
	                          layer each, launched as its backward ends, on a second stream);
	                          1 runs that machinery over one GPU (the scaling baseline) */
	int devs[GK_MAX_DEVS];
};
/* result: samples_ms = whole optimizer steps (forward, backward, AdamW; the first
 * replica's, data parallel);
 * flops per step = (6 n_params + 12 layers channels seq) tokens, n_params
 * without the padding rows (the counting of the PyTorch anchors in issue 16).
 * verify: NaN/Inf losses counted in verify.nans; verified is left false: the
 * host judges the losses (src/kernels_host/train_ref.c). aux "mem_gib" (device
 * memory the run held, from cudaMemGetInfo), "model_gib" (what it allocated
 * itself), "tokens" (per step, all replicas), "params" (n_params); data parallel:
 * "replicas", and GK_EVERIFY when the replicas' weights differ after the run
 * (a checksum of every master weight's bits). */

struct gk_api {
	uint32_t abi_version;  /* GK_ABI_VERSION */
	uint32_t struct_size;  /* sizeof(struct gk_api) as the module was built */
	const char *build_info; /* "gpuctl kernels 1, CUDA 13.0, sm_80 sm_90" */

	int (*device_count)(int *count, char *err, size_t errlen);
	int (*device_info)(int device, struct gk_device_info *out);

	int (*copy)(const struct gk_copy_args *a, struct gk_result *r);
	int (*memory)(const struct gk_mem_args *a, struct gk_result *r);
	int (*fma)(const struct gk_fma_args *a, struct gk_result *r);
	int (*gemm)(const struct gk_gemm_args *a, struct gk_result *r);
	int (*own_gemm)(const struct gk_own_gemm_args *a, struct gk_result *r);
	int (*p2p)(const struct gk_p2p_args *a, struct gk_result *r);
	int (*nccl)(const struct gk_nccl_args *a, struct gk_result *r);

	int (*spmv)(const struct gk_spmv_args *a, struct gk_result *r);
	int (*lj)(const struct gk_lj_args *a, struct gk_result *r);
	int (*bvh)(const struct gk_bvh_args *a, struct gk_result *r);

	int (*memtest)(const struct gk_memtest_args *a, struct gk_result *r);
	int (*stress)(const struct gk_stress_args *a, struct gk_result *r);

	/* load_open allocates and checks once; load_step runs GEMMs for `seconds`
	 * (samples as for stress); load_close frees. */
	int (*load_open)(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen);
	int (*load_step)(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r);
	void (*load_close)(struct gk_load *l);

	int (*train)(const struct gk_train_args *a, struct gk_result *r);
};

const struct gk_api *gpuctl_kernels_api(void);
typedef const struct gk_api *(*gk_api_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
