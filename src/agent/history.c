/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the per-GPU ring buffers behind /api/v1/history (see history.h). */
#include "history.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STEP_NS 10000000ull /* a stored time's unit: 10 ms */

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

struct ring {
	struct history_point *pts;
	unsigned head;        /* where the next point goes */
	unsigned count;
	uint64_t last_ns;     /* the timestamp of the newest point's sample */
};

struct history {
	pthread_mutex_t mu;
	unsigned ngpus, slots;
	uint64_t base_ns;
	struct history_point *all; /* ngpus * slots, one allocation */
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
static uint16_t point_get(const struct history_point *p, unsigned i)
{
	if (i < HISTORY_WIDE)
		return p->v[i];
	uint8_t b = p->p[i - HISTORY_WIDE];
	return b == 0xFFu ? (uint16_t)HISTORY_MISSING : b;
}

static void point_set(struct history_point *p, unsigned i, uint16_t q)
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

struct history *history_new(unsigned ngpus, unsigned slots, uint64_t base_ns)
{
	if (ngpus == 0 || ngpus > GPU_MAX_GPUS || slots == 0 || slots > HISTORY_MAX_SLOTS)
		return NULL;
	struct history *h = calloc(1, sizeof(*h) + ngpus * sizeof(struct ring));
	if (!h)
		return NULL;
	size_t n = (size_t)ngpus * slots;
	h->all = malloc(n * sizeof(*h->all));
	if (!h->all) {
		free(h);
		return NULL;
	}
	/* every slot written now (a slot nobody filled has no values), so the
	 * footprint is the full one from the start, not an hour later */
	for (size_t k = 0; k < n; k++) {
		h->all[k].t = 0;
		for (unsigned i = 0; i < HISTORY_SERIES; i++)
			point_set(&h->all[k], i, HISTORY_MISSING);
	}
	pthread_mutex_init(&h->mu, NULL);
	h->ngpus = ngpus;
	h->slots = slots;
	h->base_ns = base_ns - base_ns % STEP_NS; /* times print exactly in 10 ms steps */
	for (unsigned g = 0; g < ngpus; g++)
		h->ring[g].pts = h->all + (size_t)g * slots;
	return h;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->mu);
	free(h->all);
	free(h);
}

size_t history_bytes(const struct history *h)
{
	return h ? sizeof(*h) + h->ngpus * (sizeof(struct ring) + h->slots * sizeof(struct history_point)) : 0;
}

unsigned history_slots(const struct history *h)
{
	return h ? h->slots : 0;
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
		point_set(&p, i, history_quantize(i, val->v, VAL_HAS(*val)));
	}
	pthread_mutex_lock(&h->mu);
	struct ring *r = &h->ring[gpu];
	if (r->count == 0 || s->timestamp_ns > r->last_ns) {
		r->pts[r->head] = p;
		r->head = (r->head + 1) % h->slots;
		if (r->count < h->slots)
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

/* Copies GPU g's points after since_ns, oldest first, into out (h->slots long); returns how many. */
static unsigned copy_points(struct history *h, unsigned g, uint64_t since_ns, struct history_point *out)
{
	uint64_t since_steps = 0;
	bool all = since_ns < h->base_ns;
	if (!all)
		since_steps = (since_ns - h->base_ns) / STEP_NS;
	pthread_mutex_lock(&h->mu);
	const struct ring *r = &h->ring[g];
	unsigned first = (r->head + h->slots - r->count) % h->slots, n = 0;
	for (unsigned k = 0; k < r->count; k++) {
		const struct history_point *p = &r->pts[(first + k) % h->slots];
		/* a point's time is rounded down to 10 ms: "after since" means a later step */
		if (all || p->t > since_steps)
			out[n++] = *p;
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

struct history_cursor {
	struct history *h;
	struct history_doc_opts o;
	struct history_point *pts; /* one GPU's points, h->slots long */
	unsigned next_gpu;         /* the next GPU to look at */
	bool started, any_gpu, done;
};

struct history_cursor *history_cursor_new(struct history *h, const struct history_doc_opts *o)
{
	struct history_cursor *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->h = h;
	c->o = *o;
	if (h && !(c->pts = malloc(h->slots * sizeof(*c->pts)))) {
		free(c);
		return NULL;
	}
	return c;
}

void history_cursor_free(struct history_cursor *c)
{
	if (!c)
		return;
	free(c->pts);
	free(c);
}

/* One GPU's object: its points after since, as columns. */
static void render_gpu(struct history_cursor *c, unsigned g, struct abuf *out)
{
	struct history *h = c->h;
	uint64_t base_steps = h->base_ns / STEP_NS;
	unsigned n = copy_points(h, g, c->o.since_ns, c->pts);
	abuf_printf(out, "%s{\"index\":%u,\"t\":[", c->any_gpu ? "," : "", g);
	c->any_gpu = true;
	for (unsigned k = 0; k < n; k++) {
		if (k)
			abuf_putc(out, ',');
		abuf_put_scaled(out, base_steps + c->pts[k].t, 2);
	}
	abuf_putc(out, ']');
	for (unsigned i = 0; i < HISTORY_SERIES; i++) {
		abuf_printf(out, ",\"%s\":[", history_series[i].name);
		for (unsigned k = 0; k < n; k++) {
			if (k)
				abuf_putc(out, ',');
			put_value(out, i, point_get(&c->pts[k], i));
		}
		abuf_putc(out, ']');
	}
	abuf_putc(out, '}');
}

bool history_cursor_next(struct history_cursor *c, struct abuf *out)
{
	if (c->done)
		return false;
	if (!c->started) {
		c->started = true;
		abuf_printf(out, "{\"simulated\":%s,\"interval_seconds\":", c->o.simulated ? "true" : "false");
		abuf_put_scaled(out, c->o.interval_ns / 1000000ull, 3);
		abuf_printf(out, ",\"capacity\":%u,\"gpus\":[", history_slots(c->h));
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
