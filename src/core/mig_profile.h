/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mig_profile.h - the size of a MIG profile name ("1g.18gb", "1g.24gb+gfx"),
 * one constant for every struct that holds one: the catalog, the device
 * layer, the simulator, the planner, the pool's protocol and scheduler.
 * Copies between them then never truncate.
 */
#ifndef GPUCTL_MIG_PROFILE_H
#define GPUCTL_MIG_PROFILE_H

#define MIG_PROFILE_LEN 32 /* bytes, the terminating NUL included */

#endif
