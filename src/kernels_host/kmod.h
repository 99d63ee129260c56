/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kmod.h - find, load and check the CUDA kernels module (gpuctl_kernels.so).
 *
 * The main binary links no CUDA library: the module is dlopen'ed at run time
 * and its one symbol, gpuctl_kernels_api(), returns the entry-point table of
 * kernels/gpuctl_kernels.h. Search order (first that exists wins):
 *   1. the explicit path argument (a --kernels option), if not NULL/empty
 *   2. env_override (the caller reads GPUCTL_KERNELS and passes it in)
 *   3. next to the binary ($ORIGIN, the folder of /proc/self/exe): <exe dir>/,
 *      then <exe dir>/../lib/gpuctl/ and <exe dir>/../<libdir>/gpuctl/, so that
 *      a copied or unpacked gpuctl finds the module that came with it
 *   4. <GPUCTL_BUILD_DIR>/kernels/gpuctl_kernels.so   (running from the build tree)
 *   5. <GPUCTL_LIBEXEC_DIR>/gpuctl_kernels.so         (installed)
 * The module links the CUDA runtime statically, which finds the driver only at
 * its first call; kmod_open checks that libcuda.so.1 can be loaded first so a
 * machine without a driver gets a clear message at once.
 * Errors are one line, e.g.
 *   "gpuctl was built without CUDA (no kernels module; rebuild with -DGPUCTL_WITH_CUDA=ON)"
 *   "cannot load '/x/gpuctl_kernels.so': libcuda.so.1 not found (no NVIDIA driver)"
 */
#ifndef GPUCTL_KMOD_H
#define GPUCTL_KMOD_H

#include <stdbool.h>
#include <stddef.h>

#include "gpuctl_kernels.h" /* kernels/, on the path of this layer and those above */

enum kmod_rc {
	KMOD_OK = 0,
	KMOD_ENOMODULE = -1, /* no module file anywhere (built without CUDA, or not installed) */
	KMOD_ENODRIVER = -2, /* module found but libcuda.so.1 is missing */
	KMOD_ELOAD = -3,     /* dlopen failed for another reason, or the symbol is missing */
	KMOD_EABI = -4,      /* ABI version or table size mismatch */
};

struct kmod {
	void *handle;              /* dlopen handle */
	const struct gk_api *api;  /* the module's table; valid while loaded */
	char path[4096];           /* the file that was loaded */
};

/* Where to look, overridable for tests (NULL fields: the compiled-in defaults). */
struct kmod_search {
	const char *explicit_path;
	const char *env_override;
	const char *build_dir;     /* NULL: GPUCTL_BUILD_DIR */
	const char *libexec_dir;   /* NULL: GPUCTL_LIBEXEC_DIR */
	const char *exe_dir;       /* NULL: the folder of /proc/self/exe; "": none */
	int built_with_cuda;       /* -1: as compiled (GPUCTL_WITH_CUDA_MODULE), 0/1 forced (tests) */
	const char *driver_lib;    /* NULL: "libcuda.so.1"; checked before the module is loaded */
};

/* Load the module. Returns KMOD_OK or a KMOD_E* code with a one-line message in err. */
int kmod_open(struct kmod *km, const struct kmod_search *s, char *err, size_t errlen);

/* Shorthand: kmod_open with an explicit path and env override, compiled-in defaults. */
int kmod_open_default(struct kmod *km, const char *explicit_path, const char *env_override,
		      char *err, size_t errlen);

void kmod_close(struct kmod *km);

/* Names of the module's enums ("fp32", "all_reduce", ...), and their inverse
 * (-1 when unknown). Stable: used in --json output and on the command line. */
const char *kmod_prec_name(int prec);
int kmod_prec_parse(const char *s);
const char *kmod_coll_name(int op);
int kmod_coll_parse(const char *s);
const char *kmod_mem_op_name(int op);
const char *kmod_rc_name(int rc);

/* nccl-tests' bus-bandwidth factor for a collective over nranks GPUs
 * (busbw = algbw * factor): all_reduce 2(n-1)/n; all_gather, reduce_scatter,
 * all_to_all (n-1)/n; broadcast 1. Returns 0 for an unknown op or nranks < 1. */
double kmod_busbw_factor(int op, int nranks);

#endif
