/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_store.c - the pool's SQLite state: a job's every column and its
 * accounting survive a reopen (what a restarted agent reads), active and
 * history listings, ids never reused; a database from before the GPM
 * columns is upgraded in place, its old rows reading "not read". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#include "pool/store.h"

static char dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpuctl-store-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobs.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct pool_job make(uint32_t uid, const char *name, enum job_state st)
{
	struct pool_job j;
	memset(&j, 0, sizeof(j));
	j.uid = uid;
	j.gid = uid + 1;
	snprintf(j.user, sizeof(j.user), "u%u", uid);
	snprintf(j.name, sizeof(j.name), "%s", name);
	j.state = st;
	snprintf(j.reason, sizeof(j.reason), "queued");
	j.priority = -3;
	j.submit_ns = 1000;
	j.req_gpus = 2;
	j.req_mask = 1ull << 63 | 1; /* the top bit survives the signed column */
	j.req_nvlink = true;
	j.req_mem = 40ull << 30;
	j.mig_gpu = j.mig_gi = -1;
	j.exit_code = -1;
	j.spec_json = strdup("{\"argv\":[\"a\"],\"env\":[],\"cwd\":\"/\"}");
	return j;
}

static int collect(void *arg, struct pool_job *j)
{
	unsigned *n = arg;
	(*n)++;
	free(j->spec_json);
	free(j);
	return 0;
}

