/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics.c - the Prometheus/OpenMetrics exposition: a pure function of
 * a snapshot. Checks exact values, absent unsupported values, down GPUs,
 * escaping, HELP/TYPE for every family, contiguous families, OpenMetrics
 * framing, and that docs/metrics.md lists every metric the code can emit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/metrics.h"
#include "core/data_path.h"
#include "pool/pool.h"

#define OK(field, value) VAL_SET(field, value)

static void set_str(strv *f, const char *s)
{
	snprintf(f->s, sizeof(f->s), "%s", s);
	f->st = VAL_OK;
}

/* Every field the renderer reads, present. */
static void fill_gpu(struct gpu_view *v, unsigned i)
{
	gpu_view_zero(v);
	char buf[64];
	v->up = true;
	v->last_ok_ns = 1000000000000ull - 250000000ull; /* 0.25 s before taken_ns */
	v->samples = 42;
	v->errors = 1;
	struct gpu_static *st = &v->st;
	st->index = i;
	set_str(&st->name, "NVIDIA H200");
	snprintf(buf, sizeof(buf), "GPU-%08u-aaaa", i);
	set_str(&st->uuid, buf);
	snprintf(buf, sizeof(buf), "00000000:%02X:00.0", 0x18 + i);
	set_str(&st->pci_bus_id, buf);
	set_str(&st->serial, "1650000000001");
	set_str(&st->vbios_version, "96.00.99.00.01");
	set_str(&st->architecture, "Hopper");
	OK(st->cc_major, 9);
	OK(st->cc_minor, 0);
	OK(st->power_default_limit_mw, 700000);
	OK(st->max_sm_clock_mhz, 1980);
	OK(st->max_mem_clock_mhz, 2619);
	OK(st->ecc_mode, 1);
	OK(st->pcie_gen_max, 5);
	OK(st->pcie_width_max, 16);
	struct gpu_sample *s = &v->s;
	/* every field of the field table present; the values below are checked exactly */
	uint64_t k = 0;
#define PRESENT(member, ...) OK(s->member, ++k);
	GPU_SAMPLE_FIELDS(PRESENT)
#undef PRESENT
	s->timestamp_ns = v->last_ok_ns;
	s->duration_ns = 31000000;
	OK(s->util_gpu_pct, 87);
	OK(s->util_mem_pct, 40);
	OK(s->mem_used_bytes, 1000);
	OK(s->mem_free_bytes, 2000);
	OK(s->mem_total_bytes, 3000);
	OK(s->temp_c, 55);
	OK(s->temp_mem_c, 60);
	OK(s->temp_slowdown_c, 87);
	OK(s->temp_shutdown_c, 92);
	OK(s->fan_pct, 30);
	OK(s->power_mw, 350123);
	OK(s->power_limit_mw, 700000);
	OK(s->energy_mj, 123456789);
	OK(s->sm_clock_mhz, 1980);
	OK(s->mem_clock_mhz, 2619);
	OK(s->pstate, 0);
	OK(s->clock_event_reasons, CLK_EVT_SW_POWER_CAP);
	OK(s->viol_power_ns, 1500000000);
	OK(s->viol_thermal_ns, 0);
	OK(s->viol_sync_boost_ns, 0);
	OK(s->viol_board_limit_ns, 0);
	OK(s->viol_low_util_ns, 0);
	OK(s->viol_reliability_ns, 0);
	OK(s->ecc_vol_corrected, 3);
	OK(s->ecc_vol_uncorrected, 0);
	OK(s->ecc_agg_corrected, 5);
	OK(s->ecc_agg_uncorrected, 1);
	OK(s->ecc_sram_uncorrected, 0);
	OK(s->ecc_dram_uncorrected, 1);
	OK(s->retired_pages_sbe, 0);
	OK(s->retired_pages_dbe, 0);
	OK(s->retired_pages_pending, 0);
	OK(s->remap_corrected, 0);
	OK(s->remap_uncorrected, 1);
	OK(s->remap_pending, 0);
	OK(s->remap_failure, 0);
	OK(s->pcie_gen, 5);
	OK(s->pcie_width, 16);
	OK(s->pcie_tx_kbps, 1000);
	OK(s->pcie_rx_kbps, 2000);
	OK(s->pcie_replays, 0);
	s->nvlink_n = 2;
	for (unsigned l = 0; l < 2; l++) {
		struct gpu_nvlink *n = &s->nvlink[l];
		OK(n->active, l == 0 ? 1 : 0);
		OK(n->crc_flit_errors, 7);
		OK(n->crc_data_errors, 0);
		OK(n->replay_errors, 0);
		OK(n->recovery_errors, 0);
		OK(n->tx_bytes, 1 << 20);
		OK(n->rx_bytes, 1 << 21);
	}
	v->nproc = 1;
	v->procs[0] = (struct gpu_process){ .pid = 4242, .uid = 1000, .name = "python3", .user = "alice", .type = 'C', .mig_gi = -1 };
	OK(v->procs[0].used_mem_bytes, 8589934592ull);
	v->nmig = 1;
	v->mig[0] = (struct gpu_mig){ .gi_id = 1, .ci_id = 0, .profile = "1g.18gb", .uuid = "MIG-abc" };
	OK(v->mig[0].mem_total_bytes, 19000000000ull);
	OK(v->mig[0].mem_used_bytes, 1000);
	OK(v->mig[0].sm_count, 16);
	OK(v->mig[0].prof_sm_active_pct, 93);
	OK(v->mig[0].prof_sm_occupancy_pct, 15);
	OK(v->mig[0].prof_tensor_active_pct, 88);
	OK(v->mig[0].prof_dram_active_pct, 17);
	OK(v->mig[0].prof_fp64_active_pct, 0);
	OK(v->mig[0].prof_fp32_active_pct, 3);
	OK(v->mig[0].prof_fp16_active_pct, 1);
	v->nxid = 1;
	v->xid[0].code = 79;
	v->xid[0].count = 2;
	v->xid[0].last_ns = 999000000000ull;
}

