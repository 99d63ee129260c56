/* SPDX-License-Identifier: Apache-2.0 */
/* sweep.c - see sweep.h. */
#include "slurm/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exitcodes.h"
#include "slurm/gres.h"

#define SEC 1e9

int sweep_jobs_parse(char *text, struct sweep_job **jobs, size_t *n, char *err, size_t errlen)
{
	*n = 0;
	*jobs = NULL;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t")] = '\0';
		if (!line[0])
			continue;
		bool seen = false;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = strcmp((*jobs)[i].node, line) == 0;
		if (seen) /* sinfo -N lists a node once per partition */
			continue;
		int rc = EXIT_OK;
		struct sweep_job *p = NULL;
		if (!slurm_host_name_ok(line) || strlen(line) >= FLEET_NAME_LEN) {
			snprintf(err, errlen, "bad node name '%.100s' from Slurm", line);
			rc = EXIT_DATAERR;
		} else if (!(p = realloc(*jobs, (*n + 1) * sizeof(*p)))) {
			snprintf(err, errlen, "out of memory");
			rc = EXIT_SOFTWARE;
		}
		if (rc != EXIT_OK) {
			free(*jobs);
			*jobs = NULL;
			*n = 0;
			return rc;
		}
		*jobs = p;
		memset(&p[*n], 0, sizeof(p[*n]));
		snprintf(p[*n].node, sizeof(p[*n].node), "%s", line);
		(*n)++;
	}
	return EXIT_OK;
}

bool sweep_job_submitted(struct sweep_job *j, int rc, const char *out, const char *err)
{
	if (rc == 0 && out) {
		size_t k = strcspn(out, ";\n"); /* "ID" or "ID;cluster" */
		snprintf(j->id, sizeof(j->id), "%.*s", (int)(k < sizeof(j->id) ? k : sizeof(j->id) - 1), out);
	}
	if (j->id[0])
		return true;
	j->state = SWEEP_JOB_FAILED;
	snprintf(j->note, sizeof(j->note), "sbatch failed: %.160s", err && err[0] ? err : "no job id");
	return false;
}

/* The rest of j's line in squeue's output ("STATE REASON"), or NULL when it is not there. */
static const char *queue_line(const char *squeue, const char *id)
{
	char key[32];
	snprintf(key, sizeof(key), "%s ", id);
	size_t k = strlen(key);
	for (const char *p = squeue; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, k) == 0)
			return p + k;
	return NULL;
}

enum sweep_action sweep_job_step(struct sweep_job *j, const char *squeue, bool result, long long waited_ns,
				 long long start_timeout_ns)
{
	if (j->state >= SWEEP_JOB_DONE)
		return SWEEP_KEEP;
	const char *line = queue_line(squeue, j->id);
	if (result) {
		j->state = SWEEP_JOB_DONE;
	} else if (!line) {
		/* gone from the queue without a result (its result is written before it exits) */
		sweep_job_ended(j, "");
		return SWEEP_ENDED;
	} else if (strncmp(line, "PENDING", 7) == 0) {
		j->state = SWEEP_JOB_PENDING;
		sscanf(line, "%*s %63s", j->reason);
		if (waited_ns >= start_timeout_ns) {
			j->state = SWEEP_JOB_NOT_STARTED;
			snprintf(j->note, sizeof(j->note), "job %s still pending after %.0f s (%s); cancelled", j->id,
				 (double)waited_ns / SEC, j->reason);
			return SWEEP_CANCEL;
		}
	} else {
		j->state = SWEEP_JOB_RUNNING;
	}
	return SWEEP_KEEP;
}

void sweep_job_ended(struct sweep_job *j, const char *log_tail)
{
	j->state = SWEEP_JOB_FAILED;
	/* the note may cut the log's line short: a note, not a record */
	if (snprintf(j->note, sizeof(j->note), "job %s ended without a result%s%.150s", j->id,
		     log_tail[0] ? ": " : "", log_tail) >= (int)sizeof(j->note))
		j->note[sizeof(j->note) - 1] = '\0';
}

bool sweep_job_timeout(struct sweep_job *j, long long timeout_ns)
{
	if (j->state != SWEEP_JOB_PENDING && j->state != SWEEP_JOB_RUNNING)
		return false;
	bool pending = j->state == SWEEP_JOB_PENDING;
	snprintf(j->note, sizeof(j->note), "job %s %s at the sweep's timeout (%.0f s); cancelled", j->id,
		 pending ? "still pending" : "still running", (double)timeout_ns / SEC);
	j->state = pending ? SWEEP_JOB_NOT_STARTED : SWEEP_JOB_FAILED;
	return true;
}

void sweep_counts(const struct sweep_job *jobs, size_t n, size_t c[SWEEP_JOB_NSTATES])
{
	memset(c, 0, SWEEP_JOB_NSTATES * sizeof(c[0]));
	for (size_t i = 0; i < n; i++)
		c[jobs[i].state]++;
}

void sweep_sbatch_argv(struct sweep_sbatch *s, const char *gpuctl, const char *level, long long window_ns,
		       const char *dir, const char *partition, const char *name, const char *node)
{
	snprintf(s->wrap, sizeof(s->wrap), "exec '%s' slurm sweep --run-node --level %s --window %.3fs --out '%s'", gpuctl,
		 level, (double)window_ns / 1e9, dir);
	snprintf(s->outlog, sizeof(s->outlog), "%s/logs/%s.out", dir, node);
	char **argv = s->argv;
	unsigned k = 0;
	argv[k++] = (char *)"sbatch";
	argv[k++] = (char *)"--parsable";
	argv[k++] = (char *)"--exclusive";
	argv[k++] = (char *)"-N1";
	argv[k++] = (char *)"-J";
	argv[k++] = (char *)name;
	argv[k++] = (char *)"-w";
	argv[k++] = (char *)node;
	argv[k++] = (char *)"-o";
	argv[k++] = s->outlog;
	if (partition) {
		argv[k++] = (char *)"-p";
		argv[k++] = (char *)partition;
	}
	argv[k++] = (char *)"--wrap";
	argv[k++] = s->wrap;
	argv[k] = NULL;
}
