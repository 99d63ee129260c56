/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_nccl.cuh - NCCL's entry points as gk_nccl.cu loads them (dlopen of
 * libnccl.so.2), for other users in the module: the training step's data
 * parallelism (gk_train.cu).
 */
#ifndef GK_NCCL_CUH
#define GK_NCCL_CUH

#include <nccl.h>

#include "gk_common.cuh"

struct gk_nccl_api {
	ncclResult_t (*init_all)(ncclComm_t *, int, const int *);
	ncclResult_t (*destroy)(ncclComm_t);
	const char *(*errstr)(ncclResult_t);
	ncclResult_t (*group_start)(void);
	ncclResult_t (*group_end)(void);
	ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
	int version;
};

/* Loads NCCL once (NVLink multicast off unless the environment says
 * otherwise); GK_EUNSUPPORTED with the reason when it is missing. */
int gk_nccl_api_get(struct gk_result *r, struct gk_nccl_api *out);

#endif
