/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_gres.c - gres.conf from simulated servers: Links rows agree with
 * the pool's pair scores, Cores from CPU lists, MIG as MultipleFiles, types
 * and the slurm.conf fragment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/placement.h"
#include "device/snapshot.h"
#include "slurm/gres.h"
#include "test_snap_util.h"

static struct snapshot *load_test_server(void)
{
	char path[1024];
	const char *t = getenv("GPUCTL_TEST_DIR");
	snprintf(path, sizeof(path), "%s/data/slurm-nvpairs.json", t ? t : "tests");
	return sim_snapshot(path);
}

/* Parses "Links=a,b,c" of line into v; returns the count. */
static unsigned links_of(const char *line, int *v, unsigned max)
{
	const char *p = strstr(line, "Links=");
	assert_non_null(p);
	p += 6;
	unsigned n = 0;
	while (n < max) {
		char *end;
		v[n++] = (int)strtol(p, &end, 10);
		if (*end != ',')
			break;
		p = end + 1;
	}
	return n;
}

/* For every shipped server: row i of Links is -1 at i and NVLinks elsewhere;
 * ordering pairs by Links orders them as the pool's pair scores do. */
static void check_links_agree(const char *server)
{
	struct snapshot *s = sim_snapshot(server);
	struct slurm_gres_opts o = { .dev_dir = "/dev" };
	struct abuf b;
	abuf_init(&b);
	char err[200];
	assert_int_equal(slurm_gres_conf(s, &o, &b, err, sizeof(err)), 0);
	const char *line = b.p;
	for (unsigned i = 0; i < s->n; i++) {
		if (VAL_HAS(s->gpu[i].st.mig_mode) && s->gpu[i].st.mig_mode.v == 1)
			continue;
		char want[64];
		snprintf(want, sizeof(want), "File=/dev/nvidia%u ", i);
		line = strstr(b.p, want);
		assert_non_null(line);
		int v[GPU_MAX_GPUS];
		assert_int_equal(links_of(line, v, GPU_MAX_GPUS), s->n);
		for (unsigned j = 0; j < s->n; j++) {
			if (i == j) {
				assert_int_equal(v[j], -1);
				continue;
			}
			assert_int_equal(v[j], (int)s->link[i][j].nvlinks);
			assert_int_equal(v[j], (int)(topo_pair_score(&s->link[i][j]) / TOPO_NVLINK_SCORE));
			for (unsigned k = 0; k < s->n; k++)
				if (k != i && k != j && v[j] > v[k])
					assert_true(topo_pair_score(&s->link[i][j]) > topo_pair_score(&s->link[i][k]));
		}
	}
	abuf_free(&b);
	free(s);
}

static void test_links_agree_with_pair_scores(void **state)
{
	(void)state;
	const char *servers[] = { "h200x8", "a100x8", "l40sx4", "rtx4090x2" };
	for (size_t k = 0; k < sizeof(servers) / sizeof(servers[0]); k++)
		check_links_agree(servers[k]);
}

/* The test cluster's server: NVLink pairs 0-1 and 2-3 only; the pool's best
 * pair beside a busy GPU 0 is the pair Links calls connected. */
static void test_nvlink_pairs_server(void **state)
{
	(void)state;
	struct snapshot *s = load_test_server();
	assert_int_equal(s->n, 4);
	struct slurm_gres_opts o = { .dev_dir = "/tmp/c/dev", .node = "n1" };
	struct abuf b;
	abuf_init(&b);
	char err[200];
	assert_int_equal(slurm_gres_conf(s, &o, &b, err, sizeof(err)), 0);
	assert_non_null(strstr(b.p, "NodeName=n1 Name=gpu Type=nvidia_h100_80gb_hbm3 File=/tmp/c/dev/nvidia0 Cores=0-1 "
				    "Links=-1,6,0,0\n"));
	assert_non_null(strstr(b.p, "File=/tmp/c/dev/nvidia1 Cores=0-1 Links=6,-1,0,0\n"));
	assert_non_null(strstr(b.p, "File=/tmp/c/dev/nvidia2 Cores=0-1 Links=0,0,-1,6\n"));
	assert_non_null(strstr(b.p, "File=/tmp/c/dev/nvidia3 Cores=0-1 Links=0,0,6,-1\n"));
	abuf_reset(&b);
	assert_int_equal(slurm_gres_node_line(s, &o, &b, err, sizeof(err)), 0);
	assert_string_equal(b.p, "NodeName=n1 Gres=gpu:nvidia_h100_80gb_hbm3:4\n");
	struct place_gpu g[4] = { { .busy = true } };
	struct place_request two = { .count = 2 };
	struct place_result r;
	assert_true(place_choose(s->n, s->link, g, &two, &r));
	assert_int_equal(r.gpu[0], 2);
	assert_int_equal(r.gpu[1], 3);
	abuf_free(&b);
	free(s);
}

