/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kguard.h - the one guarded way into the kernels module (bench and diag).
 *
 * The module polls its deadline (common.deadline_ns) and returns GK_ETIMEOUT,
 * but a GPU that hangs inside a CUDA call never comes back to poll. A guarded
 * table runs each call in a thread of its own under a watchdog: when the call
 * has not returned grace_s after its deadline, the caller gets KGUARD_EHUNG
 * ("GPU hung") and goes on; the thread is left behind (a hung CUDA call cannot
 * be cancelled) with its own copies of the arguments and the result, so it
 * never writes into the caller's memory after the caller gave up on it.
 *
 * Guarded: device_count, device_info (a fixed KGUARD_INFO_S budget: they take
 * no deadline), copy, memory, fma, gemm, own_gemm, p2p, nccl, memtest, stress,
 * load_open, load_step. Called directly (their arguments point into the
 * caller's memory, which a left-behind thread could write after the caller
 * freed it; or, for load_close, nothing left to wait for): spmv, lj, bvh,
 * train, load_close; so is any call with no deadline (deadline_ns 0).
 *
 * The entry points carry no context, so there is one guarded table per
 * process: kguard_wrap sets what it calls (the caller wraps once, after
 * loading the module). While kguard_hung_calls() is not 0 the module must
 * stay loaded: a left-behind thread still runs in it.
 */
#ifndef GPUCTL_KGUARD_H
#define GPUCTL_KGUARD_H

#include "gpuctl_kernels.h" /* kernels/, on the path of this layer and those above */

/* Host-side code, beside the module's GK_E*: no answer grace_s past the deadline. */
#define KGUARD_EHUNG (-100)
/* How long device_count and device_info may take (they have no deadline). */
#define KGUARD_INFO_S 60.0
/* grace_s 0 means this. */
#define KGUARD_DEFAULT_GRACE_S 20.0

/* Returns the guarded table over real (which must stay valid while it is used). */
const struct gk_api *kguard_wrap(const struct gk_api *real, double grace_s);
/* Guarded calls that were given up on and have not returned yet. */
unsigned kguard_hung_calls(void);

#endif
