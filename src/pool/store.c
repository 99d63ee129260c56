/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - see store.h. */
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
	sqlite3 *db;
	sqlite3_stmt *insert, *update, *get, *put_acct, *get_acct;
	char err[256];
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS jobs("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,"
	" user TEXT NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, priority INTEGER NOT NULL,"
	" submit_ns INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
	" time_limit_ns INTEGER NOT NULL, after_job INTEGER NOT NULL, req_gpus INTEGER NOT NULL,"
	" req_mask INTEGER NOT NULL, req_nvlink INTEGER NOT NULL, req_mem INTEGER NOT NULL,"
	" mig_profile TEXT NOT NULL, shell INTEGER NOT NULL, spec TEXT NOT NULL, gpu_mask INTEGER NOT NULL,"
	" mig_gpu INTEGER NOT NULL, mig_gi INTEGER NOT NULL, devices TEXT NOT NULL, shim_pid INTEGER NOT NULL,"
	" shim_start INTEGER NOT NULL, job_pid INTEGER NOT NULL, cgroup TEXT NOT NULL, boot_id TEXT NOT NULL,"
	" exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS jobs_active ON jobs(state) WHERE state IN ('pending','starting','running');"
	"CREATE TABLE IF NOT EXISTS acct("
	" job_id INTEGER NOT NULL, gpu INTEGER NOT NULL, gpu_seconds REAL NOT NULL, energy_j REAL,"
	" util_avg_pct REAL, util_peak_pct REAL, mem_avg_bytes REAL, mem_peak_bytes REAL,"
	" throttle_reasons INTEGER NOT NULL, throttle_power_s REAL, throttle_thermal_s REAL,"
	" xids TEXT NOT NULL, samples INTEGER NOT NULL, sm_active_avg_pct REAL, tensor_active_avg_pct REAL,"
	" dram_active_avg_pct REAL, PRIMARY KEY(job_id, gpu));";

/* Columns added after the first release, in the order they were: a database
 * made before one is upgraded in place (ALTER TABLE ... ADD COLUMN; the old
 * rows read NULL, "not read"). The schema above has them all, at the end, in
 * this order, so that a new and an upgraded table are the same. */
static const struct { const char *table, *column, *type; } added[] = {
	{ "acct", "sm_active_avg_pct", "REAL" },     /* GPM means (issue 32) */
	{ "acct", "tensor_active_avg_pct", "REAL" },
	{ "acct", "dram_active_avg_pct", "REAL" },
};

static int has_column(sqlite3 *db, const char *table, const char *column, bool *has)
{
	char sql[96];
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	*has = false;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (strcmp((const char *)sqlite3_column_text(s, 1), column) == 0)
			*has = true;
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Adds the columns an older database lacks. 0, or -1 with *msg (sqlite's). */
static int upgrade(sqlite3 *db, char **msg)
{
	for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++) {
		bool has;
		if (has_column(db, added[i].table, added[i].column, &has)) {
			*msg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			return -1;
		}
		if (has)
			continue;
		char sql[160];
		snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", added[i].table, added[i].column,
			 added[i].type);
		if (sqlite3_exec(db, sql, NULL, NULL, msg) != SQLITE_OK)
			return -1;
	}
	return 0;
}

#define COLS "id, name, uid, gid, user, state, reason, priority, submit_ns, start_ns, end_ns, time_limit_ns," \
	" after_job, req_gpus, req_mask, req_nvlink, req_mem, mig_profile, shell, spec, gpu_mask, mig_gpu, mig_gi," \
	" devices, shim_pid, shim_start, job_pid, cgroup, boot_id, exit_code, exit_signal"

static int fail(struct store *st, const char *what)
{
	snprintf(st->err, sizeof(st->err), "%s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

const char *store_error(const struct store *st)
{
	return st->err;
}

int store_open(struct store **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	struct store *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open the database '%s': %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		store_close(st);
		return -1;
	}
	sqlite3_busy_timeout(st->db, 5000);
	char *msg = NULL;
	if (sqlite3_exec(st->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL,
			 NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(st->db, schema, NULL, NULL, &msg) != SQLITE_OK || upgrade(st->db, &msg)) {
		snprintf(err, errlen, "database '%s': %s", path, msg ? msg : "error");
		sqlite3_free(msg);
		store_close(st);
		return -1;
	}
	const struct { sqlite3_stmt **stmt; const char *sql; } stmts[] = {
		{ &st->insert, "INSERT INTO jobs(" COLS ") VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
		{ &st->update, "UPDATE jobs SET name=?1, uid=?2, gid=?3, user=?4, state=?5, reason=?6, priority=?7,"
			       " submit_ns=?8, start_ns=?9, end_ns=?10, time_limit_ns=?11, after_job=?12, req_gpus=?13,"
			       " req_mask=?14, req_nvlink=?15, req_mem=?16, mig_profile=?17, shell=?18, spec=?19,"
			       " gpu_mask=?20, mig_gpu=?21, mig_gi=?22, devices=?23, shim_pid=?24, shim_start=?25,"
			       " job_pid=?26, cgroup=?27, boot_id=?28, exit_code=?29, exit_signal=?30 WHERE id=?31" },
		{ &st->get, "SELECT " COLS " FROM jobs WHERE id=?" },
		{ &st->put_acct, "INSERT OR REPLACE INTO acct VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
		{ &st->get_acct, "SELECT gpu, gpu_seconds, energy_j, util_avg_pct, util_peak_pct, mem_avg_bytes,"
				 " mem_peak_bytes, throttle_reasons, throttle_power_s, throttle_thermal_s, xids, samples,"
				 " sm_active_avg_pct, tensor_active_avg_pct, dram_active_avg_pct FROM acct WHERE job_id=? ORDER BY gpu" },
	};
	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
		if (sqlite3_prepare_v2(st->db, stmts[i].sql, -1, stmts[i].stmt, NULL) != SQLITE_OK) {
			snprintf(err, errlen, "database '%s': %s", path, sqlite3_errmsg(st->db));
			store_close(st);
			return -1;
		}
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->update);
	sqlite3_finalize(st->get);
	sqlite3_finalize(st->put_acct);
	sqlite3_finalize(st->get_acct);
	sqlite3_close(st->db);
	free(st);
}

/* Binds the 30 columns after id, in COLS order, from parameter 1. */
static void bind_job(sqlite3_stmt *s, const struct pool_job *j)
{
	int k = 1;
	sqlite3_bind_text(s, k++, j->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, k++, j->uid);
	sqlite3_bind_int64(s, k++, j->gid);
	sqlite3_bind_text(s, k++, j->user, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, k++, job_state_name(j->state), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, k++, j->reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, k++, j->priority);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->submit_ns);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->start_ns);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->end_ns);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->time_limit_ns);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->after);
	sqlite3_bind_int(s, k++, (int)j->req_gpus);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->req_mask);
	sqlite3_bind_int(s, k++, j->req_nvlink);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->req_mem);
	sqlite3_bind_text(s, k++, j->mig_profile, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, k++, j->shell);
	sqlite3_bind_text(s, k++, j->spec_json ? j->spec_json : "{}", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->gpu_mask);
	sqlite3_bind_int(s, k++, j->mig_gpu);
	sqlite3_bind_int(s, k++, j->mig_gi);
	sqlite3_bind_text(s, k++, j->devices, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, k++, j->shim_pid);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)j->shim_start_ticks);
	sqlite3_bind_int(s, k++, j->job_pid);
	sqlite3_bind_text(s, k++, j->cgroup, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, k++, j->boot_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, k++, j->exit_code);
	sqlite3_bind_int(s, k++, j->exit_signal);
}

