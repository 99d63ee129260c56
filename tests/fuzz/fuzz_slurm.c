/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_slurm.c - the Slurm parsers: the control protocol's slurm_* requests,
 * `scontrol show node -o` lines, CPU lists (gres.conf Cores=) and GPU lists
 * (SLURM_JOB_GPUS). The first byte picks the parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/gres.h"
#include "slurm/node.h"
#include "pool/slurm_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	char err[256];
	switch (data[0] % 4) {
	case 0: {
		struct slurm_req r;
		if (slurm_req_parse(s, size - 1, &r, err, sizeof(err)) == 1) {
			json_t *j = slurm_req_json(&r);
			json_decref(j);
		}
		break;
	}
	case 1: {
		struct slurm_node_info n;
		if (slurm_node_parse(s, &n, err, sizeof(err)) == 0)
			(void)slurm_health_decide(n.drain, n.reason, &n);
		break;
	}
	case 2: {
		char out[512];
		int map[64];
		for (int i = 0; i < 64; i++)
			map[i] = i / 2;
		struct slurm_gres_opts id = { 0 }, ht = { .cpu_core = map, .ncpu = 64 };
		(void)slurm_gres_cores(s, &id, out, sizeof(out), err, sizeof(err));
		(void)slurm_gres_cores(s, &ht, out, sizeof(out), err, sizeof(err));
		break;
	}
	default: {
		uint64_t mask;
		(void)slurm_gpu_list_parse(s, &mask, err, sizeof(err));
		break;
	}
	}
	free(s);
	return 0;
}
