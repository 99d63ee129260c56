/* SPDX-License-Identifier: Apache-2.0 */
/* scontrol.c - see scontrol.h. */
#include "slurm/scontrol.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/spawn.h"

/* Runs scontrol with argv; 0 when it exits 0, else -1 with why in err ("exit status N: its stderr"). */
static int run(char *const argv[], char **out, char *err, size_t errlen)
{
	struct spawn_opts o = { .out_max = SCONTROL_OUTPUT_MAX, .timeout_ms = SCONTROL_TIMEOUT_MS };
	char line[400];
	int rc = spawn_run(argv, &o, out, NULL, line, sizeof(line));
	if (rc == 0)
		return 0;
	if (out) {
		free(*out);
		*out = NULL;
	}
	/* scontrol's first stderr line, cut to what a one-line error holds */
	if (rc > 0)
		snprintf(err, errlen, "exit status %d%s%.240s", rc, line[0] ? ": " : "", line);
	else
		snprintf(err, errlen, "%.240s", line);
	return -1;
}

int scontrol_show_node(const char *scontrol, const char *node, struct slurm_node_info *ni, char *err, size_t errlen)
{
	char *argv[] = { (char *)scontrol, (char *)"show", (char *)"node", (char *)node, (char *)"-o", NULL };
	char *show = NULL;
	if (run(argv, &show, err, errlen) != 0)
		return -1;
	int rc = slurm_node_parse(show, ni, err, errlen);
	free(show);
	return rc == 0 ? 0 : -1;
}

/* "'SCONTROL update WHAT' failed: why" into err. */
static int update(const char *scontrol, char *const argv[], const char *what, char *err, size_t errlen)
{
	char why[300] = "";
	if (run(argv, NULL, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "'%s update %s' failed%s%s", scontrol, what, why[0] ? ": " : "", why);
	return -1;
}

int scontrol_node_action(const char *scontrol, const char *node, enum slurm_hc_action act, const char *reason,
			 char *err, size_t errlen)
{
	if (act != SLURM_HC_DRAIN && act != SLURM_HC_RESUME)
		return 0;
	char node_arg[300], reason_arg[SLURM_REASON_LEN + 16], what[340];
	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", node);
	snprintf(reason_arg, sizeof(reason_arg), "Reason=%s", reason ? reason : "");
	const char *state = act == SLURM_HC_DRAIN ? "State=DRAIN" : "State=RESUME";
	snprintf(what, sizeof(what), "%s %s", node_arg, state);
	char *argv[] = { (char *)scontrol, (char *)"update", node_arg, (char *)state,
			 act == SLURM_HC_DRAIN ? reason_arg : NULL, NULL };
	return update(scontrol, argv, what, err, errlen);
}

int scontrol_job_comment(const char *scontrol, unsigned long long job, const char *text, char *err, size_t errlen)
{
	char job_arg[64], comment[420], what[100];
	snprintf(job_arg, sizeof(job_arg), "JobId=%llu", job);
	snprintf(comment, sizeof(comment), "AdminComment=%s", text);
	snprintf(what, sizeof(what), "%s AdminComment=...", job_arg);
	char *argv[] = { (char *)scontrol, (char *)"update", job_arg, comment, NULL };
	return update(scontrol, argv, what, err, errlen);
}
