/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node.h - the Slurm health check's decisions (pure, no I/O).
 *
 * Slurm ignores HealthCheckProgram's exit code, so `gpuctl slurm
 * health-check` drains the node itself (scontrol update State=DRAIN) with a
 * reason that names each failing GPU and rule, prefixed "gpuctl:". A later
 * healthy check resumes the node only when its reason still carries that
 * prefix: a node an administrator drained stays drained.
 */
#ifndef GPUCTL_SLURM_NODE_H
#define GPUCTL_SLURM_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct health_report;

#define SLURM_REASON_PREFIX "gpuctl:"
#define SLURM_REASON_LEN 240

/* The drain reason for the FAIL findings of the GPUs in mask (and the
 * system entry), in words: "gpuctl: GPU 2 uncorrectable ECC errors since the
 * driver loaded; GPU 5 XID 79: GPU has fallen off the bus". Returns
 * false (and "") when nothing fails. Slurm reasons take no '"': such
 * characters become '\''. */
bool slurm_drain_reason(const struct health_report *rep, uint64_t mask, char *out, size_t outlen);
/* One finding in words for a drain reason: its reason ("XID 79 NAME: meaning"
 * as "XID 79: meaning"), or its rule id when it has none. */
void slurm_finding_words(const char *rule_id, const char *reason, char *out, size_t outlen);
/* Makes a text fit for a Slurm reason in place: '"', '\\' and newlines become '\''. */
void slurm_reason_clean(char *reason);

/* What `scontrol show node NAME -o` says of the node. */
struct slurm_node_info {
	char name[64];
	char state[96];          /* "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN" */
	bool drain;              /* DRAIN/DRAINED/DRAINING in the state */
	char reason[SLURM_REASON_LEN]; /* without the trailing "[user@time]" */
};

/* Parses the one-line form; 0, or -1 with a message (no NodeName= or State=). */
int slurm_node_parse(const char *line, struct slurm_node_info *out, char *err, size_t errlen);

enum slurm_hc_action {
	SLURM_HC_NONE = 0,       /* nothing to do */
	SLURM_HC_DRAIN,          /* drain with the new reason (or refresh our own reason) */
	SLURM_HC_RESUME,         /* healthy again and drained by us: resume */
	SLURM_HC_KEEP_OTHERS,    /* failing, but drained by someone else: leave their reason */
};

/* fail: this check's verdict is FAIL (reason is the new drain reason). */
enum slurm_hc_action slurm_health_decide(bool fail, const char *reason, const struct slurm_node_info *node);
const char *slurm_hc_action_name(enum slurm_hc_action a); /* "none", "drain", "resume", "keep" */

#endif
