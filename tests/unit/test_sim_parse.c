/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim_parse.c - the simulated-server file and fault-list parsers: the
 * shipped files parse, and every kind of bad file gets one clear line naming
 * the file and the field (GPU_EDATA), through the parser and through open. */
#include "test_sim_util.h"

#include <dirent.h>

#include "core/catalog.h"
#include "core/data_path.h"

static int parse(const char *text, struct sim_server **out, struct gpu_err *err)
{
	return sim_server_parse(text, strlen(text), "test.json", out, err);
}

static void test_shipped_files_parse(void **state)
{
	(void)state;
	const char *dd = getenv("GPUCTL_DATA_DIR");
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/sim", dd ? dd : GPUCTL_SOURCE_DATA_DIR);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct catalog cat;
	char msg[256];
	assert_int_equal(catalog_load_default(&cat, msg, sizeof(msg)), 0);
	unsigned files = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		char path[2048];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *buf = read_whole_file(path, 1u << 22, NULL, msg, sizeof(msg));
		assert_non_null(buf);
		struct sim_server *srv = NULL;
		struct gpu_err err = { "" };
		if (sim_server_parse(buf, strlen(buf), path, &srv, &err) != 0 ||
		    sim_server_resolve(srv, &cat, path, &err) != 0)
			fail_msg("%s: %s", path, err.msg);
		/* the file name is the server's name */
		assert_int_equal(strncmp(srv->name, e->d_name, n - 5), 0);
		assert_true(srv->ngpu >= 1);
		free(srv);
		free(buf);
		files++;
	}
	closedir(d);
	assert_true(files >= 5);
	catalog_free(&cat);
}

static void test_defaults(void **state)
{
	(void)state;
	struct sim_server *srv;
	struct gpu_err err;
	assert_int_equal(parse("{\"name\": \"mini\", \"gpus\": [{\"model\": \"T4\", \"load\": 40}]}", &srv, &err), 0);
	assert_string_equal(srv->name, "mini");
	assert_string_equal(srv->hostname, "mini");
	assert_int_equal(srv->ngpu, 1);
	assert_int_equal(srv->gpu[0].numa_node, -1);
	assert_int_equal(srv->gpu[0].nload, 1);
	assert_true(srv->gpu[0].load[0].util_pct == 40.0);
	assert_true(srv->p2p_pcie);
	assert_int_equal(srv->fabric_manager, SIM_DEFAULT);
	assert_int_equal(srv->seed, 1);
	struct catalog cat;
	char msg[256];
	assert_int_equal(catalog_load_default(&cat, msg, sizeof(msg)), 0);
	assert_int_equal(sim_server_resolve(srv, &cat, "test.json", &err), 0);
	/* generated identities in NVML's formats */
	assert_memory_equal(srv->gpu[0].uuid, "GPU-", 4);
	assert_int_equal(strlen(srv->gpu[0].uuid), 40);
	assert_int_equal(strlen(srv->gpu[0].serial), 13);
	assert_string_equal(srv->gpu[0].bus_id, "00000000:18:00.0");
	free(srv);
	catalog_free(&cat);
}

static void test_matrix(void **state)
{
	(void)state;
	struct sim_server *srv;
	struct gpu_err err;
	assert_int_equal(parse("{\"name\": \"m\", \"gpus\": [{\"model\": \"RTX A6000\"}, {\"model\": \"RTX A6000\"},"
			       " {\"model\": \"RTX A6000\"}], \"topology\": {\"matrix\": [[\"X\", \"NV4\", \"PXB\"],"
			       " [\"NV4\", \"X\", \"SYS\"], [\"PXB\", \"SYS\", \"X\"]]}}", &srv, &err), 0);
	assert_int_equal(srv->nvlinks[0][1], 4);
	assert_int_equal(srv->nvlinks[1][0], 4);
	assert_int_equal(srv->pcie[0][1], LINK_UNKNOWN); /* derived from NUMA */
	assert_int_equal(srv->pcie[0][2], LINK_PXB);
	assert_int_equal(srv->pcie[1][2], LINK_SYS);
	assert_int_equal(srv->pcie[2][2], LINK_SELF);
	free(srv);
}

