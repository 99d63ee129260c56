/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_entries.cuh - the module's entry points, one per gk_api slot, defined in
 * the .cu file of their subject and collected into the table by gk_api.cu.
 */
#ifndef GK_ENTRIES_CUH
#define GK_ENTRIES_CUH
#include "gpuctl_kernels.h"

int gk_device_count(int *count, char *err, size_t errlen);
int gk_device_info(int device, struct gk_device_info *out);
int gk_copy(const struct gk_copy_args *a, struct gk_result *r);
int gk_memory(const struct gk_mem_args *a, struct gk_result *r);
int gk_fma(const struct gk_fma_args *a, struct gk_result *r);
int gk_gemm(const struct gk_gemm_args *a, struct gk_result *r);
int gk_own_gemm(const struct gk_own_gemm_args *a, struct gk_result *r);
int gk_p2p(const struct gk_p2p_args *a, struct gk_result *r);
int gk_nccl(const struct gk_nccl_args *a, struct gk_result *r);
int gk_spmv(const struct gk_spmv_args *a, struct gk_result *r);
int gk_lj(const struct gk_lj_args *a, struct gk_result *r);
int gk_bvh(const struct gk_bvh_args *a, struct gk_result *r);
int gk_memtest(const struct gk_memtest_args *a, struct gk_result *r);
int gk_stress(const struct gk_stress_args *a, struct gk_result *r);
int gk_load_open(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen);
int gk_load_step(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r);
void gk_load_close(struct gk_load *l);
int gk_train(const struct gk_train_args *a, struct gk_result *r);

/* Entry wrapper: init the result, run body with a tracker, free, set rc. */
#define GK_ENTRY(r, body) do { gk_result_init(r); struct gk_track t_ = {}; \
	int rc_ = (body); gk_track_free(&t_); if (rc_ == GK_OK && (r)->rc) rc_ = (r)->rc; \
	(r)->rc = rc_; return rc_; } while (0)
#define GK_T (&t_)
#endif