static void col_text(sqlite3_stmt *s, int c, char *out, size_t outlen)
{
	const unsigned char *t = sqlite3_column_text(s, c);
	snprintf(out, outlen, "%s", t ? (const char *)t : "");
}

static int read_job(sqlite3_stmt *s, struct pool_job *j)
{
	memset(j, 0, sizeof(*j));
	int k = 0;
	j->id = (uint64_t)sqlite3_column_int64(s, k++);
	col_text(s, k++, j->name, sizeof(j->name));
	j->uid = (uint32_t)sqlite3_column_int64(s, k++);
	j->gid = (uint32_t)sqlite3_column_int64(s, k++);
	col_text(s, k++, j->user, sizeof(j->user));
	char state[16];
	col_text(s, k++, state, sizeof(state));
	int st = job_state_parse(state);
	j->state = st < 0 ? JOB_LOST : (enum job_state)st;
	col_text(s, k++, j->reason, sizeof(j->reason));
	j->priority = sqlite3_column_int(s, k++);
	j->submit_ns = (uint64_t)sqlite3_column_int64(s, k++);
	j->start_ns = (uint64_t)sqlite3_column_int64(s, k++);
	j->end_ns = (uint64_t)sqlite3_column_int64(s, k++);
	j->time_limit_ns = (uint64_t)sqlite3_column_int64(s, k++);
	j->after = (uint64_t)sqlite3_column_int64(s, k++);
	j->req_gpus = (unsigned)sqlite3_column_int(s, k++);
	j->req_mask = (uint64_t)sqlite3_column_int64(s, k++);
	j->req_nvlink = sqlite3_column_int(s, k++) != 0;
	j->req_mem = (uint64_t)sqlite3_column_int64(s, k++);
	col_text(s, k++, j->mig_profile, sizeof(j->mig_profile));
	j->shell = sqlite3_column_int(s, k++) != 0;
	const unsigned char *spec = sqlite3_column_text(s, k++);
	j->spec_json = strdup(spec ? (const char *)spec : "{}");
	j->gpu_mask = (uint64_t)sqlite3_column_int64(s, k++);
	j->mig_gpu = sqlite3_column_int(s, k++);
	j->mig_gi = sqlite3_column_int(s, k++);
	col_text(s, k++, j->devices, sizeof(j->devices));
	j->shim_pid = sqlite3_column_int(s, k++);
	j->shim_start_ticks = (uint64_t)sqlite3_column_int64(s, k++);
	j->job_pid = sqlite3_column_int(s, k++);
	col_text(s, k++, j->cgroup, sizeof(j->cgroup));
	col_text(s, k++, j->boot_id, sizeof(j->boot_id));
	j->exit_code = sqlite3_column_int(s, k++);
	j->exit_signal = sqlite3_column_int(s, k++);
	return j->spec_json ? 0 : -1;
}

