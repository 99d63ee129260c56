/* SPDX-License-Identifier: Apache-2.0 */
/*
 * knames.c - stable names of the kernels module's enums, and nccl-tests'
 * bus-bandwidth factors. Pure functions (declared in kmod.h).
 */
#include "kernels_host/kguard.h"
#include "kernels_host/kmod.h"

#include <string.h>

static const char *const prec_names[GK_PREC_COUNT] = {
	[GK_FP64] = "fp64", [GK_FP32] = "fp32", [GK_TF32] = "tf32", [GK_FP16] = "fp16",
	[GK_BF16] = "bf16", [GK_FP8_E4M3] = "fp8_e4m3", [GK_FP16X2] = "fp16x2", [GK_BF16X2] = "bf16x2",
};

static const char *const coll_names[] = {
	[GK_ALL_REDUCE] = "all_reduce", [GK_ALL_GATHER] = "all_gather",
	[GK_REDUCE_SCATTER] = "reduce_scatter", [GK_BROADCAST] = "broadcast",
	[GK_ALL_TO_ALL] = "all_to_all",
};

static const char *const mem_op_names[] = {
	[GK_MEM_READ] = "read", [GK_MEM_WRITE] = "write", [GK_MEM_COPY] = "copy",
	[GK_MEM_TRIAD] = "triad", [GK_MEM_LATENCY] = "latency",
};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int lookup(const char *const *names, int n, const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *kmod_prec_name(int p) { return p >= 0 && p < GK_PREC_COUNT ? prec_names[p] : "unknown"; }
int kmod_prec_parse(const char *s) { return lookup(prec_names, GK_PREC_COUNT, s); }
const char *kmod_coll_name(int op) { return op >= 0 && op < NELEM(coll_names) ? coll_names[op] : "unknown"; }
int kmod_coll_parse(const char *s) { return lookup(coll_names, NELEM(coll_names), s); }
const char *kmod_mem_op_name(int op) { return op >= 0 && op < NELEM(mem_op_names) ? mem_op_names[op] : "unknown"; }

const char *kmod_rc_name(int rc)
{
	switch (rc) {
	case GK_OK: return "ok";
	case GK_ECUDA: return "cuda error";
	case GK_EUNSUPPORTED: return "not supported";
	case GK_EARG: return "bad argument";
	case GK_ETIMEOUT: return "timed out";
	case GK_EVERIFY: return "verification failed";
	case GK_ENOMEM: return "out of memory";
	case GK_ENODEV: return "no device";
	case KGUARD_EHUNG: return "GPU hung";
	default: return "unknown error";
	}
}

double kmod_busbw_factor(int op, int nranks)
{
	if (nranks < 1)
		return 0;
	double n = nranks;
	switch (op) {
	case GK_ALL_REDUCE: return 2.0 * (n - 1) / n;
	case GK_ALL_GATHER:
	case GK_REDUCE_SCATTER:
	case GK_ALL_TO_ALL: return (n - 1) / n;
	case GK_BROADCAST: return 1.0;
	default: return 0;
	}
}