static void test_bad_files(void **state)
{
	(void)state;
	static const struct { const char *text, *msg; } bad[] = {
		{ "", "line 1" },
		{ "{\"name\": \"x\", \"gpus\": [}", "line 1" },
		{ "[1, 2]", "(top level): expected an object" },
		{ "{\"gpus\": [{\"model\": \"T4\"}]}", "name: missing" },
		{ "{\"name\": 5, \"gpus\": []}", "name: expected a string" },
		{ "{\"name\": \"x\"}", "gpus: missing" },
		{ "{\"name\": \"x\", \"gpus\": []}", "gpus: expected an array of 1 to 64 GPUs" },
		{ "{\"name\": \"x\", \"gpus\": [{}]}", "gpus[0].model: missing" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"powr_limit_w\": 70}]}", "gpus[0].powr_limit_w: unknown field" },
		{ "{\"name\": \"x\", \"colour\": 1, \"gpus\": [{\"model\": \"T4\"}]}", "colour: unknown field" },
		{ "{\"name\": \"x\", \"name\": \"y\", \"gpus\": [{\"model\": \"T4\"}]}", "duplicate" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"power_limit_w\": \"high\"}]}", "gpus[0].power_limit_w: expected a number" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"power_limit_w\": 5}]}", "gpus[0].power_limit_w: 5 is out of range" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"bus_id\": \"18:00.0\"}]}", "gpus[0].bus_id: '18:00.0' is not a PCI bus id" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"uuid\": \"1234\"}]}", "gpus[0].uuid: a GPU UUID starts with" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"ecc\": 1}]}", "gpus[0].ecc: expected true or false" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"load\": 120}]}", "gpus[0].load: 120 is out of range" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"load\": [{\"t_s\": 10, \"util_pct\": 5}, {\"t_s\": 5, \"util_pct\": 5}]}]}", "gpus[0].load[1].t_s: steps must be in time order" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"load\": [{\"t_s\": 70, \"util_pct\": 5}], \"load_period_s\": 60}]}", "gpus[0].load[0].t_s: 70 s is not within load_period_s" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"processes\": [{\"name\": \"a\"}]}]}", "gpus[0].processes[0].pid: missing" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"processes\": [{\"pid\": 1, \"type\": \"X\"}]}]}", "gpus[0].processes[0].type" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"A30\", \"mig\": true, \"mig_instances\": [{\"profile\": \"1g.6gb\", \"gi_id\": 1}, {\"profile\": \"1g.6gb\", \"gi_id\": 1}]}]}", "gpus[0].mig_instances[1].gi_id: GPU instance 1 listed twice" },
		{ "{\"name\": \"x\", \"numa_nodes\": [{\"id\": 0, \"cpus\": \"zero\"}], \"gpus\": [{\"model\": \"T4\"}]}", "numa_nodes[0].cpus: bad CPU list 'zero'" },
		{ "{\"name\": \"x\", \"numa_nodes\": [{\"id\": 0, \"cpus\": \"5-1,,,-\"}], \"gpus\": [{\"model\": \"T4\"}]}", "numa_nodes[0].cpus: bad CPU range in '5-1,,,-'" },
		{ "{\"name\": \"x\", \"numa_nodes\": [{\"id\": 0, \"cpus\": \"0,,1\"}], \"gpus\": [{\"model\": \"T4\"}]}", "numa_nodes[0].cpus: bad CPU list '0,,1'" },
		{ "{\"name\": \"x\", \"numa_nodes\": [{\"id\": 0, \"cpus\": \"0-99999999\"}], \"gpus\": [{\"model\": \"T4\"}]}", "numa_nodes[0].cpus: CPU 99999999 in '0-99999999' is beyond the 4096 CPUs known" },
		{ "{\"name\": \"x\", \"fabric_manager\": \"maybe\", \"gpus\": [{\"model\": \"T4\"}]}", "fabric_manager: expected \"running\" or \"stopped\"" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}, {\"model\": \"T4\"}], \"topology\": {\"matrix\": [[\"X\", \"PIX\"], [\"SYS\", \"X\"]]}}", "topology.matrix[1][0]: differs from [0][1]" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}, {\"model\": \"T4\"}], \"topology\": {\"matrix\": [[\"X\", \"NV0\"], [\"NV0\", \"X\"]]}}", "topology.matrix[0][1]: 'NV0' is not one of" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}, {\"model\": \"T4\"}], \"topology\": {\"matrix\": [[\"PIX\", \"PIX\"], [\"PIX\", \"X\"]]}}", "topology.matrix[0][0]: X belongs on the diagonal" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}, {\"model\": \"T4\"}], \"topology\": {\"matrix\": [[\"X\", \"PIX\"]]}}", "topology.matrix: expected 2 rows" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}, {\"model\": \"T4\"}], \"topology\": {\"pcie_matrix\": [[\"X\", \"NV2\"], [\"NV2\", \"X\"]]}}", "topology.pcie_matrix[0][1]" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"meltdown\", \"gpu\": 0}]}", "faults[0].kind: unknown fault kind 'meltdown'" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"thermal\", \"gpu\": 1}]}", "faults[0].gpu: GPU 1 does not exist" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"xid\", \"gpu\": 0}]}", "faults[0].xid: an xid fault needs its code" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"thermal\"}]}", "faults[0].gpu: missing" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"ecc_uncorrectable\", \"gpu\": 0, \"location\": \"disk\"}]}", "faults[0].location: expected \"dram\" or \"sram\"" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\"}], \"faults\": [{\"kind\": \"nvlink_down\", \"gpu\": 0, \"link\": 1.5}]}", "faults[0].link: expected a whole number" },
		{ "{\"name\": \"x\", \"latency_us\": -3, \"gpus\": [{\"model\": \"T4\"}]}", "latency_us: -3 is out of range" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sim_server *srv = (struct sim_server *)&srv;
		struct gpu_err err = { "" };
		int rc = parse(bad[i].text, &srv, &err);
		if (rc != GPU_EDATA || !strstr(err.msg, bad[i].msg) || strncmp(err.msg, "sim file 'test.json': ", 22))
			fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err.msg, bad[i].msg);
		assert_null(srv);
		assert_null(strchr(err.msg, '\n'));
	}
}

