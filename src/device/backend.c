/* SPDX-License-Identifier: Apache-2.0 */
/* backend.c - the list of backends and the helpers every backend shares. */
#include "gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* One static table rather than constructors: static libraries drop those. */
static const struct gpu_backend_ops *const available_backends[] = {
	&gpu_backend_nvml,
	&gpu_backend_sim,
};

void gpu_err_set(struct gpu_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

int gpu_backend_open(struct gpu_backend *be, const char *which, const char *arg, struct gpu_err *err)
{
	for (size_t i = 0; i < sizeof(available_backends) / sizeof(available_backends[0]); i++) {
		const struct gpu_backend_ops *ops = available_backends[i];
		if (strcmp(ops->name, which) != 0)
			continue;
		be->ops = ops;
		be->priv = NULL;
		be->gpu_count = 0;
		int rc = ops->open(be, arg, err);
		if (rc != GPU_OK)
			be->ops = NULL;
		return rc;
	}
	gpu_err_set(err, "unknown backend '%s'", which);
	return GPU_EINVAL;
}

void gpu_backend_close(struct gpu_backend *be)
{
	if (be && be->ops) {
		be->ops->close(be);
		be->ops = NULL;
	}
}

uint64_t gpu_backend_now_ns(const struct gpu_backend *be)
{
	if (be && be->now_ns)
		return be->now_ns(be->clock_arg);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *gpu_link_kind_name(enum gpu_link_kind k)
{
	switch (k) {
	case LINK_SELF: return "X";
	case LINK_NVLINK: return "NV";
	case LINK_PIX: return "PIX";
	case LINK_PXB: return "PXB";
	case LINK_PHB: return "PHB";
	case LINK_NODE: return "NODE";
	case LINK_SYS: return "SYS";
	default: return "?";
	}
}

const char *val_status_name(enum val_status st)
{
	switch (st) {
	case VAL_OK: return "ok";
	case VAL_UNSUPPORTED: return "not supported";
	case VAL_ERROR: return "error";
	default: return "unknown";
	}
}
