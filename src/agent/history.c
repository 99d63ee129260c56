/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the per-GPU ring buffers behind /api/v1/history (see history.h). */
#include "history.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STEP_NS 10000000ull /* a stored time's unit: 10 ms */
#define COARSE_STEPS (HISTORY_COARSE_NS / STEP_NS)

/* a row of the field table: key and unit those of --json's "sample" */
#define SERIES(member, quantum) { #member, offsetof(struct gpu_sample, member), quantum }
const struct history_series history_series[HISTORY_SERIES] = {
	SERIES(util_gpu_pct, 1),
	SERIES(util_mem_pct, 1),
	SERIES(mem_used_bytes, 4ull << 20), /* 4 MiB steps: up to 256 GiB per GPU */
	SERIES(power_mw, 100),              /* 100 mW steps: up to 6553.4 W */
	SERIES(temp_c, 1),
	SERIES(sm_clock_mhz, 1),
	/* narrow: whole percent in 8 bits */
	SERIES(prof_sm_active_pct, 1),
	SERIES(prof_sm_occupancy_pct, 1),
	SERIES(prof_tensor_active_pct, 1),
	SERIES(prof_dram_active_pct, 1),
};
#undef SERIES

/* The 10 s bucket being filled from the points the full tier lets go. */
struct acc {
	uint32_t bucket;      /* t / COARSE_STEPS of its points */
	uint32_t t;           /* the newest folded point's time */
	uint32_t sum[HISTORY_SERIES];
	uint16_t n[HISTORY_SERIES], lo[HISTORY_SERIES], hi[HISTORY_SERIES];
	bool any;
};

struct ring {
	struct history_point *pts;  /* the full tier: `full` points */
	unsigned head;        /* where the next point goes */
	unsigned count;
	uint64_t last_ns;     /* the timestamp of the newest point's sample */
	struct history_coarse *cp;  /* the coarse tier: `coarse` 10 s points */
	unsigned chead, ccount;
	struct acc acc;
};

struct history {
	pthread_mutex_t mu;
	unsigned ngpus, full, coarse;
	uint64_t base_ns;
	struct history_point *all;      /* ngpus * full, one allocation */
	struct history_coarse *call;    /* ngpus * coarse, one allocation (NULL: no coarse tier) */
	struct ring ring[];
};

uint16_t history_quantize(unsigned series, uint64_t value, bool present)
{
	if (!present || series >= HISTORY_SERIES)
		return HISTORY_MISSING;
	uint64_t q = history_series[series].quantum;
	uint64_t r = value / q + (value % q >= (q + 1) / 2 ? 1 : 0);
	uint64_t max = series < HISTORY_WIDE ? HISTORY_Q_MAX : HISTORY_NARROW_Q_MAX;
	return r > max ? (uint16_t)max : (uint16_t)r;
}

/* Series i of a point: stored 16 or 8 bits wide (HISTORY_MISSING for none). */
static uint16_t point_get(const struct history_vals *p, unsigned i)
{
	if (i < HISTORY_WIDE)
		return p->v[i];
	uint8_t b = p->p[i - HISTORY_WIDE];
	return b == 0xFFu ? (uint16_t)HISTORY_MISSING : b;
}

static void point_set(struct history_vals *p, unsigned i, uint16_t q)
{
	if (i < HISTORY_WIDE)
		p->v[i] = q;
	else
		p->p[i - HISTORY_WIDE] = q == HISTORY_MISSING ? 0xFFu : (uint8_t)q;
}

uint64_t history_base_ns(uint64_t now_ns)
{
	const uint64_t hour = 3600000000000ull;
	return now_ns > hour ? now_ns - hour : 0;
}

unsigned history_slots_for(uint64_t duration_ns, uint64_t interval_ns)
{
	if (interval_ns == 0)
		return HISTORY_MAX_SLOTS;
	uint64_t n = duration_ns / interval_ns + (duration_ns % interval_ns ? 1 : 0);
	if (n < 1)
		n = 1;
	return n > HISTORY_MAX_SLOTS ? HISTORY_MAX_SLOTS : (unsigned)n;
}