static struct snapshot *full_snapshot(unsigned n)
{
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	sn->taken_ns = 1000000000000ull;
	sn->sys.simulated = true;
	snprintf(sn->sys.backend, sizeof(sn->sys.backend), "sim");
	snprintf(sn->sys.server_name, sizeof(sn->sys.server_name), "h200x8");
	set_str(&sn->sys.hostname, "node1");
	set_str(&sn->sys.driver_version, "580.159.04");
	sn->n = n;
	for (unsigned i = 0; i < n; i++)
		fill_gpu(&sn->gpu[i], i);
	return sn;
}

static char *render(const struct snapshot *sn, const struct metrics_opts *o)
{
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, o), 0);
	return b.p;
}

static struct metrics_health health2[2] = { { true, 0 }, { true, 2 } };
static const struct leakwatch_leak leak1[1] = {
	{ .gpu = 0, .pid = 4242, .comm = "python3", .user = "alice", .rate = 1572864.5, .window_s = 300, .bytes = 8589934592ull },
};

static void full_opts(struct metrics_opts *o)
{
	metrics_opts_default(o);
	o->version = "0.1.0";
	o->kernel_log = 1;
	o->sim_fault_file = 1;
	o->last_render_ns = 1200000;
	o->health = health2;
	o->leaks = leak1;
	o->nleaks = 1;
}

static const char L0[] = "gpu=\"0\",uuid=\"GPU-00000000-aaaa\",pci_bus_id=\"00000000:18:00.0\",model=\"NVIDIA H200\",hostname=\"node1\"";

