/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_agent.c - the pool's hooks into the agent (src/agent/): its settings
 * (`pool = on`, `pool_dir`, `pool_socket`, `pool_user_job_limit`, `pool_cgroup`,
 * `pool_isolation`, `pool_log_limit`, `pool_log_retention`, `pool_min_free`, `pool_dev_dir`,
 * `pool_idle_threshold`, `pool_idle_window`, `pool_idle_cancel`; `pool_user_gpu_limit` and
 * `pool_kill_grace` are rows of agent_settings, agent_config.c; docs/pool.md) and its start/stop with
 * the agent's backend, sampler and health rules. The agent's files each hold
 * one call into here.
 */
#include "agent/pool_agent.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "pool/pool.h"
#include "pool/proto.h"
#include "core/units.h"

/* pool_idle_threshold, pool_idle_window (1s to 30d, or off), pool_idle_cancel. 1: not one of them. */
static int idle_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "pool_idle_cancel") == 0)
		return agent_config_bool(key, value, &c->pool_idle_cancel, err, errlen);
	if (strcmp(key, "pool_idle_window") == 0) {
		if (strcmp(value, "off") == 0) {
			c->pool_idle_window_ns = UINT64_MAX;
			return 0;
		}
		return units_parse_duration(value, 1000000000ull, 30ull * 86400 * 1000000000ull, &c->pool_idle_window_ns,
					    err, errlen);
	}
	if (strcmp(key, "pool_idle_threshold") == 0) {
		char *end;
		double v = strtod(value, &end);
		if (end != value && *end == '%')
			end++;
		if (end == value || *end || !(v > 0 && v <= 100)) {
			snprintf(err, errlen, "bad value '%.40s' for 'pool_idle_threshold' (a percent above 0, up to 100, e.g. 5%%)",
				 value);
			return -1;
		}
		c->pool_idle_threshold_pct = v;
		c->pool_idle_threshold_set = true;
		return 0;
	}
	return 1;
}

int pool_agent_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	struct { const char *key; char *dst; size_t len; } paths[] = {
		{ "pool_dir", c->pool_dir, sizeof(c->pool_dir) },
		{ "pool_socket", c->pool_socket, sizeof(c->pool_socket) },
		{ "pool_cgroup", c->pool_cgroup, sizeof(c->pool_cgroup) },
		{ "pool_dev_dir", c->pool_dev_dir, sizeof(c->pool_dev_dir) },
	};
	if (strcmp(key, "pool") == 0)
		return agent_config_bool(key, value, &c->pool, err, errlen);
	int idle_rc = idle_config_set(c, key, value, err, errlen);
	if (idle_rc <= 0)
		return idle_rc;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (strcmp(key, paths[i].key) != 0)
			continue;
		if (!value[0] || strlen(value) >= paths[i].len || (value[0] != '/' && strcmp(value, "off") != 0)) {
			snprintf(err, errlen, "bad value for '%s' (an absolute path shorter than %zu bytes%s)", key,
				 paths[i].len, strcmp(key, "pool_cgroup") == 0 ? ", or off" : "");
			return -1;
		}
		if (strcmp(value, "off") == 0 && strcmp(key, "pool_cgroup") != 0) {
			snprintf(err, errlen, "bad value for '%s' (an absolute path)", key);
			return -1;
		}
		snprintf(paths[i].dst, paths[i].len, "%s", value);
		return 0;
	}
	if (strcmp(key, "pool_isolation") == 0) {
		int v = pool_isolation_parse(value);
		if (v < 0) {
			snprintf(err, errlen, "bad value '%.40s' for 'pool_isolation' (strict, best-effort or off)", value);
			return -1;
		}
		c->pool_isolation = (unsigned)v;
		return 0;
	}
	struct { const char *key; uint64_t *dst; bool duration; } limits[] = {
		{ "pool_log_limit", &c->pool_log_limit, false },
		{ "pool_log_retention", &c->pool_log_retention_ns, true },
		{ "pool_min_free", &c->pool_min_free, false },
	};
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (strcmp(key, limits[i].key) != 0)
			continue;
		uint64_t v;
		bool log_limit = strcmp(key, "pool_log_limit") == 0;
		/* "0" is off where the docs say so; a log limit of 0 is below its 64K, not off */
		if (strcmp(value, "off") == 0 || (strcmp(value, "0") == 0 && !log_limit))
			v = UINT64_MAX;
		else if (log_limit && (units_parse_size(value, 0, PROTO_MAX_BYTES, &v, err, errlen) || v < (64u << 10))) {
			snprintf(err, errlen, "bad value '%.40s' for 'pool_log_limit' (at least 64K, or off)", value);
			return -1;
		} else if (!log_limit && (limits[i].duration ? units_parse_seconds(value, "pool_log_retention", 1,
										   PROTO_MAX_TIME_S, &v, err, errlen)
							    : units_parse_size(value, 1, PROTO_MAX_BYTES, &v, err, errlen))) {
			return -1;
		} else if (limits[i].duration) {
			v *= 1000000000ull;
		}
		*limits[i].dst = v;
		return 0;
	}
	if (strcmp(key, "pool_user_job_limit") == 0) {
		char *end;
		unsigned long v = strtoul(value, &end, 10);
		if (!value[0] || value[0] == '-' || *end || v > 1000000) {
			snprintf(err, errlen, "bad value '%.40s' for '%s' (0 to 1000000; 0 = no limit)", value, key);
			return -1;
		}
		c->pool_user_job_limit = v ? (unsigned)v : UINT_MAX;
		return 0;
	}
	return 1;
}