int store_insert(struct store *st, struct pool_job *j)
{
	sqlite3_reset(st->insert);
	bind_job(st->insert, j);
	if (sqlite3_step(st->insert) != SQLITE_DONE)
		return fail(st, "saving a job");
	j->id = (uint64_t)sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_update(struct store *st, const struct pool_job *j)
{
	sqlite3_reset(st->update);
	bind_job(st->update, j);
	sqlite3_bind_int64(st->update, 31, (sqlite3_int64)j->id);
	if (sqlite3_step(st->update) != SQLITE_DONE)
		return fail(st, "updating a job");
	return 0;
}

int store_get(struct store *st, uint64_t id, struct pool_job *out)
{
	sqlite3_reset(st->get);
	sqlite3_bind_int64(st->get, 1, (sqlite3_int64)id);
	int rc = sqlite3_step(st->get);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return fail(st, "reading a job");
	if (read_job(st->get, out)) {
		snprintf(st->err, sizeof(st->err), "out of memory");
		return -1;
	}
	sqlite3_reset(st->get);
	return 1;
}

int store_walk(struct store *st, bool history, uint32_t uid, unsigned limit, store_job_cb cb, void *arg)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT " COLS " FROM jobs WHERE %s %s ORDER BY id %s %s",
		 history ? "1" : "state IN ('pending','starting','running')", uid == UINT32_MAX ? "" : "AND uid=?1",
		 history ? "DESC" : "ASC", limit ? "LIMIT ?2" : "");
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return fail(st, "listing jobs");
	if (uid != UINT32_MAX)
		sqlite3_bind_int64(s, 1, uid);
	if (limit)
		sqlite3_bind_int64(s, 2, limit);
	int rc = 0, step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct pool_job *j = malloc(sizeof(*j));
		if (!j || read_job(s, j)) {
			if (j)
				free(j->spec_json);
			free(j);
			snprintf(st->err, sizeof(st->err), "out of memory");
			rc = -1;
			break;
		}
		if (cb(arg, j))
			break;
	}
	if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE)
		rc = fail(st, "listing jobs");
	sqlite3_finalize(s);
	return rc;
}