static void test_exact_values(void **state)
{
	(void)state;
	struct snapshot *sn = full_snapshot(2);
	struct metrics_opts o;
	full_opts(&o);
	char *t = render(sn, &o);
	char want[512];
	const struct { const char *name, *extra, *value; } cases[] = {
		{ "gpuctl_gpu_power_watts", "", "350.123" },
		{ "gpuctl_gpu_power_limit_watts", "", "700" },
		{ "gpuctl_gpu_energy_joules_total", "", "123456.789" },
		{ "gpuctl_gpu_utilization_ratio", "", "0.87" },
		{ "gpuctl_gpu_memory_used_bytes", "", "1000" },
		{ "gpuctl_gpu_sm_clock_hertz", "", "1980000000" },
		{ "gpuctl_gpu_sample_age_seconds", "", "0.25" },
		{ "gpuctl_gpu_sample_duration_seconds", "", "0.031" },
		{ "gpuctl_gpu_pcie_transmit_bytes_per_second", "", "1024000" },
		{ "gpuctl_gpu_clock_event_seconds_total", ",reason=\"power\"", "1.5" },
		{ "gpuctl_gpu_clock_event_active", ",reason=\"sw_power_cap\"", "1" },
		{ "gpuctl_gpu_clock_event_active", ",reason=\"hw_thermal\"", "0" },
		{ "gpuctl_gpu_ecc_errors_total", ",type=\"uncorrected\",location=\"dram\"", "1" },
		{ "gpuctl_gpu_nvlink_up", ",link=\"1\"", "0" },
		{ "gpuctl_gpu_nvlink_errors_total", ",link=\"0\",type=\"crc_flit\"", "7" },
		{ "gpuctl_gpu_xid_errors_total", ",xid=\"79\"", "2" },
		{ "gpuctl_gpu_xid_last_seen_timestamp_seconds", ",xid=\"79\"", "999" },
		{ "gpuctl_gpu_process_memory_used_bytes", ",pid=\"4242\",user=\"alice\",comm=\"python3\"", "8589934592" },
		{ "gpuctl_gpu_mig_memory_total_bytes", ",gpu_instance=\"1\",compute_instance=\"0\",profile=\"1g.18gb\",mig_uuid=\"MIG-abc\"", "19000000000" },
		{ "gpuctl_gpu_mig_sm_active_ratio", ",gpu_instance=\"1\",compute_instance=\"0\",profile=\"1g.18gb\",mig_uuid=\"MIG-abc\"", "0.93" },
		{ "gpuctl_gpu_mig_pipe_active_ratio", ",gpu_instance=\"1\",compute_instance=\"0\",profile=\"1g.18gb\",mig_uuid=\"MIG-abc\",pipe=\"fp32\"", "0.03" },
		{ "gpuctl_gpu_health_status", "", "0" },
		{ "gpuctl_process_memory_growth_bytes_per_second", ",pid=\"4242\",user=\"alice\",comm=\"python3\"", "1572864.5" },
		{ "gpuctl_gpu_up", "", "1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(want, sizeof(want), "\n%s{%s%s} %s\n", cases[i].name, L0, cases[i].extra, cases[i].value);
		if (!strstr(t, want))
			fail_msg("missing line: %s", want + 1);
	}
	assert_non_null(strstr(t, "gpuctl_agent_info{hostname=\"node1\",version=\"0.1.0\",backend=\"sim\",simulated=\"true\",server=\"h200x8\"} 1\n"));
	assert_non_null(strstr(t, "# SIMULATED server 'h200x8'"));
	/* only flagged processes have a growth series */
	assert_null(strstr(t, "gpuctl_process_memory_growth_bytes_per_second{gpu=\"1\""));
	/* GPU 1 has health status 2 */
	assert_non_null(strstr(t, "gpuctl_gpu_health_status{gpu=\"1\","));
	free(t);
	free(sn);
}

static void test_unsupported_is_absent(void **state)
{
	(void)state;
	struct snapshot *sn = full_snapshot(2);
	VAL_MARK(sn->gpu[1].s.power_mw, VAL_UNSUPPORTED);
	VAL_MARK(sn->gpu[1].s.fan_pct, VAL_ERROR);
	VAL_MARK(sn->gpu[0].s.fan_pct, VAL_UNSUPPORTED);
	struct metrics_opts o;
	full_opts(&o);
	char *t = render(sn, &o);
	assert_non_null(strstr(t, "gpuctl_gpu_power_watts{gpu=\"0\""));
	assert_null(strstr(t, "gpuctl_gpu_power_watts{gpu=\"1\""));
	/* no GPU has a fan value: the whole family, HELP and TYPE included, is gone */
	assert_null(strstr(t, "gpuctl_gpu_fan_speed_ratio"));
	free(t);
	free(sn);
}

static void test_down_gpu(void **state)
{
	(void)state;
	struct snapshot *sn = full_snapshot(2);
	sn->gpu[1].up = false;
	snprintf(sn->gpu[1].last_error, sizeof(sn->gpu[1].last_error), "GPU 1 is lost");
	struct metrics_opts o;
	full_opts(&o);
	char *t = render(sn, &o);
	assert_non_null(strstr(t, "gpuctl_gpu_up{gpu=\"1\","));
	assert_non_null(strstr(t, "gpuctl_gpu_up{gpu=\"0\","));
	char *up1 = strstr(t, "gpuctl_gpu_up{gpu=\"1\",");
	assert_non_null(strstr(up1, "} 0\n"));
	assert_true(strstr(up1, "} 0\n") < strchr(up1, '\n') + 1);
	/* no stale telemetry for the down GPU, but its XID counts and bookkeeping stay */
	assert_null(strstr(t, "gpuctl_gpu_memory_used_bytes{gpu=\"1\""));
	assert_null(strstr(t, "gpuctl_gpu_power_watts{gpu=\"1\""));
	assert_null(strstr(t, "gpuctl_gpu_process_memory_used_bytes{gpu=\"1\""));
	assert_non_null(strstr(t, "gpuctl_gpu_xid_errors_total{gpu=\"1\""));
	assert_non_null(strstr(t, "gpuctl_gpu_sample_age_seconds{gpu=\"1\""));
	assert_non_null(strstr(t, "gpuctl_gpu_sample_errors_total{gpu=\"1\""));
	free(t);
	free(sn);
}

/* A pid listed twice on a GPU (compute and graphics) gives one series, with the larger figure. */
static void test_duplicate_process_one_series(void **state)
{
	(void)state;
	struct snapshot *sn = full_snapshot(1);
	struct gpu_view *v = &sn->gpu[0];
	v->nproc = 3;
	v->procs[1] = v->procs[0];
	v->procs[1].type = 'G';
	VAL_SET(v->procs[1].used_mem_bytes, 9000000000ull);
	v->procs[2] = v->procs[0];
	v->procs[2].pid = 5151;
	struct metrics_opts o;
	full_opts(&o);
	o.leaks = NULL; /* the leak series of pid 4242 is not this test's subject */
	o.nleaks = 0;
	char *t = render(sn, &o);
	const char *first = strstr(t, "pid=\"4242\"");
	assert_non_null(first);
	assert_null(strstr(first + 1, "pid=\"4242\""));
	assert_non_null(strstr(first, "comm=\"python3\"} 9000000000\n"));
	assert_non_null(strstr(t, "pid=\"5151\""));
	free(t);
	free(sn);
}

static void test_escaping_and_extra_labels(void **state)
{
	(void)state;
	struct snapshot *sn = full_snapshot(1);
	set_str(&sn->gpu[0].st.name, "odd \"name\"\\x\ny");
	struct metrics_opts o;
	full_opts(&o);
	o.nlabels = 1;
	snprintf(o.labels[0].key, sizeof(o.labels[0].key), "rack");
	snprintf(o.labels[0].value, sizeof(o.labels[0].value), "r\"1");
	o.hostname = "override";
	char *t = render(sn, &o);
	assert_non_null(strstr(t, "model=\"odd \\\"name\\\"\\\\x\\ny\",hostname=\"override\",rack=\"r\\\"1\"}"));
	assert_non_null(strstr(t, "gpuctl_agent_gpus{hostname=\"override\",rack=\"r\\\"1\"} 1\n"));
	free(t);
	/* process names are bytes: invalid UTF-8 and control characters become '?' */
	snprintf(sn->gpu[0].procs[0].name, sizeof(sn->gpu[0].procs[0].name), "py\xfft\x01h\xc3\xa9");
	t = render(sn, &o);
	assert_non_null(strstr(t, "comm=\"py?t?h\xc3\xa9\"}"));
	free(t);
	free(sn);
}

/* Every sample's family was declared by HELP and TYPE just before its run of
 * samples, and no family appears in two runs. Returns the families seen. */
static unsigned check_structure(const char *t, bool om, char names[][96], unsigned max)
{
	unsigned n = 0;
	char fam[96] = "";
	bool have_help = false;
	const char *p = t;
	while (*p) {
		const char *e = strchr(p, '\n');
		assert_non_null(e);
		size_t len = (size_t)(e - p);
		char line[2048];
		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		p = e + 1;
		if (strncmp(line, "# HELP ", 7) == 0) {
			sscanf(line + 7, "%95s", fam);
			for (unsigned i = 0; i < n; i++)
				if (strcmp(names[i], fam) == 0)
					fail_msg("family %s appears twice", fam);
			assert_true(n < max);
			snprintf(names[n++], 96, "%s", fam);
			have_help = true;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char name[96], type[32];
			assert_int_equal(sscanf(line + 7, "%95s %31s", name, type), 2);
			assert_true(have_help);
			assert_string_equal(name, fam);
			assert_true(strcmp(type, "gauge") == 0 || strcmp(type, "counter") == 0);
			continue;
		}
		if (line[0] == '#') {
			if (om)
				assert_string_equal(line, "# EOF");
			continue;
		}
		char sample[96];
		assert_int_equal(sscanf(line, "%95[^{ ]", sample), 1);
		size_t fl = strlen(fam);
		if (strncmp(sample, fam, fl) != 0 || (sample[fl] && strcmp(sample + fl, "_total") != 0))
			fail_msg("sample %s outside its family (%s)", sample, fam);
		const char *v = strrchr(line, ' ');
		assert_non_null(v);
		char *end;
		strtod(v + 1, &end);
		assert_true(*end == '\0');
	}
	return n;
}

static void test_structure_both_formats(void **state)
{
	(void)state;
	static char names[256][96];
	struct snapshot *sn = full_snapshot(2);
	struct metrics_opts o;
	full_opts(&o);
	char *t = render(sn, &o);
	unsigned n = check_structure(t, false, names, 256);
	/* a fully populated snapshot makes every metric of the table appear */
	assert_int_equal(n, metric_table_n);
	for (size_t i = 0; i < metric_table_n; i++) {
		char help[160];
		snprintf(help, sizeof(help), "# HELP %s ", metric_table[i].name);
		if (!strstr(t, help))
			fail_msg("metric %s not emitted", metric_table[i].name);
	}
	free(t);
	o.openmetrics = true;
	t = render(sn, &o);
	n = check_structure(t, true, names, 256);
	assert_int_equal(n, metric_table_n);
	size_t len = strlen(t);
	assert_true(len > 6 && strcmp(t + len - 6, "# EOF\n") == 0);
	assert_non_null(strstr(t, "# TYPE gpuctl_gpu_energy_joules counter\n"));
	assert_non_null(strstr(t, "\ngpuctl_gpu_energy_joules_total{"));
	assert_null(strstr(t, "# SIMULATED"));
	assert_non_null(strstr(t, "simulated=\"true\""));
	free(t);
	free(sn);
}

/* Issue 38, item 5: free text from the server file, NVML or /proc (the
 * simulated server's name in the comment, process names, serials in label
 * values) never starts a line of its own nor carries a control character. */
static void test_hostile_text(void **state)
{
	(void)state;
	static char names[256][96];
	static const char evil[] = "x'\n# HELP fake_metric x\nfake_metric 1\n\x1b]0;t\x07\x1b[2J\xc2\x9b";
	struct snapshot *sn = full_snapshot(1);
	snprintf(sn->sys.server_name, sizeof(sn->sys.server_name), "%s", evil);
	set_str(&sn->sys.hostname, evil);
	set_str(&sn->gpu[0].st.serial, evil);
	snprintf(sn->gpu[0].procs[0].name, sizeof(sn->gpu[0].procs[0].name), "%s", evil);
	snprintf(sn->gpu[0].procs[0].user, sizeof(sn->gpu[0].procs[0].user), "u\nfake_metric 2");
	struct metrics_opts o;
	full_opts(&o);
	char *t = render(sn, &o);
	check_structure(t, false, names, 256);
	assert_null(strstr(t, "\nfake_metric"));
	assert_null(strchr(t, '\x1b'));
	assert_null(strchr(t, '\x07'));
	assert_null(strstr(t, "\xc2\x9b"));
	assert_non_null(strstr(t, "# SIMULATED server 'x'?# HELP fake_metric x?fake_metric 1??]0;t??[2J?': not real hardware\n"));
	assert_non_null(strstr(t, "comm=\"x'\\n# HELP fake_metric x\\nfake_metric 1\\n?]0;t??[2J?\"}"));
	free(t);
	free(sn);
}

static void test_groups(void **state)
{
	(void)state;
	unsigned g = 0;
	char err[256];
	assert_int_equal(metrics_groups_parse("basic, xid", &g, err, sizeof(err)), 0);
	assert_int_equal(g, MG_BASIC | MG_XID);
	assert_int_equal(metrics_groups_parse("all", &g, err, sizeof(err)), 0);
	assert_int_equal(g, MG_ALL);
	assert_int_equal(metrics_groups_parse("basic,bogus", &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown metric group 'bogus' (known: all, basic, ecc, pcie, nvlink, throttle, "
				    "processes, mig, xid, health, prof)"));
	/* metric groups are not sampler groups: each maps to what it is read from */
	assert_int_equal(metrics_sampler_groups(MG_PROCESSES | MG_MIG | MG_XID | MG_HEALTH), 0);
	assert_int_equal(metrics_sampler_groups(MG_BASIC), GPU_GRP_BASIC | GPU_GRP_ENERGY);
	assert_int_equal(metrics_sampler_groups(MG_THROTTLE), GPU_GRP_VIOL);
	assert_int_equal(metrics_sampler_groups(MG_PROF), GPU_GRP_GPM);
	assert_int_equal(metrics_sampler_groups(MG_NVLINK), GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	assert_int_equal(metrics_sampler_groups(MG_ALL), GPU_GRP_ALL);
	assert_int_equal(metrics_groups_parse(" , ", &g, err, sizeof(err)), -1);

	struct snapshot *sn = full_snapshot(1);
	struct metrics_opts o;
	full_opts(&o);
	o.groups = MG_BASIC;
	char *t = render(sn, &o);
	assert_non_null(strstr(t, "gpuctl_gpu_power_watts{"));
	assert_non_null(strstr(t, "gpuctl_gpu_up{"));
	assert_null(strstr(t, "ecc"));
	assert_null(strstr(t, "nvlink"));
	assert_null(strstr(t, "xid"));
	assert_null(strstr(t, "process"));
	assert_null(strstr(t, "clock_event_seconds"));
	free(t);
	free(sn);

	assert_true(metrics_label_name_ok("datacenter"));
	assert_false(metrics_label_name_ok("gpu"));
	assert_false(metrics_label_name_ok("__x"));
	assert_false(metrics_label_name_ok("9a"));
	assert_false(metrics_label_name_ok("a-b"));
}

/* The field table's families: a SERIES row continues the family just above
 * (its name and type), a FAMILY row has its help and a name the table has once. */
static void test_field_table_families(void **state)
{
	(void)state;
	static const struct { const char *member, *role, *metric, *type, *labels, *help, *series; } rows[] = {
#define ROW(member, group, unit, api_key, role, metric, type, labels, help, series, ...) \
	{ #member, #role, metric, #type, labels, help, series },
		GPU_SAMPLE_FIELDS(ROW)
#undef ROW
	};
	const size_t n = sizeof(rows) / sizeof(rows[0]);
	size_t family = n;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].role, "NONE") == 0) {
			family = n;
			continue;
		}
		if (strcmp(rows[i].role, "SERIES") == 0) {
			if (family == n)
				fail_msg("%s: a SERIES row with no family above", rows[i].member);
			if (strcmp(rows[i].metric, rows[family].metric) != 0 || strcmp(rows[i].type, rows[family].type) != 0)
				fail_msg("%s: names %s %s, the family above is %s %s", rows[i].member, rows[i].type, rows[i].metric,
					 rows[family].type, rows[family].metric);
			assert_null(rows[i].help);
			assert_true(rows[i].series[0] && rows[family].series[0]); /* series tell themselves apart */
			continue;
		}
		assert_string_equal(rows[i].role, "FAMILY");
		assert_non_null(rows[i].help);
		assert_non_null(rows[i].labels);
		size_t len = strlen(rows[i].metric);
		bool total = len > 6 && strcmp(rows[i].metric + len - 6, "_total") == 0;
		assert_int_equal(total, strcmp(rows[i].type, "COUNTER") == 0);
		for (size_t j = 0; j < i; j++)
			if (strcmp(rows[j].role, "FAMILY") == 0 && strcmp(rows[j].metric, rows[i].metric) == 0)
				fail_msg("%s: family %s starts twice in the table", rows[i].member, rows[i].metric);
		family = i;
	}
}

