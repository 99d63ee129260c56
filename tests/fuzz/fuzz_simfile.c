/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_simfile.c - libFuzzer target for the simulated-server file parser
 * (sim_server_parse) and the fault-list parser (sim_faults_parse). Any input
 * gives a server or a one-line error, never a crash; a server that resolves
 * against the catalog is then run through the model at a few instants, so
 * odd schedules, topologies and MIG layouts cannot crash the backend either. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"
#include "device/sim_internal.h"

static void one_line(const struct gpu_err *err)
{
	if (memchr(err->msg, '\n', strnlen(err->msg, sizeof(err->msg))))
		abort();
}

static void run_model(struct sim_server *srv, const struct catalog *cat)
{
	static struct sim_state st;
	memset(&st, 0, sizeof(st));
	st.srv = srv;
	st.cat = *cat; /* borrowed: not freed here */
	st.seed = srv->seed;
	struct gpu_err err = { "" };
	if (sim_state_build(&st, &err) != 0) {
		one_line(&err);
		return;
	}
	static const uint64_t times[] = { 0, 1000000000ull, 3600ull * 1000000000ull, 86400ull * 365 * 1000000000ull };
	struct gpu_system sys;
	sim_model_system(&st, &sys);
	for (size_t t = 0; t < sizeof(times) / sizeof(times[0]); t++)
		for (unsigned g = 0; g < st.ngpu; g++) {
			static struct gpu_static gs;
			static struct gpu_sample s;
			static struct gpu_process p[GPU_MAX_PROCS];
			static struct gpu_mig m[GPU_MAX_MIG];
			struct gpu_link l;
			sim_model_static(&st, g, times[t], &gs);
			memset(&s, 0, sizeof(s));
			sim_model_sample(&st, g, GPU_GRP_ALL, times[t], &s);
			sim_model_processes(&st, g, times[t], p, GPU_MAX_PROCS);
			sim_model_mig(&st, g, times[t], m, GPU_MAX_MIG);
			sim_model_link(&st, g, (g + 1) % st.ngpu, times[t], &l);
			if (s.mem_used_bytes.v > s.mem_total_bytes.v)
				abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct catalog cat;
	static int have_cat = -1;
	if (have_cat < 0) {
		char msg[256];
		have_cat = catalog_load_default(&cat, msg, sizeof(msg)) == 0;
	}
	struct sim_server *srv = NULL;
	struct gpu_err err = { "" };
	if (sim_server_parse((const char *)data, size, "fuzz.json", &srv, &err) == 0) {
		if (have_cat && sim_server_resolve(srv, &cat, "fuzz.json", &err) == 0)
			run_model(srv, &cat);
		else
			one_line(&err);
		free(srv);
	} else {
		one_line(&err);
	}
	struct sim_fault faults[SIM_MAX_FAULTS];
	if (sim_faults_parse((const char *)data, size, "fuzz.json", faults, SIM_MAX_FAULTS, &err) < 0)
		one_line(&err);
	return 0;
}
