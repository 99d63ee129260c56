/* SPDX-License-Identifier: Apache-2.0 */
/* queue_view.c - see queue_view.h. */
#include "queue_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jscan.h"

const char *queue_view_str(const struct queue_view *v, size_t off)
{
	return off == QV_NONE || off >= v->strings.len ? NULL : v->strings.p + off;
}

void queue_view_free(struct queue_view *v)
{
	free(v->rows);
	abuf_free(&v->strings);
	memset(v, 0, sizeof(*v));
}

/* The value whose first token is t: its string kept, or QV_NONE (and the
 * value skipped) when it is not a string. */
static int read_str(struct jscan *s, enum jscan_tok t, struct queue_view *v, size_t *out)
{
	*out = QV_NONE;
	if (t != JS_STR)
		return jscan_skip(s, t);
	*out = v->strings.len;
	abuf_put(&v->strings, s->str, s->len + 1);
	return v->strings.oom ? -1 : 0;
}

static int read_int(struct jscan *s, enum jscan_tok t, long long *out)
{
	*out = t == JS_INT ? s->num : 0;
	return jscan_skip(s, t);
}

static bool key_is(const struct jscan *s, const char *k)
{
	return strcmp(s->str, k) == 0;
}

/* Which of names[0..n) the key is (n when none): lengths first, since
 * every job's dozen keys are matched */
static unsigned key_index(const struct jscan *s, const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (names[i][0] == s->str[0] && strlen(names[i]) == s->len && memcmp(names[i], s->str, s->len) == 0)
			return i;
	return n;
}

/* Calls field(s, key's value token, ctx) for each member of the object whose
 * '{' was just read; 0 at its end, -1 when malformed. */
static int each_member(struct jscan *s, int (*field)(struct jscan *, void *), void *ctx)
{
	for (;;) {
		enum jscan_tok t = jscan_next(s);
		if (t == JS_OBJ_END)
			return 0;
		if (t != JS_KEY)
			return -1;
		/* the key is in s->str until the value's token replaces it */
		if (field(s, ctx) != 0)
			return -1;
	}
}

struct row_ctx {
	struct queue_view *v;
	struct queue_row *r;
};

static int request_field(struct jscan *s, void *ctx)
{
	struct row_ctx *c = ctx;
	struct queue_row *r = c->r;
	int which = key_is(s, "mig") ? 1 : key_is(s, "gpus") ? 2 : key_is(s, "nvlink") ? 3 : 0;
	enum jscan_tok t = jscan_next(s);
	switch (which) {
	case 1:
		return read_str(s, t, c->v, &r->req_mig);
	case 2:
		return read_int(s, t, &r->req_gpus);
	case 3:
		r->req_nvlink = t == JS_TRUE;
		return jscan_skip(s, t);
	default:
		return jscan_skip(s, t);
	}
}

static int mig_field(struct jscan *s, void *ctx)
{
	struct queue_row *r = ctx;
	bool gi = key_is(s, "gi");
	enum jscan_tok t = jscan_next(s);
	if (gi)
		return read_int(s, t, &r->mig_gi);
	return jscan_skip(s, t);
}

/* "gpus": the indexes joined by commas, cut at the buffer's end as
 * snprintf cuts; anything but an integer counts as 0. */
static int read_gpus(struct jscan *s, enum jscan_tok t, struct queue_row *r)
{
	r->gpus[0] = '\0';
	if (t != JS_ARR)
		return jscan_skip(s, t);
	size_t l = 0;
	for (unsigned i = 0;; i++) {
		enum jscan_tok e = jscan_next(s);
		if (e == JS_ARR_END)
			return 0;
		long long g;
		if (read_int(s, e, &g) != 0)
			return -1;
		if (l + 1 < sizeof(r->gpus)) {
			snprintf(r->gpus + l, sizeof(r->gpus) - l, "%s%lld", i ? "," : "", g);
			l += strlen(r->gpus + l);
		}
	}
}

