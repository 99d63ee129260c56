/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_cpu_cores.c - Slurm's core numbering (src/slurm/cpu_cores.h):
 * hyperthreads share a core's index, packages in order, offline CPUs -1; and
 * read from a sysfs tree made here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "slurm/cpu_cores.h"
#include "slurm/gres.h"

static void test_map(void **state)
{
	(void)state;
	/* 2 packages x 2 cores, 2 threads each, Linux's usual order: threads' siblings after all cores;
	 * core ids not dense (0 and 4); CPU 5 offline */
	const struct slurm_cpu_topo cpus[8] = {
		{ 0, 0 }, { 0, 4 }, { 1, 0 }, { 1, 4 }, { 0, 0 }, { -1, -1 }, { 1, 0 }, { 1, 4 },
	};
	int map[8];
	slurm_core_map(cpus, 8, map);
	const int want[8] = { 0, 1, 2, 3, 0, -1, 2, 3 };
	for (int i = 0; i < 8; i++)
		assert_int_equal(map[i], want[i]);
}

static void put(const char *root, unsigned cpu, const char *file, int v)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%u/topology", root, cpu);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", file);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d\n", v);
	fclose(f);
}

static void test_sysfs(void **state)
{
	(void)state;
	char root[] = "/tmp/gpuctl-cpu-cores-XXXXXX";
	assert_non_null(mkdtemp(root));
	int map[SLURM_MAX_CPUS];
	unsigned n = 0;
	assert_int_equal(slurm_host_cpu_cores(root, map, &n), -1); /* nothing to read */
	/* CPUs 0-3: one package, two cores with two threads; CPU 2 has no core_id (offline) */
	put(root, 0, "physical_package_id", 0);
	put(root, 0, "core_id", 1);
	put(root, 1, "physical_package_id", 0);
	put(root, 1, "core_id", 0);
	put(root, 2, "physical_package_id", 0);
	put(root, 3, "physical_package_id", 0);
	put(root, 3, "core_id", 1);
	assert_int_equal(slurm_host_cpu_cores(root, map, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(map[0], 1);
	assert_int_equal(map[1], 0);
	assert_int_equal(map[2], -1);
	assert_int_equal(map[3], 1);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_map), cmocka_unit_test(test_sysfs) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