static void test_bad_resolve(void **state)
{
	(void)state;
	static const struct { const char *text, *msg; } bad[] = {
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"H300\"}]}", "gpus[0].model: unknown GPU model 'H300'" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"L40S\", \"mig\": true}]}", "gpus[0].mig: the L40S does not support MIG" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"A30\", \"mig_instances\": [{\"profile\": \"1g.6gb\", \"gi_id\": 1}]}]}", "need \"mig\": true" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"A30\", \"mig\": true, \"mig_instances\": [{\"profile\": \"1g.5gb\", \"gi_id\": 1}]}]}", "has no MIG profile '1g.5gb'" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"A30\", \"mig\": true, \"mig_instances\": [{\"profile\": \"4g.24gb\", \"gi_id\": 1}, {\"profile\": \"4g.24gb\", \"gi_id\": 2}]}]}", "8 compute slices do not fit" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"processes\": [{\"pid\": 5, \"mig_gi\": 3}]}]}", "processes[0].mig_gi: no MIG instance 3" },
		{ "{\"name\": \"x\", \"numa_nodes\": [{\"id\": 0, \"cpus\": \"0-7\"}], \"gpus\": [{\"model\": \"T4\", \"numa_node\": 1}]}", "gpus[0].numa_node: node 1 is not in numa_nodes" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"numa_node\": 5}]}", "gpus[0].numa_node: node 5 is not in numa_nodes (the file has none)" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"T4\", \"processes\": [{\"pid\": 5, \"mem_mib\": 16000}]}]}", "gpus[0].processes: 16000 MiB is more than the T4's 15360 MiB" },
		{ "{\"name\": \"x\", \"gpus\": [{\"model\": \"RTX A6000\"}, {\"model\": \"RTX A6000\"}], \"topology\": {\"nvlink_all_pairs\": 8}}", "GPU 0 has 8 NVLinks to its peers, the RTX A6000 has 4" },
	};
	struct catalog cat;
	char msg[256];
	assert_int_equal(catalog_load_default(&cat, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sim_server *srv;
		struct gpu_err err = { "" };
		assert_int_equal(parse(bad[i].text, &srv, &err), 0);
		int rc = sim_server_resolve(srv, &cat, "test.json", &err);
		if (rc != GPU_EDATA || !strstr(err.msg, bad[i].msg) || strncmp(err.msg, "sim file 'test.json': ", 22))
			fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err.msg, bad[i].msg);
		free(srv);
	}
	catalog_free(&cat);
}