static int job_field(struct jscan *s, void *ctx)
{
	struct row_ctx *c = ctx;
	struct queue_row *r = c->r;
	static const char *const names[] = { "id",	 "user",     "name",	"state",   "reason",	  "priority",
					     "submit_ns", "start_ns", "request", "gpus",	   "mig_instance", "est_start_ns",
					     "warning" };
	unsigned which = key_index(s, names, sizeof(names) / sizeof(names[0]));
	enum jscan_tok t = jscan_next(s);
	switch (which) {
	case 0: return read_int(s, t, &r->id);
	case 1: return read_str(s, t, c->v, &r->user);
	case 2: return read_str(s, t, c->v, &r->name);
	case 3: return read_str(s, t, c->v, &r->state);
	case 4: return read_str(s, t, c->v, &r->reason);
	case 5: return read_int(s, t, &r->priority);
	case 6: return read_int(s, t, &r->submit_ns);
	case 7: return read_int(s, t, &r->start_ns);
	case 8:
		r->req_mig = QV_NONE;
		r->req_gpus = 0;
		r->req_nvlink = false;
		return t == JS_OBJ ? each_member(s, request_field, c) : jscan_skip(s, t);
	case 9: return read_gpus(s, t, r);
	case 10:
		r->has_mig_instance = true;
		r->mig_gi = 0;
		return t == JS_OBJ ? each_member(s, mig_field, r) : jscan_skip(s, t);
	case 11: return read_int(s, t, &r->est_start_ns);
	case 12: return read_str(s, t, c->v, &r->warning);
	default: return jscan_skip(s, t);
	}
}

static struct queue_row *new_row(struct queue_view *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct queue_row *g = realloc(v->rows, cap * sizeof(*g));
		if (!g)
			return NULL;
		v->rows = g;
		v->cap = cap;
	}
	struct queue_row *r = &v->rows[v->n++];
	memset(r, 0, sizeof(*r));
	r->user = r->name = r->state = r->reason = r->warning = r->req_mig = QV_NONE;
	return r;
}

static int read_jobs(struct jscan *s, enum jscan_tok t, struct queue_view *v)
{
	v->n = 0;
	if (t != JS_ARR)
		return jscan_skip(s, t);
	for (;;) {
		enum jscan_tok e = jscan_next(s);
		if (e == JS_ARR_END)
			return 0;
		struct row_ctx c = { v, new_row(v) };
		if (!c.r)
			return -1;
		if (e == JS_OBJ ? each_member(s, job_field, &c) != 0 : jscan_skip(s, e) != 0)
			return -1;
	}
}

static int top_field(struct jscan *s, void *ctx)
{
	struct queue_view *v = ctx;
	static const char *const names[] = { "ok", "error", "jobs", "pending", "running", "simulated" };
	unsigned which = key_index(s, names, sizeof(names) / sizeof(names[0]));
	enum jscan_tok t = jscan_next(s);
	switch (which) {
	case 0:
		v->ok = t == JS_TRUE;
		return jscan_skip(s, t);
	case 1: return read_str(s, t, v, &v->error);
	case 2: return read_jobs(s, t, v);
	case 3: return read_int(s, t, &v->pending);
	case 4: return read_int(s, t, &v->running);
	case 5:
		v->simulated = t == JS_TRUE;
		return jscan_skip(s, t);
	default: return jscan_skip(s, t);
	}
}

int queue_view_read(const char *answer, size_t len, struct queue_view *v)
{
	memset(v, 0, sizeof(*v));
	v->error = QV_NONE;
	struct jscan s;
	jscan_init(&s, answer, len);
	int rc = -1;
	if (jscan_next(&s) == JS_OBJ && each_member(&s, top_field, v) == 0 && jscan_next(&s) == JS_EOF)
		rc = 0;
	jscan_free(&s);
	if (rc != 0)
		queue_view_free(v);
	return rc;
}
