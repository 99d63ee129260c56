/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics_dcgm.c - the agent's dcgm-exporter names (agent/metrics_dcgm.h):
 * exact values, units and labels; nothing without the setting; absent values
 * absent; OpenMetrics' types; docs/metrics.md names every row, and every
 * counter of dcgm-exporter's default list is either served or listed there
 * as not served. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/metrics_dcgm.h"
#include "core/readfile.h"

static void set_str(strv *f, const char *s)
{
	snprintf(f->s, sizeof(f->s), "%s", s);
	f->st = VAL_OK;
}

static struct snapshot *snap2(void)
{
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(sn);
	sn->taken_ns = 1000000000000ull;
	set_str(&sn->sys.hostname, "node1");
	snprintf(sn->sys.server_name, sizeof(sn->sys.server_name), "h200x8");
	sn->n = 2;
	for (unsigned i = 0; i < 2; i++) {
		struct gpu_view *v = &sn->gpu[i];
		gpu_view_zero(v);
		v->up = true;
		set_str(&v->st.name, "NVIDIA H200");
		set_str(&v->st.uuid, i ? "GPU-1111" : "GPU-0000");
		set_str(&v->st.pci_bus_id, i ? "00000000:19:00.0" : "00000000:18:00.0");
		struct gpu_sample *s = &v->s;
		VAL_SET(s->mem_used_bytes, 1ull << 30);
		VAL_SET(s->mem_free_bytes, (3ull << 30) + 5);
		VAL_SET(s->power_mw, 350123);
		VAL_SET(s->util_gpu_pct, 87);
		VAL_SET(s->temp_c, 55);
		VAL_SET(s->sm_clock_mhz, 1980);
		VAL_SET(s->energy_mj, 123456789);
		VAL_SET(s->viol_power_ns, 1500000000);
		VAL_SET(s->prof_sm_active_pct, 92);
		VAL_SET(s->prof_tensor_active_pct, 7);
		VAL_SET(s->prof_pcie_tx_kbps, 1000);
	}
	/* GPU 0 saw XID 79 then 31: the last one is 31 */
	sn->gpu[0].nxid = 2;
	sn->gpu[0].xid[0].code = 79;
	sn->gpu[0].xid[0].count = 2;
	sn->gpu[0].xid[0].last_ns = 900;
	sn->gpu[0].xid[1].code = 31;
	sn->gpu[0].xid[1].count = 1;
	sn->gpu[0].xid[1].last_ns = 950;
	return sn;
}

static char *render(const struct snapshot *sn, bool compat, bool om)
{
	struct metrics_opts o;
	metrics_opts_default(&o);
	o.dcgm_compat = compat;
	o.openmetrics = om;
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, &o), 0);
	return b.p;
}

#define L0 "{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\"," \
	   "Hostname=\"node1\",container=\"\",namespace=\"\",pod=\"\"}"
#define L1 "{gpu=\"1\",UUID=\"GPU-1111\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia1\",modelName=\"NVIDIA H200\"," \
	   "Hostname=\"node1\",container=\"\",namespace=\"\",pod=\"\"}"

