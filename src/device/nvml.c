/* nvml.c - placeholder until the nvml backend lands (being written now). */
#include "gpu.h"
static int open_nvml(struct gpu_backend *be, const char *arg, struct gpu_err *err)
{
	(void)be; (void)arg;
	gpu_err_set(err, "the nvml backend is not built yet");
	return GPU_EUNSUPPORTED;
}
static void close_nvml(struct gpu_backend *be) { (void)be; }
const struct gpu_backend_ops gpu_backend_nvml = { .name = "nvml", .open = open_nvml, .close = close_nvml };