void history_tiers_for(uint64_t duration_ns, uint64_t interval_ns, unsigned *full, unsigned *coarse)
{
	*coarse = 0;
	if (interval_ns >= HISTORY_COARSE_NS || duration_ns <= HISTORY_FULL_NS) {
		*full = history_slots_for(duration_ns, interval_ns);
		return;
	}
	*full = history_slots_for(HISTORY_FULL_NS, interval_ns);
	uint64_t rest = duration_ns - HISTORY_FULL_NS;
	uint64_t c = rest / HISTORY_COARSE_NS + (rest % HISTORY_COARSE_NS ? 1 : 0);
	uint64_t room = HISTORY_MAX_SLOTS - *full; /* full <= HISTORY_MAX_SLOTS */
	*coarse = (unsigned)(c > room ? room : c);
}

static void point_clear(struct history_vals *p)
{
	for (unsigned i = 0; i < HISTORY_SERIES; i++)
		point_set(p, i, HISTORY_MISSING);
}

struct history *history_new_tiered(unsigned ngpus, unsigned full, unsigned coarse, uint64_t base_ns)
{
	if (ngpus == 0 || ngpus > GPU_MAX_GPUS || full == 0 || full > HISTORY_MAX_SLOTS ||
	    coarse > HISTORY_MAX_SLOTS - full)
		return NULL;
	struct history *h = calloc(1, sizeof(*h) + ngpus * sizeof(struct ring));
	if (!h)
		return NULL;
	size_t n = (size_t)ngpus * full, nc = (size_t)ngpus * coarse;
	h->all = malloc(n * sizeof(*h->all));
	h->call = nc ? malloc(nc * sizeof(*h->call)) : NULL;
	if (!h->all || (nc && !h->call)) {
		free(h->all);
		free(h->call);
		free(h);
		return NULL;
	}
	/* every slot written now (a slot nobody filled has no values), so the
	 * footprint is the full one from the start, not an hour later */
	for (size_t k = 0; k < n; k++) {
		h->all[k].t = 0;
		point_clear(&h->all[k].x);
	}
	for (size_t k = 0; k < nc; k++) {
		h->call[k].mean.t = 0;
		point_clear(&h->call[k].mean.x);
		point_clear(&h->call[k].lo);
		point_clear(&h->call[k].hi);
	}
	pthread_mutex_init(&h->mu, NULL);
	h->ngpus = ngpus;
	h->full = full;
	h->coarse = coarse;
	h->base_ns = base_ns - base_ns % STEP_NS; /* times print exactly in 10 ms steps */
	for (unsigned g = 0; g < ngpus; g++) {
		h->ring[g].pts = h->all + (size_t)g * full;
		h->ring[g].cp = coarse ? h->call + (size_t)g * coarse : NULL;
	}
	return h;
}

struct history *history_new(unsigned ngpus, unsigned slots, uint64_t base_ns)
{
	return history_new_tiered(ngpus, slots, 0, base_ns);
}

void history_free(struct history *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->mu);
	free(h->all);
	free(h->call);
	free(h);
}

size_t history_bytes(const struct history *h)
{
	return h ? sizeof(*h) + h->ngpus * (sizeof(struct ring) + h->full * sizeof(struct history_point) +
					    h->coarse * sizeof(struct history_coarse))
		 : 0;
}

unsigned history_slots(const struct history *h)
{
	/* the coarse tier's points and the bucket being filled */
	return h ? h->full + h->coarse + (h->coarse ? 1 : 0) : 0;
}

/* The bucket's mean (rounded), least and greatest of each series; missing where no point had it. */
static void acc_point(const struct acc *a, struct history_coarse *c)
{
	c->mean.t = a->t;
	for (unsigned i = 0; i < HISTORY_SERIES; i++) {
		bool has = a->n[i] > 0;
		point_set(&c->mean.x, i, has ? (uint16_t)((a->sum[i] + a->n[i] / 2) / a->n[i]) : HISTORY_MISSING);
		point_set(&c->lo, i, has ? a->lo[i] : HISTORY_MISSING);
		point_set(&c->hi, i, has ? a->hi[i] : HISTORY_MISSING);
	}
}