/* docs/metrics.md lists every metric in the table, and names nothing else. */
static void test_docs_list_every_metric(void **state)
{
	(void)state;
	const char *dir = getenv("GPUCTL_TEST_DIR");
	assert_non_null(dir);
	char path[1024], err[256];
	snprintf(path, sizeof(path), "%s/../docs/metrics.md", dir);
	size_t len = 0;
	char *doc = read_whole_file(path, 1 << 20, &len, err, sizeof(err));
	if (!doc)
		fail_msg("cannot read %s: %s", path, err);
	for (size_t i = 0; i < metric_table_n; i++) {
		char cell[160];
		snprintf(cell, sizeof(cell), "| `%s` |", metric_table[i].name);
		if (!strstr(doc, cell))
			fail_msg("docs/metrics.md has no row for %s", metric_table[i].name);
	}
	/* the pool's families have rows too (its own table) */
	for (size_t i = 0; pool_metric_name(i); i++) {
		char cell[160];
		snprintf(cell, sizeof(cell), "`%s`", pool_metric_name(i));
		if (!strstr(doc, cell))
			fail_msg("docs/metrics.md does not name the pool's %s", pool_metric_name(i));
	}
	/* every `gpuctl_...` row in the doc is a real metric */
	for (const char *p = strstr(doc, "| `gpuctl_"); p; p = strstr(p + 1, "| `gpuctl_")) {
		char name[128];
		assert_int_equal(sscanf(p + 3, "%127[a-z0-9_]", name), 1);
		bool found = false;
		for (size_t i = 0; i < metric_table_n && !found; i++)
			found = strcmp(metric_table[i].name, name) == 0;
		for (size_t i = 0; pool_metric_name(i) && !found; i++)
			found = strcmp(pool_metric_name(i), name) == 0;
		if (!found)
			fail_msg("docs/metrics.md lists %s, which the code does not emit", name);
	}
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_values),
		cmocka_unit_test(test_unsupported_is_absent),
		cmocka_unit_test(test_down_gpu),
		cmocka_unit_test(test_duplicate_process_one_series),
		cmocka_unit_test(test_escaping_and_extra_labels),
		cmocka_unit_test(test_structure_both_formats),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_field_table_families),
		cmocka_unit_test(test_docs_list_every_metric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
