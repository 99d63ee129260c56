/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_config.h - the agent's settings: defaults, the `key = value`
 * configuration file (docs/agent.md), and the command-line flags that
 * override it. Pure: parses text, no I/O.
 */
#ifndef GPUCTL_AGENT_CONFIG_H
#define GPUCTL_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/opts.h"
#include "metrics.h"

#define AGENT_DEFAULT_PORT 9477u

struct agent_config {
	char listen_host[64];          /* "" = every address; "127.0.0.1", "::1" */
	unsigned port;
	uint64_t interval_ns;          /* sampling and rendering interval */
	uint64_t stale_after_ns;       /* 0: five intervals */
	unsigned slow_group_every;     /* PCIe throughput every Nth tick (0/1 = every tick) */
	unsigned groups;               /* MG_* */
	char hostname[96];             /* "" = what the backend reports */
	unsigned nlabels;
	struct metric_label labels[METRICS_MAX_LABELS];
	char kernel_log[256];          /* "/dev/kmsg" by default; "" = off */
	unsigned max_connections;      /* concurrent HTTP connections */
	unsigned per_ip_connections;   /* 0 = no per-address limit */
	unsigned connection_timeout_s; /* idle/slow connection closed after this */
	unsigned header_timeout_s;     /* a request head must be complete this long after the connection opened */
	unsigned threads;              /* HTTP worker threads */
	char allowed_hosts[512];       /* Host names answered besides IP literals, localhost and the hostname ("*": any) */
	/* the job pool (src/pool/pool_agent.c, docs/pool.md); off unless asked */
	bool pool;
	char pool_dir[256];            /* "" = the default for the agent's user */
	char pool_socket[256];
	char pool_cgroup[256];         /* "" = the agent's own cgroup; "off" */
	char pool_dev_dir[256];        /* the GPUs' device nodes for container jobs' CDI spec ("" = /dev) */
	unsigned pool_user_gpu_limit;  /* 0 = none */
	unsigned pool_user_job_limit;  /* 0 = the pool's default; UINT_MAX = none */
	uint64_t pool_kill_grace_ns;   /* 0 = 10 s */
	/* 0: the pool's default; UINT64_MAX: off (no limit, kept forever, no reserve) */
	uint64_t pool_log_limit, pool_log_retention_ns, pool_min_free;
	/* idle allocations (pool/idle.h): the window as the limits above (0: 30 min, UINT64_MAX: off) */
	uint64_t pool_idle_window_ns;
	bool pool_idle_threshold_set;  /* else 5 % */
	double pool_idle_threshold_pct;
	bool pool_idle_cancel;
	/* the memory-leak watch (src/health/leakwatch.h, docs/agent.md) */
	uint64_t leak_window_ns;       /* default 300 s */
	double leak_min_rate;          /* bytes/s, default 1 MiB/min */
	double leak_min_growth;        /* bytes over the window, default 256 MiB */
	unsigned pool_isolation;       /* pool.h's enum pool_isolation; 0 = strict */
	uint64_t stop_timeout_ns;      /* SIGTERM to exit, whatever the threads do (default 10 s) */
	uint64_t history_ns;           /* /api/v1/history's span per GPU (default 1 h); 0 = off */
	bool dcgm_compat;              /* /metrics also in dcgm-exporter's names (metrics_dcgm.h); off by default */
};

/* The settings that are a duration or a whole number, as rows of the option
 * tables' kind (core/opts.h; name: the file's key): one parser
 * (opt_value_parse_as) reads them from the file and the flags, and `agent
 * --help` lists them from here (so does its man page). */
extern const struct opt_spec agent_settings[];
extern const size_t agent_nsettings;

void agent_config_default(struct agent_config *c);
/* Sets one key (file keys and flags share these names). Returns 0, or -1 with a message. */
int agent_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen);
/* An on/off setting: on, true, 1 / off, false, 0. Returns 0, or -1 with a message naming key. */
int agent_config_bool(const char *key, const char *value, bool *dst, char *err, size_t errlen);
/* Parses a whole file's text; messages name origin and line ("agent.conf:3: ..."). */
int agent_config_parse(struct agent_config *c, const char *text, size_t len, const char *origin, char *err,
		       size_t errlen);
/* "ADDR:PORT", "[v6]:PORT", ":PORT", "PORT" or "ADDR" (default port). */
int agent_parse_listen(const char *s, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen);

#endif