/* Folds a point the full tier lets go into the coarse tier (h->mu held). */
static void fold(struct history *h, struct ring *r, const struct history_point *p)
{
	struct acc *a = &r->acc;
	uint32_t bucket = (uint32_t)(p->t / COARSE_STEPS);
	if (a->any && bucket != a->bucket) {
		acc_point(a, &r->cp[r->chead]);
		r->chead = (r->chead + 1) % h->coarse;
		if (r->ccount < h->coarse)
			r->ccount++;
		memset(a, 0, sizeof(*a));
	}
	a->any = true;
	a->bucket = bucket;
	a->t = p->t;
	for (unsigned i = 0; i < HISTORY_SERIES; i++) {
		uint16_t q = point_get(&p->x, i);
		if (q == HISTORY_MISSING)
			continue;
		a->lo[i] = a->n[i] == 0 || q < a->lo[i] ? q : a->lo[i];
		a->hi[i] = a->n[i] == 0 || q > a->hi[i] ? q : a->hi[i];
		a->sum[i] += q;
		a->n[i]++;
	}
}

void history_add(struct history *h, unsigned gpu, const struct gpu_sample *s)
{
	if (!h || gpu >= h->ngpus || s->timestamp_ns < h->base_ns)
		return;
	uint64_t steps = (s->timestamp_ns - h->base_ns) / STEP_NS;
	if (steps > UINT32_MAX)
		return; /* 497 days after the start: the agent's times no longer fit */
	struct history_point p = { .t = (uint32_t)steps };
	for (unsigned i = 0; i < HISTORY_SERIES; i++) {
		const u64v *val = (const u64v *)((const char *)s + history_series[i].field);
		point_set(&p.x, i, history_quantize(i, val->v, VAL_HAS(*val)));
	}
	pthread_mutex_lock(&h->mu);
	struct ring *r = &h->ring[gpu];
	if (r->count == 0 || s->timestamp_ns > r->last_ns) {
		if (r->count == h->full && h->coarse)
			fold(h, r, &r->pts[r->head]); /* the oldest, about to be overwritten */
		r->pts[r->head] = p;
		r->head = (r->head + 1) % h->full;
		if (r->count < h->full)
			r->count++;
		r->last_ns = s->timestamp_ns;
	}
	pthread_mutex_unlock(&h->mu);
}

void history_add_snapshot(struct history *h, const struct snapshot *snap)
{
	for (unsigned g = 0; h && g < snap->n && g < h->ngpus; g++)
		if (snap->gpu[g].up)
			history_add(h, g, &snap->gpu[g].s);
}

struct history_cursor {
	struct history *h;
	struct history_doc_opts o;
	struct history_point *pts; /* one GPU's points (means for the coarse ones), history_slots long */
	struct history_point *lo, *hi; /* the coarse points' least and greatest, h->coarse + 1 long */
	unsigned next_gpu;         /* the next GPU to look at */
	bool started, any_gpu, done;
};

/* Copies GPU g's points after since_ns, oldest first, into c's buffers: the
 * coarse tier's, the bucket being filled, then the full tier's. Returns how
 * many; *ncoarse: how many of them (the first ones) are 10 s points. */
static unsigned copy_points(struct history_cursor *c, unsigned g, unsigned *ncoarse)
{
	struct history *h = c->h;
	uint64_t since_steps = 0;
	bool all = c->o.since_ns < h->base_ns;
	if (!all)
		since_steps = (c->o.since_ns - h->base_ns) / STEP_NS;
	unsigned n = 0;
	pthread_mutex_lock(&h->mu);
	const struct ring *r = &h->ring[g];
	/* a point's time is rounded down to 10 ms: "after since" means a later step */
	if (h->coarse) {
		unsigned first = (r->chead + h->coarse - r->ccount) % h->coarse;
		for (unsigned k = 0; k <= r->ccount; k++) {
			struct history_coarse pending;
			const struct history_coarse *cp = &r->cp[(first + k) % h->coarse];
			if (k == r->ccount) { /* the bucket being filled */
				if (!r->acc.any)
					break;
				acc_point(&r->acc, &pending);
				cp = &pending;
			}
			if (all || cp->mean.t > since_steps) {
				c->pts[n] = cp->mean;
				c->lo[n].x = cp->lo;
				c->hi[n++].x = cp->hi;
			}
		}
	}
	*ncoarse = n;
	unsigned first = (r->head + h->full - r->count) % h->full;
	for (unsigned k = 0; k < r->count; k++) {
		const struct history_point *p = &r->pts[(first + k) % h->full];
		if (all || p->t > since_steps)
			c->pts[n++] = *p;
	}
	pthread_mutex_unlock(&h->mu);
	return n;
}

