/* sim.c - placeholder until the sim backend lands (being written now). */
#include "gpu.h"
static int open_sim(struct gpu_backend *be, const char *arg, struct gpu_err *err)
{
	(void)be; (void)arg;
	gpu_err_set(err, "the sim backend is not built yet");
	return GPU_EUNSUPPORTED;
}
static void close_sim(struct gpu_backend *be) { (void)be; }
const struct gpu_backend_ops gpu_backend_sim = { .name = "sim", .open = open_sim, .close = close_sim };
