/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.h - GPU health as a pure function of a snapshot, its previous
 * snapshot (for rates and "growing" counters) and the rules.
 *
 * The rules are data (data/health/rules.json, each with its source) and the
 * XID catalog too (data/health/xid.json). A rule names a metric the engine
 * knows how to read from a snapshot (enum health_metric: the only C-side
 * knowledge), a comparison, a threshold, a verdict and an action. `health`,
 * `diag`, the agent's /api/v1/health, pool placement and the Slurm hooks all
 * call health_evaluate(); nothing here prints, reads the clock or the
 * environment: what the caller knows (time, allowed processes, the CUDA
 * version the kernels need) comes in through struct health_opts.
 */
#ifndef GPUCTL_HEALTH_H
#define GPUCTL_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sampler/sampler.h"

/* Ordered so that the worse verdict is the larger value. NA: no rule could be
 * evaluated (value not supported, read error, no previous snapshot). */
enum health_verdict { HEALTH_NA = 0, HEALTH_PASS, HEALTH_WARN, HEALTH_FAIL };

/* Ordered from least to most disruptive. */
enum health_action {
	HEALTH_ACT_NONE = 0,
	HEALTH_ACT_DRAIN,         /* stop scheduling work on it; investigate */
	HEALTH_ACT_RESET_GPU,     /* nvidia-smi -r (or reboot) when idle */
	HEALTH_ACT_REBOOT,        /* the node must be rebooted */
	HEALTH_ACT_REPLACE_BOARD, /* RMA: the hardware is at fault */
	HEALTH_ACT_COUNT
};

enum health_subsys {
	HS_MEMORY = 0, HS_PCIE, HS_NVLINK, HS_THERMAL, HS_POWER, HS_DRIVER, HS_XID, HS_PROCESSES,
	HS_CONFIG, HS_COUNT
};

/* What the engine can read from a snapshot. Units are those of the metric
 * table in health.c (printed with every evidence). */
enum health_metric {
	HM_GPU_LOST = 0,           /* GPU did not answer (fallen off the bus), 1/0 */
	HM_ECC_VOL_UNCORRECTED,    /* volatile uncorrectable ECC errors */
	HM_ECC_VOL_CORRECTED_RATE, /* correctable ECC errors per second (needs prev) */
	HM_ECC_MODE_OFF,           /* ECC disabled, 1/0 */
	HM_ECC_MODE_PENDING,       /* ECC mode change waits for a reboot, 1/0 */
	HM_RETIRED_PAGES,          /* retired pages, SBE + DBE */
	HM_RETIRED_PAGES_PENDING,  /* page retirement pending, 1/0 */
	HM_REMAP_PENDING,          /* row remap pending, 1/0 */
	HM_REMAP_FAILURE,          /* row remap failure occurred, 1/0 */
	HM_REMAP_UNCORRECTED,      /* rows remapped for uncorrectable errors */
	HM_NVLINK_DOWN,            /* links down on a GPU that uses NVLink */
	HM_NVLINK_REPLAY_NEW,      /* replay errors in the window (needs prev) */
	HM_NVLINK_RECOVERY_NEW,    /* recovery errors in the window (needs prev) */
	HM_NVLINK_REPLAY_TOTAL,    /* replay errors since driver load */
	HM_NVLINK_RECOVERY_TOTAL,  /* recovery errors since driver load */
	HM_NVLINK_CRC_RATE,        /* CRC (flit + data) errors per second, worst link */
	HM_PCIE_REPLAY_BER_RATIO,  /* replays/s over the per-lane BER budget (1.0 = at budget) */
	HM_PCIE_GEN_DEFICIT,       /* max gen - current gen (not judged while idle) */
	HM_PCIE_WIDTH_DEFICIT,     /* max width - current width, lanes */
	HM_THERMAL_VIOLATION_RATE, /* thermal violation time growth, ms per s */
	HM_THERMAL_SLOWDOWN_ACTIVE,/* HW/SW thermal or HW slowdown clock event active, 1/0 */
	HM_TEMP_OVER_SLOWDOWN,     /* temperature - slowdown temperature, C */
	HM_POWER_VIOLATION_RATE,   /* power violation time growth, ms per s */
	HM_POWER_BRAKE_ACTIVE,     /* HW power brake (external) active, 1/0 */
	HM_POWER_LIMIT_LOWERED,    /* default - current power limit, W */
	HM_PERSISTENCE_OFF,        /* persistence mode off, 1/0 */
	HM_MIG_MODE_PENDING,       /* MIG mode change waits for a reset, 1/0 */
	HM_COMPUTE_PROHIBITED,     /* compute mode prohibited, 1/0 */
	HM_FOREIGN_PROCESSES,      /* compute processes not allowed by health_opts */
	HM_ALLOCATED_SM_ACTIVE,    /* SM activity (GPM) of a GPU compute processes hold, %; n/a: none or no GPM */
	HM_DRIVER_LIB_MISMATCH,    /* system: NVML library version != kernel driver, 1/0 */
	HM_CUDA_TOO_OLD,           /* system: driver's CUDA < what the kernels need, 1/0 */
	HM_FABRIC_MANAGER_DOWN,    /* system: NVSwitch system without fabric manager, 1/0 */
	HM_XID,                    /* XIDs seen: verdict and action come from the XID catalog */
	HM_COUNT
};