int store_put_acct(struct store *st, uint64_t job, const struct acct_summary *a)
{
	sqlite3_stmt *s = st->put_acct;
	sqlite3_reset(s);
	char xids[256] = "{";
	size_t off = 1;
	for (unsigned i = 0; i < a->nxid && off < sizeof(xids) - 32; i++)
		off += (size_t)snprintf(xids + off, sizeof(xids) - off, "%s\"%llu\":%llu", i ? "," : "",
					(unsigned long long)a->xid[i].code, (unsigned long long)a->xid[i].count);
	snprintf(xids + off, sizeof(xids) - off, "}");
	int k = 1;
	sqlite3_bind_int64(s, k++, (sqlite3_int64)job);
	sqlite3_bind_int(s, k++, (int)a->gpu);
	sqlite3_bind_double(s, k++, a->gpu_seconds);
	if (a->energy_ok)
		sqlite3_bind_double(s, k++, a->energy_j);
	else
		sqlite3_bind_null(s, k++);
	if (a->util_ok) {
		sqlite3_bind_double(s, k++, a->util_avg_pct);
		sqlite3_bind_double(s, k++, a->util_peak_pct);
	} else {
		sqlite3_bind_null(s, k++);
		sqlite3_bind_null(s, k++);
	}
	if (a->mem_ok) {
		sqlite3_bind_double(s, k++, a->mem_avg_bytes);
		sqlite3_bind_double(s, k++, a->mem_peak_bytes);
	} else {
		sqlite3_bind_null(s, k++);
		sqlite3_bind_null(s, k++);
	}
	sqlite3_bind_int64(s, k++, (sqlite3_int64)a->throttle_reasons);
	if (a->viol_ok) {
		sqlite3_bind_double(s, k++, a->throttle_power_s);
		sqlite3_bind_double(s, k++, a->throttle_thermal_s);
	} else {
		sqlite3_bind_null(s, k++);
		sqlite3_bind_null(s, k++);
	}
	sqlite3_bind_text(s, k++, xids, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, k++, (sqlite3_int64)a->samples);
	for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
		if (a->gpm_ok[m])
			sqlite3_bind_double(s, k++, a->gpm_avg_pct[m]);
		else
			sqlite3_bind_null(s, k++);
	if (sqlite3_step(s) != SQLITE_DONE)
		return fail(st, "saving accounting");
	return 0;
}

static bool col_real(sqlite3_stmt *s, int c, double *out)
{
	if (sqlite3_column_type(s, c) == SQLITE_NULL)
		return false;
	*out = sqlite3_column_double(s, c);
	return true;
}

int store_get_acct(struct store *st, uint64_t job, struct acct_summary *out, unsigned max, unsigned *n)
{
	sqlite3_stmt *s = st->get_acct;
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, (sqlite3_int64)job);
	*n = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
		struct acct_summary *a = &out[(*n)++];
		memset(a, 0, sizeof(*a));
		a->gpu = (unsigned)sqlite3_column_int(s, 0);
		a->gpu_seconds = sqlite3_column_double(s, 1);
		a->energy_ok = col_real(s, 2, &a->energy_j);
		a->util_ok = col_real(s, 3, &a->util_avg_pct) && col_real(s, 4, &a->util_peak_pct);
		a->mem_ok = col_real(s, 5, &a->mem_avg_bytes) && col_real(s, 6, &a->mem_peak_bytes);
		a->throttle_reasons = (uint64_t)sqlite3_column_int64(s, 7);
		a->viol_ok = col_real(s, 8, &a->throttle_power_s) && col_real(s, 9, &a->throttle_thermal_s);
		const char *x = (const char *)sqlite3_column_text(s, 10);
		/* {"79":1,"48":2} as written by store_put_acct */
		while (x && a->nxid < ACCT_MAX_XIDS && (x = strchr(x, '"')) != NULL) {
			unsigned long long code, count;
			if (sscanf(x, "\"%llu\":%llu", &code, &count) != 2)
				break;
			a->xid[a->nxid].code = code;
			a->xid[a->nxid].count = count;
			a->nxid++;
			x = strchr(x + 1, '"');
			if (x)
				x++;
		}
		a->samples = (uint64_t)sqlite3_column_int64(s, 11);
		for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
			a->gpm_ok[m] = col_real(s, 12 + (int)m, &a->gpm_avg_pct[m]);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(st, "reading accounting");
	return 0;
}