static void test_exact_values(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	char *t = render(sn, true, false);
	const char *want[] = {
		"# TYPE DCGM_FI_DEV_FB_USED gauge\n",
		"DCGM_FI_DEV_FB_USED" L0 " 1024\n",
		"DCGM_FI_DEV_FB_USED" L1 " 1024\n",
		"DCGM_FI_DEV_FB_FREE" L0 " 3072\n", /* whole MiB, as DCGM's */
		"DCGM_FI_DEV_POWER_USAGE" L0 " 350.123\n",
		"DCGM_FI_DEV_GPU_UTIL" L0 " 87\n",
		"DCGM_FI_DEV_GPU_TEMP" L0 " 55\n",
		"DCGM_FI_DEV_SM_CLOCK" L0 " 1980\n",
		"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" L0 " 123456789\n",
		"DCGM_FI_DEV_POWER_VIOLATION" L0 " 1500000\n", /* microseconds */
		"DCGM_FI_PROF_SM_ACTIVE" L0 " 0.92\n",          /* ratios */
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" L1 " 0.07\n",
		"DCGM_FI_PROF_PCIE_TX_BYTES" L0 " 1024000\n",   /* bytes per second */
		"DCGM_FI_DEV_XID_ERRORS" L0 " 31\n",
		"DCGM_FI_DEV_XID_ERRORS" L1 " 0\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(t, want[i]))
			fail_msg("missing: %s", want[i]);
	/* the gpuctl families are all still there */
	assert_non_null(strstr(t, "gpuctl_gpu_memory_used_bytes{"));
	/* a value the GPUs lack has no family at all */
	assert_null(strstr(t, "DCGM_FI_DEV_MEMORY_TEMP"));
	assert_null(strstr(t, "DCGM_FI_PROF_DRAM_ACTIVE"));
	free(t);
	snapshot_free(sn);
}

/* With MIG on: a DCGM_FI_PROF_* series per GPU instance, with GPU_I_PROFILE
 * and GPU_I_ID after the GPU's labels; one family head; none for an
 * instance without the figure. */
static void test_mig_instances(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	struct gpu_view *v = &sn->gpu[0];
	v->s.prof_sm_active_pct.st = VAL_UNSUPPORTED; /* MIG on: per instance only */
	v->s.prof_tensor_active_pct.st = VAL_UNSUPPORTED;
	v->nmig = 2;
	memset(v->mig, 0, 2 * sizeof(v->mig[0]));
	v->mig[0].gi_id = 2;
	snprintf(v->mig[0].profile, sizeof(v->mig[0].profile), "3g.71gb");
	VAL_SET(v->mig[0].prof_sm_active_pct, 93);
	VAL_SET(v->mig[0].prof_tensor_active_pct, 88);
	v->mig[1].gi_id = 9;
	snprintf(v->mig[1].profile, sizeof(v->mig[1].profile), "1g.18gb");
	VAL_SET(v->mig[1].prof_sm_active_pct, 0);
	v->mig[1].prof_tensor_active_pct.st = VAL_UNSUPPORTED;
	char *t = render(sn, true, false);
#define LM(gi, prof) \
	"{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\"," \
	"Hostname=\"node1\",container=\"\",namespace=\"\",pod=\"\",GPU_I_PROFILE=\"" prof "\",GPU_I_ID=\"" gi "\"}"
	const char *want[] = {
		"DCGM_FI_PROF_SM_ACTIVE" LM("2", "3g.71gb") " 0.93\n",
		"DCGM_FI_PROF_SM_ACTIVE" LM("9", "1g.18gb") " 0\n",
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" LM("2", "3g.71gb") " 0.88\n",
		"DCGM_FI_PROF_SM_ACTIVE" L1 " 0.92\n", /* GPU 1 without MIG: as before */
	};
#undef LM
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(t, want[i]))
			fail_msg("missing: %s", want[i]);
	assert_null(strstr(t, "DCGM_FI_PROF_SM_ACTIVE" L0));                    /* no GPU-wide series */
	assert_null(strstr(t, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\",Hostname=\"node1\",container=\"\",namespace=\"\",pod=\"\",GPU_I_PROFILE=\"1g.18gb\""));
	const char *head = strstr(t, "# TYPE DCGM_FI_PROF_SM_ACTIVE ");
	assert_non_null(head);
	assert_null(strstr(head + 1, "# TYPE DCGM_FI_PROF_SM_ACTIVE ")); /* one family head */
	free(t);
	snapshot_free(sn);
}

static void test_off_by_default(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	char *t = render(sn, false, false);
	/* (gpuctl's own HELP texts name their DCGM equivalents: no family, no series) */
	assert_null(strstr(t, "# TYPE DCGM_"));
	assert_null(strstr(t, "\nDCGM_"));
	free(t);
	snapshot_free(sn);
}

static void test_down_gpu_and_groups(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	sn->gpu[1].up = false;
	char *t = render(sn, true, false);
	assert_null(strstr(t, "gpu=\"1\",UUID"));
	assert_non_null(strstr(t, "DCGM_FI_DEV_FB_USED" L0));
	free(t);
	/* without the xid group the agent does not know the XIDs: no series */
	struct metrics_opts o;
	metrics_opts_default(&o);
	o.dcgm_compat = true;
	o.groups &= ~(unsigned)MG_XID;
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, &o), 0);
	assert_null(strstr(b.p, DCGM_COMPAT_XID_NAME));
	abuf_free(&b);
	snapshot_free(sn);
}

/* label.* settings: written after dcgm-exporter's, never a key twice; one named
 * as a Kubernetes label fills it. */
