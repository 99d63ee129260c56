/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cdi_host.h - the host's facts a CDI spec needs (view/cdi.h builds it):
 * each GPU's device minor and MIG capability minors, the nodes that exist,
 * the driver's libraries as the dynamic loader finds them (`ldconfig -p`),
 * its binaries on PATH; and writing a spec whole or not at all. Used by
 * `gpuctl cdi` and by the pool for its container jobs. Returns errors, never
 * prints.
 */
#ifndef GPUCTL_POOL_CDI_HOST_H
#define GPUCTL_POOL_CDI_HOST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "device/gpu.h"
#include "view/cdi.h"

/* What failed, for the caller's exit code. */
enum cdi_host_err { CDI_HOST_OK = 0, CDI_HOST_UNAVAILABLE, CDI_HOST_NOINPUT };

/* Fills h (dev_dir as given, default "/dev") and gpus[GPU_MAX_GPUS].
 * ldconfig_file: `ldconfig -p` output to read instead of running ldconfig
 * (tests), or NULL. UNAVAILABLE: no GPU's node, a required library or
 * nvidiactl missing on a real driver, ldconfig cannot run; NOINPUT: the
 * ldconfig file cannot be read. err says which. */
enum cdi_host_err cdi_host_gather(struct gpu_backend *be, bool simulated, const char *dev_dir,
				  const char *ldconfig_file, struct cdi_host *h, struct cdi_gpu *gpus,
				  unsigned *ngpus, char *err, size_t errlen);

/* Writes the spec to path whole or not at all (a temporary file renamed into
 * place: runtimes read the spec whenever a container starts), mode 0644.
 * 0, or -1 with err set. */
int cdi_spec_write(const json_t *spec, const char *path, char *err, size_t errlen);

#endif
