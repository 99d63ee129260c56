/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_log.c - the agent's own log lines (evlog.h): a ring the render
 * thread and the pool's job hook fill, and agent_take_log drains for the
 * command to print (once a second, src/cmd/agent.c).
 */
#include "agent_internal.h"

#include <stdio.h>
#include <string.h>

#include "pool/job.h"

void agent_log_push(void *arg, const char *line)
{
	struct agent *a = arg;
	pthread_mutex_lock(&a->log_mu);
	if (a->log_n == AGENT_LOG_RING) {
		/* full: the oldest goes, and the next take says how many did */
		a->log_head = (a->log_head + 1) % AGENT_LOG_RING;
		a->log_n--;
		a->log_dropped++;
	}
	snprintf(a->log_ring[(a->log_head + a->log_n) % AGENT_LOG_RING], EVLOG_LINE, "%s", line);
	a->log_n++;
	pthread_mutex_unlock(&a->log_mu);
}

void agent_log_job(void *arg, const struct pool_job *j)
{
	struct evlog_job e = { j->id,	     j->user,	      j->name,	       job_state_name(j->state),
			       j->gpu_mask, j->mig_gpu, j->mig_gi, j->exit_code, j->exit_signal,
			       j->reason };
	char line[EVLOG_LINE];
	evlog_job_line(&e, line, sizeof(line));
	agent_log_push(arg, line);
}

unsigned agent_take_log(struct agent *a, void (*print)(void *arg, const char *line), void *arg)
{
	char lines[AGENT_LOG_RING][EVLOG_LINE];
	pthread_mutex_lock(&a->log_mu);
	unsigned n = a->log_n, dropped = a->log_dropped;
	for (unsigned i = 0; i < n; i++)
		memcpy(lines[i], a->log_ring[(a->log_head + i) % AGENT_LOG_RING], EVLOG_LINE);
	a->log_head = a->log_n = a->log_dropped = 0;
	pthread_mutex_unlock(&a->log_mu);
	char msg[64];
	if (dropped) {
		snprintf(msg, sizeof(msg), "%u older log lines dropped (more than %u a second)", dropped,
			 (unsigned)AGENT_LOG_RING);
		print(arg, msg);
	}
	for (unsigned i = 0; i < n; i++)
		print(arg, lines[i]);
	return n;
}