/* The whole file gres-conf prints: header, gres.conf lines, the slurm.conf line as a comment. */
static void test_conf_file(void **state)
{
	(void)state;
	struct snapshot *s = load_test_server();
	struct slurm_gres_opts o = { .dev_dir = "/tmp/c/dev" };
	struct abuf b, lines;
	abuf_init(&b);
	abuf_init(&lines);
	char err[200];
	assert_int_equal(slurm_gres_conf_file(s, &o, "srv", true, true, &b, err, sizeof(err)), 0);
	assert_int_equal(slurm_gres_conf(s, &o, &lines, err, sizeof(err)), 0);
	const char *head = "# gres.conf for srv (SIMULATED server), written by gpuctl slurm gres-conf\n"
			   "# Links: NVLinks to GPU 0,1,... (-1 itself); the pool's placement ranks pairs the same way\n";
	assert_memory_equal(b.p, head, strlen(head));
	assert_memory_equal(b.p + strlen(head), lines.p, lines.len);
	const char *tail = b.p + strlen(head) + lines.len;
	assert_non_null(strstr(tail, "# slurm.conf (GresTypes=gpu; merge with the node's CPUs, memory...):\n# NodeName="));
	abuf_reset(&b);
	o.node = "n7"; /* the node given names it; no fragment: the gres.conf lines end it */
	assert_int_equal(slurm_gres_conf_file(s, &o, "srv", false, false, &b, err, sizeof(err)), 0);
	assert_non_null(strstr(b.p, "# gres.conf for n7, written by"));
	assert_null(strstr(b.p, "slurm.conf"));
	abuf_free(&b);
	abuf_free(&lines);
	free(s);
}

static void test_mig_multiple_files(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("h100pcie-mig");
	struct slurm_gres_opts o = { 0 };
	struct abuf b;
	abuf_init(&b);
	char err[200];
	assert_int_equal(slurm_gres_conf(s, &o, &b, err, sizeof(err)), 0);
	/* one line per instance, no File= and no Links= on MIG lines */
	unsigned lines = 0;
	for (const char *p = b.p; (p = strstr(p, "MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap")); p++)
		lines++;
	assert_int_equal(lines, s->gpu[0].nmig);
	assert_null(strstr(b.p, " File="));
	assert_null(strstr(b.p, "Links="));
	const struct gpu_mig *m = &s->gpu[0].mig[0];
	char want[200];
	snprintf(want, sizeof(want), "Type=nvidia_h100_pcie_%s MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap%u,"
		 "/dev/nvidia-caps/nvidia-cap%u", m->profile, slurm_mig_gi_minor(0, m->gi_id),
		 slurm_mig_ci_minor(0, m->gi_id, m->ci_id));
	assert_non_null(strstr(b.p, want));
	abuf_reset(&b);
	assert_int_equal(slurm_gres_node_line(s, &o, &b, err, sizeof(err)), 0);
	assert_non_null(strstr(b.p, "NodeName=HOST Gres=gpu:nvidia_h100_pcie_3g.40gb:1,"));
	assert_non_null(strstr(b.p, "gpu:nvidia_h100_pcie_1g.10gb:2\n"));
	abuf_free(&b);
	free(s);
}

static void test_mig_minors(void **state)
{
	(void)state;
	/* /proc/driver/nvidia-caps/mig-minors: gpu0/gi0/access 3, gpu0/gi0/ci0/access 4,
	 * gpu0/gi1/access 12, gpu0/gi14/ci7/access 137, gpu1/gi0/access 138 */
	assert_int_equal(slurm_mig_gi_minor(0, 0), 3);
	assert_int_equal(slurm_mig_ci_minor(0, 0, 0), 4);
	assert_int_equal(slurm_mig_gi_minor(0, 1), 12);
	assert_int_equal(slurm_mig_ci_minor(0, 14, 7), 137);
	assert_int_equal(slurm_mig_gi_minor(1, 0), 138);
}