enum health_op { HOP_GT = 0, HOP_GE, HOP_LT, HOP_LE, HOP_EQ, HOP_NE };

#define HEALTH_ID_LEN 48
#define HEALTH_TEXT_LEN 160
#define HEALTH_SOURCE_LEN 512
#define HEALTH_MAX_RULES 96
#define HEALTH_MAX_XIDS 128
#define HEALTH_MAX_FINDINGS 24

struct health_rule {
	char id[HEALTH_ID_LEN];          /* "ecc-volatile-uncorrectable" */
	enum health_subsys subsys;
	enum health_metric metric;
	enum health_op op;
	double threshold;
	enum health_verdict verdict;     /* WARN or FAIL (PASS: an informational note) */
	enum health_action action;
	char reason[HEALTH_TEXT_LEN];    /* what it means, one line */
	char hint[HEALTH_TEXT_LEN];      /* what to do, one line ("" if none) */
	char source[HEALTH_SOURCE_LEN];  /* where the rule comes from */
};

struct health_xid {
	uint64_t code;
	char name[HEALTH_ID_LEN];        /* NVIDIA's mnemonic or short name */
	char meaning[HEALTH_TEXT_LEN];
	enum health_verdict verdict;     /* PASS = informational */
	enum health_action action;
};

struct health_rules {
	unsigned nrules;
	struct health_rule rules[HEALTH_MAX_RULES];
	unsigned nxids;
	struct health_xid xids[HEALTH_MAX_XIDS];
	struct health_xid xid_default;   /* for codes not in the catalog */
	char xid_source[HEALTH_SOURCE_LEN];
};

/* What the caller knows that a snapshot does not. Zero = defaults. */
struct health_opts {
	/* Compute processes: foreign when expect_idle, or when allowed lists are
	 * given and the process is in neither. No list and !expect_idle: none is. */
	bool expect_idle;
	unsigned n_allowed_pids, n_allowed_uids;
	const uint32_t *allowed_pids;
	const uint32_t *allowed_uids;
	/* The snapshot's XID counts were not collected (no event watch): XID rule not evaluated. */
	bool xids_unknown;
	/* CUDA version the kernels module needs, major*1000 + minor*10 (13000 = 13.0); 0 = no check */
	unsigned cuda_required;
};

struct health_finding {
	char rule_id[HEALTH_ID_LEN];
	enum health_metric metric;
	enum health_subsys subsys;
	enum health_verdict verdict;
	enum health_action action;
	char reason[HEALTH_TEXT_LEN];
	char evidence[HEALTH_TEXT_LEN];  /* the counter values, with units */
	char hint[HEALTH_TEXT_LEN];
};

