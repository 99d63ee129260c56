/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_agent.c - the pool's hooks into the agent (src/agent/): its settings
 * (`pool = on`, `pool_dir`, `pool_socket`, `pool_cgroup`, `pool_isolation`,
 * `pool_log_limit`, `pool_log_retention`, `pool_min_free`, `pool_dev_dir`;
 * `pool_user_gpu_limit` and `pool_kill_grace` are rows of agent_settings,
 * agent_config.c; docs/pool.md) and its start/stop with
 * the agent's backend, sampler and health rules. The agent's files each hold
 * one call into here.
 */
#include "agent/pool_agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "pool/pool.h"
#include "pool/proto.h"
#include "core/units.h"

int pool_agent_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	struct { const char *key; char *dst; size_t len; } paths[] = {
		{ "pool_dir", c->pool_dir, sizeof(c->pool_dir) },
		{ "pool_socket", c->pool_socket, sizeof(c->pool_socket) },
		{ "pool_cgroup", c->pool_cgroup, sizeof(c->pool_cgroup) },
		{ "pool_dev_dir", c->pool_dev_dir, sizeof(c->pool_dev_dir) },
	};
	if (strcmp(key, "pool") == 0) {
		if (strcmp(value, "on") == 0 || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
			c->pool = true;
		else if (strcmp(value, "off") == 0 || strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
			c->pool = false;
		else {
			snprintf(err, errlen, "bad value '%.40s' for 'pool' (on or off)", value);
			return -1;
		}
		return 0;
	}
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
	pc.isolation = (enum pool_isolation)a->cfg.pool_isolation;
	if (a->cfg.pool_kill_grace_ns)
		pc.kill_grace_ns = a->cfg.pool_kill_grace_ns;
	uint64_t *limits[][2] = { { &pc.log_limit, &a->cfg.pool_log_limit },
				  { &pc.log_retention_ns, &a->cfg.pool_log_retention_ns },
				  { &pc.min_free_bytes, &a->cfg.pool_min_free } };
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (*limits[i][1]) /* else the default */
			*limits[i][0] = *limits[i][1] == UINT64_MAX ? 0 : *limits[i][1];
	if (!pc.state_dir[0] || !pc.socket_path[0]) {
		snprintf(err, errlen, "the pool needs pool_dir and pool_socket");
		return -1;
	}
	char msg[400];
	if (pool_start(&a->job_pool, a->be, a->sampler, a->rules, &pc, msg, sizeof(msg))) {
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