static void test_bad_file_through_open(void **state)
{
	(void)state;
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	char path[64], arg[96];
	write_temp(path, ".json", "{\"name\": \"x\", \"gpus\": [{\"model\": \"H300\"}]}");
	assert_int_equal(gpu_backend_open(&be, "sim", path, &err), GPU_EDATA);
	assert_true(strstr(err.msg, path) != NULL);
	assert_true(strstr(err.msg, "gpus[0].model") != NULL);
	assert_null(be.ops);
	unlink(path);
	/* a server fault the GPU cannot show */
	write_temp(path, ".json", "{\"name\": \"x\", \"gpus\": [{\"model\": \"L4\"}], \"faults\": [{\"kind\": \"nvlink_errors\", \"gpu\": 0}]}");
	assert_int_equal(gpu_backend_open(&be, "sim", path, &err), GPU_EDATA);
	assert_true(strstr(err.msg, "faults[0]") != NULL);
	assert_true(strstr(err.msg, "no NVLink") != NULL);
	unlink(path);
	/* a missing file is "no input", not "bad data" */
	assert_int_equal(gpu_backend_open(&be, "sim", path, &err), GPU_EIO);
	assert_true(strstr(err.msg, path) != NULL);
	/* gpus= cannot drop a GPU the file's faults name */
	write_temp(path, ".json", "{\"name\": \"x\", \"gpus\": [{\"model\": \"L4\"}, {\"model\": \"L4\"}], \"faults\": [{\"kind\": \"thermal\", \"gpu\": 1}]}");
	snprintf(arg, sizeof(arg), "%s,gpus=1", path);
	assert_int_equal(gpu_backend_open(&be, "sim", arg, &err), GPU_EINVAL);
	assert_true(strstr(err.msg, "gpus=1") != NULL);
	unlink(path);
}

static void test_fault_lists(void **state)
{
	(void)state;
	struct sim_fault f[4];
	struct gpu_err err;
	const char *obj = "{\"faults\": [{\"kind\": \"nvlink_errors\", \"gpu\": 3, \"rate_per_s\": 20, \"at_s\": 2.5,"
			  " \"duration_s\": 60}, {\"kind\": \"foreign_process\", \"gpu\": 1, \"pid\": 77, \"name\": \"xmrig\","
			  " \"user\": \"eve\", \"mem_mib\": 100}]}";
	assert_int_equal(sim_faults_parse(obj, strlen(obj), "f.json", f, 4, &err), 2);
	assert_int_equal(f[0].kind, SIM_FAULT_NVLINK_ERRORS);
	assert_int_equal(f[0].gpu, 3);
	assert_int_equal(f[0].link, -1); /* every link unless one is named */
	assert_true(f[0].rate_per_s == 20.0 && f[0].at_s == 2.5 && f[0].duration_s == 60.0);
	assert_int_equal(f[1].pid, 77);
	assert_string_equal(f[1].name, "xmrig");
	assert_string_equal(f[1].user, "eve");
	assert_int_equal(f[1].mem_bytes, 100 * MIB_B);
	const char *arr = "[{\"kind\": \"gpu_lost\", \"gpu\": 0}]";
	assert_int_equal(sim_faults_parse(arr, strlen(arr), "f.json", f, 4, &err), 1);
	assert_int_equal(sim_faults_parse("[]", 2, "f.json", f, 4, &err), 0);
	const char *many = "[{\"kind\":\"hang\",\"gpu\":0},{\"kind\":\"hang\",\"gpu\":0},{\"kind\":\"hang\",\"gpu\":0}]";
	assert_int_equal(sim_faults_parse(many, strlen(many), "f.json", f, 2, &err), GPU_EDATA);
	assert_true(strstr(err.msg, "more than 2 faults") != NULL);
	assert_int_equal(sim_faults_parse("{\"fault\": []}", 13, "f.json", f, 4, &err), GPU_EDATA);
	assert_string_equal(err.msg, "fault file 'f.json': fault: unknown field");
	/* every kind has a name that parses back */
	for (unsigned k = 1; k < SIM_FAULT_KIND_COUNT; k++)
		assert_int_equal(sim_fault_kind_parse(sim_fault_kind_name((enum sim_fault_kind)k)), k);
	assert_int_equal(sim_fault_kind_parse("none"), SIM_FAULT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_files_parse),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_resolve),
		cmocka_unit_test(test_bad_file_through_open),
		cmocka_unit_test(test_fault_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