struct health_entity {
	int index;                       /* GPU index; -1 for the system entry */
	enum health_verdict verdict;     /* worst of the subsystems */
	enum health_action action;       /* most disruptive action of the findings */
	enum health_verdict sub[HS_COUNT];
	unsigned checked[HS_COUNT];      /* rules evaluated per subsystem */
	unsigned skipped;                /* rules that could not be evaluated */
	unsigned nfind;
	bool truncated;                  /* more findings than HEALTH_MAX_FINDINGS */
	struct health_finding find[HEALTH_MAX_FINDINGS];
};

struct health_report {
	bool simulated;
	uint64_t taken_ns, window_ns;    /* now's time; now - prev (0: no prev) */
	enum health_verdict verdict;     /* worst over the system and every GPU */
	enum health_action action;
	struct health_entity system;     /* driver, fabric manager (index -1) */
	unsigned n;
	struct health_entity gpu[GPU_MAX_GPUS];
};

/* Parses the rules file (JSON text). Returns 0, or -1 with a one-line message.
 * Keeps whatever xid catalog r already holds. */
int health_rules_parse(struct health_rules *r, const char *json, size_t len, char *err, size_t errlen);
/* The same, its messages naming file (a --rules FILE) instead of "rules.json". */
int health_rules_parse_file(struct health_rules *r, const char *json, size_t len, const char *file, char *err,
			    size_t errlen);
/* Parses the XID catalog (JSON text) into r. Returns 0 or -1 with a message. */
int health_xids_parse(struct health_rules *r, const char *json, size_t len, char *err, size_t errlen);
/* Loads health/rules.json and health/xid.json from the data directory
 * (env_data_dir: the caller's $GPUCTL_DATA_DIR or NULL). 0, or with err:
 * HEALTH_RULES_UNREADABLE (a file missing or unreadable: exit 66) or
 * HEALTH_RULES_MALFORMED (a file that does not parse: exit 65, as a --rules
 * FILE that does not). */
enum { HEALTH_RULES_UNREADABLE = -1, HEALTH_RULES_MALFORMED = -2 };
int health_rules_load_default(struct health_rules *r, const char *env_data_dir, char *err, size_t errlen);

/* Evaluates every rule on every GPU of now. A rate runs between two readings
 * of its counter (sampler_rate_base): a view's rate base where the sampler kept
 * one, else the same GPU in prev (matched by index; may be NULL: rates are then
 * not evaluated). opts may be NULL.
 * Returns 0, or -1 with a message (bad arguments). */
int health_evaluate(const struct health_rules *r, const struct snapshot *now, const struct snapshot *prev,
		    const struct health_opts *opts, struct health_report *out, char *err, size_t errlen);

/* The XID catalog entry for a code (the default entry when unknown; never NULL). */
const struct health_xid *health_xid_find(const struct health_rules *r, uint64_t code);
const struct health_rule *health_rule_find(const struct health_rules *r, const char *id);

/* Verdict and action of one GPU as a consumer should see it: the GPU's own
 * findings combined with the system's (a missing fabric manager affects all). */
enum health_verdict health_gpu_verdict(const struct health_report *rep, unsigned gpu);
enum health_action health_gpu_action(const struct health_report *rep, unsigned gpu);

/* Names, stable (used in --json and the rules file). */
const char *health_verdict_name(enum health_verdict v);   /* "PASS", "WARN", "FAIL", "N/A" */
const char *health_action_name(enum health_action a);     /* "none", "drain", "reset_gpu", ... */
const char *health_action_text(enum health_action a);     /* "reset the GPU" ... */
const char *health_subsys_name(enum health_subsys s);     /* "memory", "pcie", ... */
const char *health_metric_name(enum health_metric m);     /* as in rules.json */
const char *health_metric_unit(enum health_metric m);     /* "errors", "errors/s", ... */
int health_action_parse(const char *s, enum health_action *out);
int health_subsys_parse(const char *s, enum health_subsys *out);
int health_metric_parse(const char *s, enum health_metric *out);
const char *health_op_name(enum health_op op);

#endif