int pool_agent_start(struct agent *a, char *err, size_t errlen)
{
	struct pool_config pc;
	pool_config_default(&pc);
	snprintf(pc.state_dir, sizeof(pc.state_dir), "%s", a->cfg.pool_dir);
	snprintf(pc.socket_path, sizeof(pc.socket_path), "%s", a->cfg.pool_socket);
	snprintf(pc.cgroup_parent, sizeof(pc.cgroup_parent), "%s", a->cfg.pool_cgroup);
	snprintf(pc.dev_dir, sizeof(pc.dev_dir), "%s", a->cfg.pool_dev_dir);
	pc.max_gpus_per_user = a->cfg.pool_user_gpu_limit;
	if (a->cfg.pool_user_job_limit) /* else the default */
		pc.max_jobs_per_user = a->cfg.pool_user_job_limit == UINT_MAX ? 0 : a->cfg.pool_user_job_limit;
	pc.isolation = (enum pool_isolation)a->cfg.pool_isolation;
	pc.on_job = agent_log_job; /* the agent's log says when a job starts and ends */
	pc.on_job_arg = a;
	if (a->cfg.pool_kill_grace_ns)
		pc.kill_grace_ns = a->cfg.pool_kill_grace_ns;
	uint64_t *limits[][2] = { { &pc.log_limit, &a->cfg.pool_log_limit },
				  { &pc.log_retention_ns, &a->cfg.pool_log_retention_ns },
				  { &pc.min_free_bytes, &a->cfg.pool_min_free } };
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (*limits[i][1]) /* else the default */
			*limits[i][0] = *limits[i][1] == UINT64_MAX ? 0 : *limits[i][1];
	if (a->cfg.pool_idle_window_ns)
		pc.idle.window_ns = a->cfg.pool_idle_window_ns == UINT64_MAX ? 0 : a->cfg.pool_idle_window_ns;
	if (a->cfg.pool_idle_threshold_set)
		pc.idle.threshold_pct = a->cfg.pool_idle_threshold_pct;
	pc.idle_cancel = a->cfg.pool_idle_cancel;
	if (!pc.state_dir[0] || !pc.socket_path[0]) {
		snprintf(err, errlen, "the pool needs pool_dir and pool_socket");
		return -1;
	}
	char msg[400];
	if (pool_start(&a->job_pool, a->be, a->ticker, &pc, msg, sizeof(msg))) {
		snprintf(err, errlen, "pool: %s", msg);
		return -1;
	}
	return 0;
}

void pool_agent_stop(struct agent *a)
{
	pool_agent_stop_noted(a, NULL, NULL);
}

void pool_agent_flush(struct agent *a)
{
	pool_flush(a->job_pool);
}

void pool_agent_stop_noted(struct agent *a, void (*note)(void *arg, const char *what), void *arg)
{
	pool_stop_noted(a->job_pool, note, arg);
	a->job_pool = NULL;
}

const char *pool_agent_lock_holder(struct agent *a)
{
	return a->job_pool ? pool_lock_holder(a->job_pool) : "";
}

bool pool_agent_status(struct agent *a, struct pool_status *st)
{
	if (!a->job_pool)
		return false;
	pool_get_status(a->job_pool, st);
	return true;
}

bool pool_agent_queue(struct agent *a, char **doc)
{
	*doc = NULL;
	if (!a->job_pool)
		return false;
	*doc = pool_queue_doc(a->job_pool);
	return true;
}
