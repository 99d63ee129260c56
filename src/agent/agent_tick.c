/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_tick.c - the agent's ticker (health/tick.h): one read of the sampler
 * and one health evaluation per tick, which the render thread advances and
 * the job pool takes in. Its hook adds what only the agent knows to the
 * tick's health report before the tick is published: the leak watch's
 * findings and the simulated server's fault-file note (a->notes keeps them
 * for the tick's rendering).
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/leakwatch.h"
#include "metrics.h"
#include "core/proc_stat.h"
#include "device/sim.h"
#include "health/tick.h"

/* The leak watch's start identity of a host pid: /proc/PID/stat's start time
 * (0 when the pid is not visible here, e.g. in another pid namespace). */
static uint64_t proc_start_of(void *arg, uint32_t pid)
{
	(void)arg;
	struct proc_stat st;
	if (pid > (uint32_t)INT32_MAX || proc_stat_read((int)pid, &st) != 0)
		return 0;
	return st.start_ticks;
}

/* A note on the system entry of /api/v1/health: the simulated server's
 * run-time fault file is not applied. PASS: it judges no GPU (their verdicts
 * are what the faults applied before make them), it says why. */
static void note_fault_file(struct health_report *rep, const char *why)
{
	struct health_entity *e = &rep->system;
	if (e->nfind >= HEALTH_MAX_FINDINGS) {
		e->truncated = true;
		return;
	}
	struct health_finding *f = &e->find[e->nfind++];
	memset(f, 0, sizeof(*f));
	snprintf(f->rule_id, sizeof(f->rule_id), "sim-fault-file");
	f->metric = HM_COUNT; /* not a rules.json metric: the simulator's own input */
	f->subsys = HS_CONFIG;
	f->verdict = HEALTH_PASS;
	f->action = HEALTH_ACT_NONE;
	snprintf(f->reason, sizeof(f->reason), "the simulated server's run-time fault file is not applied");
	snprintf(f->evidence, sizeof(f->evidence), "%.*s", (int)sizeof(f->evidence) - 1, why);
	snprintf(f->hint, sizeof(f->hint), "fix the file (faults=); the faults it gave before, if any, stay until then");
}

/* The ticker's hook (on the render thread, before the tick is published), once
 * a tick: the agent's log of GPUs lost or back and new XIDs, the leak watch and
 * the simulated server's fault file, and their findings in the tick's health report. */
static void agent_annotate(void *arg, struct tick *k)
{
	struct agent *a = arg;
	struct tick_notes *s = &a->notes;
	const struct snapshot *snap = k->snap;
	evlog_gpus(&a->evlog, snap, a->rules, agent_log_push, a);
	s->fault_file[0] = '\0';
	s->fault_file_bad = snap->sys.simulated ? sim_fault_file_error(a->be, s->fault_file, sizeof(s->fault_file)) : -1;
	pthread_mutex_lock(&a->mu);
	snprintf(a->sim_fault_file_error, sizeof(a->sim_fault_file_error), "%s", s->fault_file);
	pthread_mutex_unlock(&a->mu);
	s->nleaks = 0;
	if (a->leaks) {
		/* a simulated server's pids are not this machine's */
		leakwatch_update(a->leaks, snap, snap->sys.simulated ? NULL : proc_start_of, NULL);
		s->nleaks = leakwatch_leaks(a->leaks, s->leaks, LEAKWATCH_MAX);
		if (s->nleaks > LEAKWATCH_MAX)
			s->nleaks = LEAKWATCH_MAX;
	}
	if (k->rep_ok) {
		leakwatch_report(s->leaks, s->nleaks, k->rep);
		if (s->fault_file_bad > 0)
			note_fault_file(k->rep, s->fault_file);
	}
}

int agent_ticker_start(struct agent *a)
{
	if (!(a->notes.leaks = calloc(LEAKWATCH_MAX, sizeof(*a->notes.leaks))))
		return -1;
	struct ticker_config tc = { .rules = a->rules, .annotate = agent_annotate, .annotate_arg = a };
	tc.health.xids_unknown = !(a->cfg.groups & MG_XID);
	return ticker_new(&a->ticker, a->sampler, &tc);
}

void agent_ticker_free(struct agent *a)
{
	ticker_free(a->ticker);
	free(a->notes.leaks);
}
