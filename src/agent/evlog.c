/* SPDX-License-Identifier: Apache-2.0 */
/* evlog.c - the agent's log lines for GPU, XID and job events (evlog.h). */
#include "evlog.h"

#include <stdio.h>
#include <string.h>

static void gpu_name(const struct gpu_view *v, unsigned g, char *out, size_t n)
{
	if (v->st.pci_bus_id.st == VAL_OK && v->st.pci_bus_id.s[0])
		snprintf(out, n, "GPU %u (%s)", g, v->st.pci_bus_id.s);
	else
		snprintf(out, n, "GPU %u", g);
}

static uint64_t xid_seen(const struct evlog_gpu *e, uint64_t code)
{
	for (unsigned i = 0; i < e->nxid; i++)
		if (e->xid[i].code == code)
			return e->xid[i].count;
	return 0;
}

static void xid_line(char *line, size_t n, const char *who, uint64_t code, uint64_t fresh, uint64_t all,
		     const struct health_rules *rules)
{
	const struct health_xid *x = rules ? health_xid_find(rules, code) : NULL;
	if (x && x->name[0])
		snprintf(line, n, "%s: XID %llu (%s: %s), %llu new, %llu in all", who, (unsigned long long)code, x->name,
			 x->meaning, (unsigned long long)fresh, (unsigned long long)all);
	else
		snprintf(line, n, "%s: XID %llu, %llu new, %llu in all", who, (unsigned long long)code,
			 (unsigned long long)fresh, (unsigned long long)all);
}

unsigned evlog_gpus(struct evlog *st, const struct snapshot *s, const struct health_rules *rules, evlog_emit emit,
		    void *arg)
{
	unsigned lines = 0;
	char line[EVLOG_LINE], who[128];
	for (unsigned g = 0; g < s->n && g < GPU_MAX_GPUS; g++) {
		const struct gpu_view *v = &s->gpu[g];
		struct evlog_gpu *e = &st->gpu[g];
		gpu_name(v, g, who, sizeof(who));
		if (!e->seen) {
			/* first sight: a GPU already down is said once; XIDs from before are the baseline */
			if (!v->up) {
				snprintf(line, sizeof(line), "%s is not answering: %s", who,
					 v->last_error[0] ? v->last_error : "no answer");
				emit(arg, line);
				lines++;
			}
		} else if (e->up && !v->up) {
			snprintf(line, sizeof(line), "%s stopped answering: %s", who,
				 v->last_error[0] ? v->last_error : "no answer");
			emit(arg, line);
			lines++;
		} else if (!e->up && v->up) {
			snprintf(line, sizeof(line), "%s answers again", who);
			emit(arg, line);
			lines++;
		}
		for (unsigned i = 0; e->seen && i < v->nxid && i < 32; i++) {
			uint64_t before = xid_seen(e, v->xid[i].code);
			if (v->xid[i].count > before) {
				xid_line(line, sizeof(line), who, v->xid[i].code, v->xid[i].count - before, v->xid[i].count,
					 rules);
				emit(arg, line);
				lines++;
			}
		}
		e->seen = true;
		e->up = v->up;
		e->nxid = v->nxid < 32 ? v->nxid : 32;
		for (unsigned i = 0; i < e->nxid; i++) {
			e->xid[i].code = v->xid[i].code;
			e->xid[i].count = v->xid[i].count;
		}
	}
	return lines;
}

int evlog_job_line(const struct evlog_job *j, char *line, size_t len)
{
	char who[160], where[GPU_MAX_GPUS * 3 + 32] = "";
	const char *name = j->name ? j->name : "";
	snprintf(who, sizeof(who), "job %llu (%s%s%s)", (unsigned long long)j->id, j->user && j->user[0] ? j->user : "?",
		 name[0] ? ": " : "", name);
	if (strcmp(j->state, "running") == 0) {
		unsigned n = 0;
		size_t at = 0;
		for (unsigned g = 0; g < GPU_MAX_GPUS && at < sizeof(where); g++)
			if (j->gpus >> g & 1u) {
				int w = snprintf(where + at, sizeof(where) - at, "%s%u", n ? "," : "", g);
				at += w > 0 ? (size_t)w : 0;
				n++;
			}
		if (j->mig_gpu >= 0)
			snprintf(where, sizeof(where), "GPU %d, MIG instance %d", j->mig_gpu, j->mig_gi);
		return snprintf(line, len, "%s started on %s%s", who,
				j->mig_gpu >= 0 ? "" : n == 1 ? "GPU " : n ? "GPUs " : "no GPU", where);
	}
	char how[48] = "";
	if (j->exit_signal > 0)
		snprintf(how, sizeof(how), ", signal %d", j->exit_signal);
	else if (j->exit_code >= 0)
		snprintf(how, sizeof(how), ", exit %d", j->exit_code);
	bool why = j->reason && j->reason[0] && strcmp(j->reason, j->state) != 0;
	return snprintf(line, len, "%s ended: %s%s%s%s%s", who, j->state, how, why ? " (" : "", why ? j->reason : "",
			why ? ")" : "");
}