static void test_roundtrip_and_reopen(void **state)
{
	(void)state;
	char err[256];
	struct store *st;
	assert_int_equal(store_open(&st, db, err, sizeof(err)), 0);
	struct pool_job a = make(1000, "first", JOB_PENDING), b = make(1001, "second", JOB_PENDING);
	assert_int_equal(store_insert(st, &a), 0);
	assert_int_equal(store_insert(st, &b), 0);
	assert_true(a.id > 0 && b.id == a.id + 1);
	/* b starts, runs, ends */
	b.state = JOB_DONE;
	b.gpu_mask = 0x0c;
	snprintf(b.devices, sizeof(b.devices), "GPU-a,GPU-b");
	b.shim_pid = 4242;
	b.shim_start_ticks = 123456789;
	b.job_pid = 4243;
	snprintf(b.cgroup, sizeof(b.cgroup), "/sys/fs/cgroup/gpuctl-job-2");
	snprintf(b.boot_id, sizeof(b.boot_id), "boot-1");
	b.exit_code = 3;
	b.start_ns = 2000;
	b.end_ns = 5000;
	assert_int_equal(store_update(st, &b), 0);
	struct acct_summary s = { .gpu = 2, .gpu_seconds = 3.5, .energy_ok = true, .energy_j = 812.25, .util_ok = true,
				  .util_avg_pct = 61.5, .util_peak_pct = 99, .mem_ok = false, .throttle_reasons = 0x20,
				  .viol_ok = true, .throttle_power_s = 0.5, .nxid = 2, .samples = 7 };
	s.gpm_ok[ACCT_GPM_SM] = s.gpm_ok[ACCT_GPM_DRAM] = true; /* tensor: not read */
	s.gpm_avg_pct[ACCT_GPM_SM] = 93.5;
	s.gpm_avg_pct[ACCT_GPM_DRAM] = 17;
	s.xid[0].code = 79;
	s.xid[0].count = 1;
	s.xid[1].code = 48;
	s.xid[1].count = 4;
	assert_int_equal(store_put_acct(st, b.id, &s), 0);
	store_close(st);

	assert_int_equal(store_open(&st, db, err, sizeof(err)), 0);
	struct pool_job g;
	assert_int_equal(store_get(st, b.id, &g), 1);
	assert_int_equal(g.state, JOB_DONE);
	assert_int_equal(g.gpu_mask, 0x0c);
	assert_int_equal(g.req_mask, 1ull << 63 | 1);
	assert_int_equal(g.req_mem, 40ull << 30);
	assert_true(g.req_nvlink);
	assert_int_equal(g.priority, -3);
	assert_int_equal(g.shim_start_ticks, 123456789);
	assert_int_equal(g.exit_code, 3);
	assert_int_equal(g.mig_gpu, -1);
	assert_string_equal(g.devices, "GPU-a,GPU-b");
	assert_string_equal(g.boot_id, "boot-1");
	assert_string_equal(g.spec_json, b.spec_json);
	free(g.spec_json);
	assert_int_equal(store_get(st, 999, &g), 0);

	struct acct_summary out[4];
	unsigned n = 0;
	assert_int_equal(store_get_acct(st, b.id, out, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_true(out[0].energy_ok && !out[0].mem_ok && out[0].util_ok && out[0].viol_ok);
	assert_true(out[0].energy_j == 812.25);
	assert_int_equal(out[0].nxid, 2);
	assert_int_equal(out[0].xid[1].code, 48);
	assert_int_equal(out[0].xid[1].count, 4);
	assert_int_equal(out[0].samples, 7);
	assert_true(out[0].gpm_ok[ACCT_GPM_SM] && !out[0].gpm_ok[ACCT_GPM_TENSOR] && out[0].gpm_ok[ACCT_GPM_DRAM]);
	assert_true(out[0].gpm_avg_pct[ACCT_GPM_SM] == 93.5 && out[0].gpm_avg_pct[ACCT_GPM_DRAM] == 17);

	unsigned active = 0, hist = 0, mine = 0;
	assert_int_equal(store_walk(st, false, UINT32_MAX, 0, collect, &active), 0);
	assert_int_equal(store_walk(st, true, UINT32_MAX, 0, collect, &hist), 0);
	assert_int_equal(store_walk(st, true, 1001, 0, collect, &mine), 0);
	assert_int_equal(active, 1); /* a is pending, b ended */
	assert_int_equal(hist, 2);
	assert_int_equal(mine, 1);
	/* a deleted row's id is not given again (AUTOINCREMENT) */
	struct pool_job c = make(7, "third", JOB_PENDING);
	assert_int_equal(store_insert(st, &c), 0);
	assert_int_equal(c.id, b.id + 1);
	store_close(st);
	free(a.spec_json);
	free(b.spec_json);
	free(c.spec_json);
}

static void test_open_errors(void **state)
{
	(void)state;
	char err[256] = "";
	struct store *st = NULL;
	assert_int_equal(store_open(&st, "/nonexistent-dir/x/jobs.db", err, sizeof(err)), -1);
	assert_null(st);
	assert_non_null(strstr(err, "cannot open the database"));
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/garbage.db", dir);
	FILE *f = fopen(bad, "w");
	fputs("this is not a database, not at all, it is text long enough to be a header................", f);
	fclose(f);
	assert_int_equal(store_open(&st, bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "garbage.db"));
}

/* The accounting table as releases before the GPM means made it, with a row. */
static void test_upgrade(void **state)
{
	(void)state;
	char old[160];
	snprintf(old, sizeof(old), "%s/old.db", dir);
	sqlite3 *db3 = NULL;
	assert_int_equal(sqlite3_open(old, &db3), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db3,
				      "CREATE TABLE acct(job_id INTEGER NOT NULL, gpu INTEGER NOT NULL,"
				      " gpu_seconds REAL NOT NULL, energy_j REAL, util_avg_pct REAL, util_peak_pct REAL,"
				      " mem_avg_bytes REAL, mem_peak_bytes REAL, throttle_reasons INTEGER NOT NULL,"
				      " throttle_power_s REAL, throttle_thermal_s REAL, xids TEXT NOT NULL,"
				      " samples INTEGER NOT NULL, PRIMARY KEY(job_id, gpu));"
				      "INSERT INTO acct VALUES(5, 0, 2.0, 10.0, 50, 60, NULL, NULL, 0, NULL, NULL, '{}', 3);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db3);
	char err[256] = "";
	struct store *st = NULL;
	assert_int_equal(store_open(&st, old, err, sizeof(err)), 0);
	struct acct_summary out[2];
	unsigned n = 0;
	assert_int_equal(store_get_acct(st, 5, out, 2, &n), 0);
	assert_int_equal(n, 1);
	assert_true(out[0].util_ok && out[0].util_avg_pct == 50 && out[0].samples == 3);
	for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
		assert_false(out[0].gpm_ok[m]); /* the old row: not read, never 0 */
	struct acct_summary s = { .gpu = 1, .gpu_seconds = 1, .samples = 1 };
	s.gpm_ok[ACCT_GPM_TENSOR] = true;
	s.gpm_avg_pct[ACCT_GPM_TENSOR] = 88;
	assert_int_equal(store_put_acct(st, 5, &s), 0);
	store_close(st);
	/* opened again: nothing more to add, both rows read */
	assert_int_equal(store_open(&st, old, err, sizeof(err)), 0);
	assert_int_equal(store_get_acct(st, 5, out, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_true(out[1].gpm_ok[ACCT_GPM_TENSOR] && out[1].gpm_avg_pct[ACCT_GPM_TENSOR] == 88);
	assert_false(out[1].gpm_ok[ACCT_GPM_SM]);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_and_reopen),
		cmocka_unit_test(test_upgrade),
		cmocka_unit_test(test_open_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
