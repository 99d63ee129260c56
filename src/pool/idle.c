/* SPDX-License-Identifier: Apache-2.0 */
/* idle.c - see idle.h. */
#include "idle.h"

#include <stdio.h>

#include "core/units.h"
#include "device/snapshot.h"

bool idle_observe(struct idle_watch *w, const struct idle_params *p, uint64_t now_ns, bool have, double sm_pct)
{
	if (!have || !(sm_pct < p->threshold_pct)) {
		w->below = w->flagged = false;
		return false;
	}
	if (!w->below || now_ns < w->since_ns) {
		w->below = true;
		w->since_ns = now_ns;
		w->flagged = false;
	}
	w->flagged = p->window_ns > 0 && now_ns - w->since_ns >= p->window_ns;
	return w->flagged;
}

bool idle_job_sample(const struct snapshot *snap, const unsigned *gpus, unsigned n, uint64_t not_before_ns,
		     double *sm_pct)
{
	double hi = 0;
	if (!snap || n == 0)
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (gpus[i] >= snap->n)
			return false;
		const struct gpu_view *v = &snap->gpu[gpus[i]];
		if (!v->up || v->s.lost || v->s.timestamp_ns < not_before_ns || !VAL_HAS(v->s.prof_sm_active_pct))
			return false;
		if ((double)v->s.prof_sm_active_pct.v > hi)
			hi = (double)v->s.prof_sm_active_pct.v;
	}
	*sm_pct = hi;
	return true;
}

bool idle_mig_sample(const struct snapshot *snap, unsigned gpu, unsigned gi, uint64_t not_before_ns, double *sm_pct)
{
	if (!snap || gpu >= snap->n)
		return false;
	const struct gpu_view *v = &snap->gpu[gpu];
	if (!v->up || v->s.lost || v->s.timestamp_ns < not_before_ns)
		return false;
	const struct gpu_mig *m = gpu_view_mig(v, gi);
	if (!m || !VAL_HAS(m->prof_sm_active_pct))
		return false;
	*sm_pct = (double)m->prof_sm_active_pct.v;
	return true;
}

void idle_describe(const struct idle_params *p, char *out, size_t len)
{
	char window[32];
	units_fmt_duration(p->window_ns, window, sizeof(window));
	snprintf(out, len, "idle allocation: SM activity < %g%% for %s", p->threshold_pct, window);
}