static void test_node_names(void **state)
{
	(void)state;
	assert_true(slurm_node_name_ok("gpu-node-7"));
	assert_true(slurm_node_name_ok("hgx.example.com"));
	assert_true(slurm_node_name_ok("gpu[01-04,07]"));
	assert_false(slurm_node_name_ok(""));
	assert_false(slurm_node_name_ok("a b"));
	assert_false(slurm_node_name_ok("a\nNodeName=evil"));
	assert_false(slurm_node_name_ok("n1=x"));
	assert_false(slurm_node_name_ok("n1#c"));
	assert_false(slurm_node_name_ok("n1\t"));
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(slurm_node_name_ok(longname));
	assert_false(slurm_node_name_ok("-x")); /* an option where it is an argument of its own */
	/* one node for scontrol: no host list, not ALL (every node), as the sweep's file names */
	assert_true(slurm_host_name_ok("gpu-node-7"));
	assert_true(slurm_host_name_ok("n5.cluster"));
	assert_true(slurm_host_name_ok("ALLx"));
	assert_false(slurm_host_name_ok("gpu[01-64]"));
	assert_false(slurm_host_name_ok("a,b"));
	assert_false(slurm_host_name_ok("ALL"));
	assert_false(slurm_host_name_ok("all"));
	assert_false(slurm_host_name_ok("-x"));
	assert_false(slurm_host_name_ok("n5 State=RESUME"));
	assert_false(slurm_host_name_ok(""));
}

static void test_type_names(void **state)
{
	(void)state;
	char t[SLURM_TYPE_LEN];
	slurm_gres_type_name("NVIDIA H200", t, sizeof(t));
	assert_string_equal(t, "nvidia_h200");
	slurm_gres_type_name("NVIDIA A100-SXM4-80GB", t, sizeof(t));
	assert_string_equal(t, "nvidia_a100_sxm4_80gb");
	slurm_gres_type_name("  NVIDIA  GeForce RTX 4090 ", t, sizeof(t));
	assert_string_equal(t, "nvidia_geforce_rtx_4090");
	slurm_gres_type_name("", t, sizeof(t));
	assert_string_equal(t, "gpu");
	char small[6];
	slurm_gres_type_name("NVIDIA H200", small, sizeof(small));
	assert_int_equal(strlen(small), 5);
}

static void test_cores(void **state)
{
	(void)state;
	char out[256], err[200];
	struct slurm_gres_opts id = { 0 };
	assert_int_equal(slurm_gres_cores("0-3,8,9,10-11", &id, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "0-3,8-11");
	/* 2 threads per core: CPU c and c+4 are one core (Linux numbering) */
	int map[8] = { 0, 1, 2, 3, 0, 1, 2, 3 };
	struct slurm_gres_opts ht = { .cpu_core = map, .ncpu = 8 };
	assert_int_equal(slurm_gres_cores("2-3,6-7", &ht, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "2-3");
	assert_int_equal(slurm_gres_cores("0-8", &ht, out, sizeof(out), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "CPU 8"));
	int holes[4] = { 0, -1, 1, 2 };
	struct slurm_gres_opts off = { .cpu_core = holes, .ncpu = 4 };
	assert_int_equal(slurm_gres_cores("1", &off, out, sizeof(out), err, sizeof(err)), -1);
	const char *bad[] = { "", "a", "1-", "3-1", "1,,2", "-1", "1 2", "99999999999" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		assert_int_equal(slurm_gres_cores(bad[k], &id, out, sizeof(out), err, sizeof(err)), -1);
}

static void test_lost_gpu_left_out(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("l40sx4");
	memset(&s->gpu[2].st.name, 0, sizeof(s->gpu[2].st.name));
	struct slurm_gres_opts o = { .type = "l40s" };
	struct abuf b;
	abuf_init(&b);
	char err[200];
	assert_int_equal(slurm_gres_conf(s, &o, &b, err, sizeof(err)), 0);
	assert_non_null(strstr(b.p, "# GPU 2: not answering, left out\n"));
	assert_null(strstr(b.p, "/dev/nvidia2"));
	assert_non_null(strstr(b.p, "Type=l40s File=/dev/nvidia3"));
	abuf_reset(&b);
	assert_int_equal(slurm_gres_node_line(s, &o, &b, err, sizeof(err)), 0);
	assert_string_equal(b.p, "NodeName=HOST Gres=gpu:l40s:3\n");
	abuf_free(&b);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_names),
		cmocka_unit_test(test_links_agree_with_pair_scores),
		cmocka_unit_test(test_nvlink_pairs_server),
		cmocka_unit_test(test_conf_file),
		cmocka_unit_test(test_mig_multiple_files),
		cmocka_unit_test(test_mig_minors),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_cores),
		cmocka_unit_test(test_lost_gpu_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