static void put_value(struct abuf *b, unsigned series, uint16_t q)
{
	if (q == HISTORY_MISSING)
		abuf_puts(b, "null");
	else
		abuf_put_u64(b, (uint64_t)q * history_series[series].quantum);
}

struct history_cursor *history_cursor_new(struct history *h, const struct history_doc_opts *o)
{
	struct history_cursor *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->h = h;
	c->o = *o;
	if (h && (!(c->pts = malloc(history_slots(h) * sizeof(*c->pts))) ||
		  !(c->lo = malloc((h->coarse + 1) * sizeof(*c->lo))) ||
		  !(c->hi = malloc((h->coarse + 1) * sizeof(*c->hi))))) {
		history_cursor_free(c);
		return NULL;
	}
	return c;
}

void history_cursor_free(struct history_cursor *c)
{
	if (!c)
		return;
	free(c->pts);
	free(c->lo);
	free(c->hi);
	free(c);
}

/* ,"name":[v,...] of series i of n points */
static void put_column(struct abuf *out, unsigned i, const struct history_point *pts, unsigned n)
{
	abuf_printf(out, "%s\"%s\":[", i ? "," : "", history_series[i].name);
	for (unsigned k = 0; k < n; k++) {
		if (k)
			abuf_putc(out, ',');
		put_value(out, i, point_get(&pts[k].x, i));
	}
	abuf_putc(out, ']');
}

/* One GPU's object: its points after since, as columns; the coarse ones' least and greatest. */
static void render_gpu(struct history_cursor *c, unsigned g, struct abuf *out)
{
	struct history *h = c->h;
	uint64_t base_steps = h->base_ns / STEP_NS;
	unsigned nc, n = copy_points(c, g, &nc);
	abuf_printf(out, "%s{\"index\":%u,\"t\":[", c->any_gpu ? "," : "", g);
	c->any_gpu = true;
	for (unsigned k = 0; k < n; k++) {
		if (k)
			abuf_putc(out, ',');
		abuf_put_scaled(out, base_steps + c->pts[k].t, 2);
	}
	abuf_puts(out, "],");
	for (unsigned i = 0; i < HISTORY_SERIES; i++)
		put_column(out, i, c->pts, n);
	abuf_printf(out, ",\"coarse\":%u,\"min\":{", nc);
	for (unsigned i = 0; i < HISTORY_SERIES; i++)
		put_column(out, i, c->lo, nc);
	abuf_puts(out, "},\"max\":{");
	for (unsigned i = 0; i < HISTORY_SERIES; i++)
		put_column(out, i, c->hi, nc);
	abuf_puts(out, "}}");
}

bool history_cursor_next(struct history_cursor *c, struct abuf *out)
{
	if (c->done)
		return false;
	if (!c->started) {
		c->started = true;
		abuf_printf(out, "{\"simulated\":%s,\"interval_seconds\":", c->o.simulated ? "true" : "false");
		abuf_put_scaled(out, c->o.interval_ns / 1000000ull, 3);
		abuf_printf(out, ",\"capacity\":%u,\"window_seconds\":", history_slots(c->h));
		uint64_t window_ms = c->h ? (c->o.interval_ns * c->h->full + HISTORY_COARSE_NS * c->h->coarse) / 1000000ull : 0;
		abuf_put_scaled(out, window_ms, 3);
		abuf_puts(out, ",\"gpus\":[");
		return true;
	}
	for (; c->h && c->next_gpu < c->h->ngpus && c->next_gpu < 64; c->next_gpu++) {
		if (c->o.gpu_mask & (1ull << c->next_gpu)) {
			render_gpu(c, c->next_gpu++, out);
			return true;
		}
	}
	abuf_puts(out, "]}\n");
	c->done = true;
	return true;
}

int history_render(struct history *h, const struct history_doc_opts *o, struct abuf *out)
{
	struct history_cursor *c = history_cursor_new(h, o);
	if (!c)
		return -1;
	while (history_cursor_next(c, out))
		;
	history_cursor_free(c);
	return out->oom ? -1 : 0;
}