static void test_extra_labels(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	struct metrics_opts o;
	metrics_opts_default(&o);
	o.dcgm_compat = true;
	const char *kv[][2] = { { "namespace", "prod" }, { "device", "x" }, { "rack", "r1" } };
	for (unsigned k = 0; k < 3; k++) {
		snprintf(o.labels[k].key, sizeof(o.labels[k].key), "%s", kv[k][0]);
		snprintf(o.labels[k].value, sizeof(o.labels[k].value), "%s", kv[k][1]);
	}
	o.nlabels = 3;
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, &o), 0);
	assert_non_null(strstr(b.p, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\","
				    "device=\"nvidia0\",modelName=\"NVIDIA H200\",Hostname=\"node1\",container=\"\","
				    "namespace=\"prod\",pod=\"\",rack=\"r1\"} 1024\n"));
	/* no DCGM line names a key twice */
	for (const char *p = strstr(b.p, "\nDCGM_"); p; p = strstr(p + 1, "\nDCGM_")) {
		const char *open = strchr(p, '{'), *close = strchr(p, '}');
		assert_non_null(open);
		char keys[16][64];
		unsigned n = 0;
		for (const char *q = open + 1; q < close && n < 16; n++) {
			const char *eq = strchr(q, '=');
			snprintf(keys[n], sizeof(keys[n]), "%.*s", (int)(eq - q), q);
			for (unsigned j = 0; j < n; j++)
				if (strcmp(keys[j], keys[n]) == 0)
					fail_msg("key %s twice in %.200s", keys[n], p + 1);
			q = strchr(eq + 2, '"') + 1; /* past the value (no quote inside these) */
			if (*q == ',')
				q++;
		}
	}
	abuf_free(&b);
	snapshot_free(sn);
}

static void test_openmetrics_types(void **state)
{
	(void)state;
	struct snapshot *sn = snap2();
	char *t = render(sn, true, true);
	/* a counter named without _total cannot be an OpenMetrics counter */
	assert_non_null(strstr(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n"));
	assert_non_null(strstr(t, "# TYPE DCGM_FI_DEV_FB_USED gauge\n"));
	/* and the families stay before the end marker */
	const char *eof = strstr(t, "# EOF\n");
	assert_non_null(eof);
	assert_true(strstr(t, "DCGM_FI_DEV_XID_ERRORS") < eof);
	assert_string_equal(eof, "# EOF\n");
	free(t);
	snapshot_free(sn);
}

static char *read_rel(const char *rel)
{
	const char *dir = getenv("GPUCTL_TEST_DIR");
	assert_non_null(dir);
	char path[1024], err[256];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	size_t len = 0;
	char *doc = read_whole_file(path, 1 << 20, &len, err, sizeof(err));
	if (!doc)
		fail_msg("cannot read %s: %s", path, err);
	return doc;
}

static bool served(const char *name)
{
	for (size_t r = 0; r < dcgm_compat_rows_n; r++)
		if (strcmp(dcgm_compat_rows[r].name, name) == 0)
			return true;
	return strcmp(name, DCGM_COMPAT_XID_NAME) == 0;
}

/* docs/metrics.md has a row for every name served, and each of its DCGM rows is served or says it is not. */
static void test_docs_and_default_counters(void **state)
{
	(void)state;
	char *doc = read_rel("../docs/metrics.md");
	char cell[160];
	for (size_t r = 0; r <= dcgm_compat_rows_n; r++) {
		const char *name = r < dcgm_compat_rows_n ? dcgm_compat_rows[r].name : DCGM_COMPAT_XID_NAME;
		snprintf(cell, sizeof(cell), "| `%s` |", name);
		if (!strstr(doc, cell))
			fail_msg("docs/metrics.md has no row for %s", name);
	}
	for (const char *p = strstr(doc, "| `DCGM_FI_"); p; p = strstr(p + 1, "| `DCGM_FI_")) {
		char name[128];
		assert_int_equal(sscanf(p + 3, "%127[A-Z0-9_]", name), 1);
		const char *eol = strchr(p, '\n');
		bool says_not = eol && memmem(p, (size_t)(eol - p), "not served", 10);
		if (served(name) == says_not)
			fail_msg("docs/metrics.md: %s is %s but its row says otherwise", name, served(name) ? "served" : "not served");
	}
	/* every counter dcgm-exporter collects by default has its row */
	char *csv = read_rel("data/dcgm-exporter/default-counters.csv");
	unsigned n = 0;
	for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
		char name[128];
		if (line[0] == '#' || sscanf(line, " %127[A-Z0-9_]", name) != 1 || strncmp(name, "DCGM_FI_", 8) != 0)
			continue;
		n++;
		snprintf(cell, sizeof(cell), "| `%s` |", name);
		if (!strstr(doc, cell))
			fail_msg("docs/metrics.md has no row for dcgm-exporter's default counter %s", name);
	}
	assert_true(n >= 20);
	free(csv);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_values),
		cmocka_unit_test(test_mig_instances),
		cmocka_unit_test(test_off_by_default),
		cmocka_unit_test(test_down_gpu_and_groups),
		cmocka_unit_test(test_extra_labels),
		cmocka_unit_test(test_openmetrics_types),
		cmocka_unit_test(test_docs_and_default_counters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
