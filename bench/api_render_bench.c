/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_render_bench.c - what /api/v1/gpus costs the agent to render
 * (api_render_gpus) and how large it is, at N GPUs of a synthetic H200
 * snapshot: every field of the table present, 18 NVLinks and one process per
 * GPU. Median and min of 51 renders, wall clock. Not in CI. To compare with
 * another api.c (e.g. git show REV:src/agent/api.c > /tmp/api_old.c), link
 * that file first: the library's api.o is then not pulled in.
 *
 *   cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF
 *   cmake --build build-rel -j2 --target gpuctl_layer_agent
 *   L=build-rel/libgpuctl_layer_; cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -Isrc/agent -Ikernels \
 *     bench/api_render_bench.c [/tmp/api_old.c] ${L}agent.a ${L}pool.a ${L}slurm.a ${L}bench.a \
 *     ${L}health.a ${L}kernels_host.a ${L}plan.a ${L}view.a ${L}sampler.a ${L}device.a ${L}core.a \
 *     $(pkg-config --libs jansson libmicrohttpd sqlite3 zlib) -lpthread -ldl -lm -o /tmp/api_render_bench
 *   /tmp/api_render_bench [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/api.h"
#include "bench_clock.h"

#define RUNS 51

static void fill(struct gpu_view *v, unsigned i, uint64_t taken_ns)
{
	v->up = true;
	v->last_ok_ns = taken_ns - 1000;
	v->st.index = i;
	snprintf(v->st.name.s, sizeof(v->st.name.s), "NVIDIA H200");
	v->st.name.st = VAL_OK;
	snprintf(v->st.uuid.s, sizeof(v->st.uuid.s), "GPU-f768064f-9585-47ad-a39e-ed24c2c06%03u", i);
	v->st.uuid.st = VAL_OK;
	snprintf(v->st.pci_bus_id.s, sizeof(v->st.pci_bus_id.s), "00000000:%02X:00.0", i);
	v->st.pci_bus_id.st = VAL_OK;
	uint64_t k = 1000;
#define PRESENT(member, ...) VAL_SET(v->s.member, k *= 3);
	GPU_SAMPLE_FIELDS(PRESENT)
#undef PRESENT
	v->s.nvlink_n = 18;
	for (unsigned l = 0; l < 18; l++) {
		VAL_SET(v->s.nvlink[l].active, 1);
		VAL_SET(v->s.nvlink[l].version, 4);
		VAL_SET(v->s.nvlink[l].tx_bytes, 123456789ull * l);
	}
	v->nproc = 1;
	v->procs[0] = (struct gpu_process){ .pid = 4000 + i, .uid = 1000, .type = 'C', .mig_gi = -1 };
	snprintf(v->procs[0].name, sizeof(v->procs[0].name), "python3");
	snprintf(v->procs[0].user, sizeof(v->procs[0].user), "alice");
	VAL_SET(v->procs[0].used_mem_bytes, 1ull << 36);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 64;
	if (n == 0 || n > GPU_MAX_GPUS)
		n = 64;
	struct snapshot *sn = snapshot_new(n);
	if (!sn)
		return 1;
	sn->n = n;
	sn->taken_ns = 2000000000000ull;
	snprintf(sn->sys.backend, sizeof(sn->sys.backend), "sim");
	for (unsigned i = 0; i < n; i++)
		fill(&sn->gpu[i], i, sn->taken_ns);
	struct api_doc d;
	api_doc_init(&d);
	double t[RUNS];
	for (unsigned r = 0; r < RUNS; r++) {
		double t0 = bench_now_ms();
		if (api_render_gpus(&d, sn, NULL) != 0)
			return 1;
		t[r] = bench_now_ms() - t0;
	}
	struct abuf b;
	abuf_init(&b);
	if (api_doc_join(&d, ~0ull, false, &b) != 0)
		return 1;
	qsort(t, RUNS, sizeof(double), bench_cmp_double);
	printf("%u GPUs: /api/v1/gpus %zu bytes; render median %.2f ms, min %.2f ms (%d runs)\n", n, b.len,
	       t[RUNS / 2], t[0], RUNS);
	abuf_free(&b);
	api_doc_free(&d);
	snapshot_free(sn);
	return 0;
}
