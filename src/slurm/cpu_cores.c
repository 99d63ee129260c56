/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_cores.c - see cpu_cores.h. */
#include "slurm/cpu_cores.h"

#include <stdbool.h>
#include <stdio.h>

#include "slurm/gres.h"

void slurm_core_map(const struct slurm_cpu_topo *key, unsigned n, int *map)
{
	for (unsigned c = 0; c < n; c++) {
		if (key[c].pkg < 0) {
			map[c] = -1;
			continue;
		}
		/* index = number of distinct (pkg, core) pairs ordered before this one */
		int idx = 0;
		for (unsigned d = 0; d < n; d++) {
			if (key[d].pkg < 0 || !(key[d].pkg < key[c].pkg || (key[d].pkg == key[c].pkg && key[d].core < key[c].core)))
				continue;
			bool first = true;
			for (unsigned e = 0; e < d && first; e++)
				first = !(key[e].pkg == key[d].pkg && key[e].core == key[d].core);
			idx += first;
		}
		map[c] = idx;
	}
}

int slurm_host_cpu_cores(const char *sys_root, int *map, unsigned *ncpu)
{
	static struct slurm_cpu_topo key[SLURM_MAX_CPUS];
	unsigned n = 0;
	for (unsigned c = 0; c < SLURM_MAX_CPUS; c++) {
		char path[4200];
		int v[2];
		const char *f[2] = { "physical_package_id", "core_id" };
		bool ok = true;
		for (int k = 0; k < 2 && ok; k++) {
			snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%u/topology/%s", sys_root, c, f[k]);
			FILE *fp = fopen(path, "r");
			ok = fp && fscanf(fp, "%d", &v[k]) == 1;
			if (fp)
				fclose(fp);
		}
		if (!ok) {
			key[c].pkg = key[c].core = -1; /* absent or offline */
			continue;
		}
		key[c].pkg = v[0];
		key[c].core = v[1];
		n = c + 1;
	}
	if (n == 0)
		return -1;
	slurm_core_map(key, n, map);
	*ncpu = n;
	return 0;
}
