/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_faultfile.c - libFuzzer target for the simulated server's run-time
 * fault file (--sim NAME,faults=FILE), the path a file takes when the
 * simulator re-reads it: parsed, checked against the server's GPUs and what
 * they can show, applied (sim_fault_file_apply). Any input is applied or
 * refused with a one-line message, never a crash; applied faults are then run
 * through the model at a few instants. The input's length picks the server:
 * an NVLink H200 server that remaps rows, or PCIe L40S cards. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/sim_internal.h"

static struct sim_state *open_server(struct gpu_backend *be, const char *name, unsigned *nfaults_at_open)
{
	struct gpu_err err = { "" };
	char arg[1024];
	const char *dir = getenv("GPUCTL_DATA_DIR"); /* else where the build put the data */
	snprintf(arg, sizeof(arg), "%s%s%s", name, dir ? ",data_dir=" : "", dir ? dir : "");
	if (gpu_backend_open(be, "sim", arg, &err) != GPU_OK)
		abort(); /* a shipped server must open */
	struct sim_state *st = be->priv;
	snprintf(st->fault_path, sizeof(st->fault_path), "fuzz-faults.json");
	*nfaults_at_open = st->nfaults;
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gpu_backend be[2];
	static struct sim_state *st[2];
	static unsigned at_open[2];
	if (!st[0]) {
		st[0] = open_server(&be[0], "h200x8", &at_open[0]);
		st[1] = open_server(&be[1], "l40sx4", &at_open[1]);
	}
	struct sim_state *s = st[size & 1];
	struct gpu_err err = { "" };
	if (sim_fault_file_apply(s, (const char *)data, size, 0, &err) != 0) {
		if (!err.msg[0] || memchr(err.msg, '\n', strnlen(err.msg, sizeof(err.msg))))
			abort(); /* refused: with one line saying why */
	} else {
		static const uint64_t times[] = { 0, 1000000000ull, 3600ull * 1000000000ull };
		for (size_t t = 0; t < sizeof(times) / sizeof(times[0]); t++)
			for (unsigned g = 0; g < s->ngpu; g++) {
				static struct gpu_sample smp;
				static struct gpu_process p[GPU_MAX_PROCS];
				sim_model_sample(s, g, GPU_GRP_ALL, times[t], &smp);
				sim_model_processes(s, g, times[t], p, GPU_MAX_PROCS);
				if (smp.mem_used_bytes.v > smp.mem_total_bytes.v)
					abort();
			}
	}
	s->nfaults = at_open[size & 1]; /* the next input starts from the server's own faults */
	return 0;
}
