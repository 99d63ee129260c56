/* SPDX-License-Identifier: Apache-2.0 */
/* api.c - the agent's JSON documents (see api.h and docs/agent.md). */
#include "api.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "health/json.h"
#include "view/json_util.h"

void api_doc_init(struct api_doc *d)
{
	memset(d, 0, sizeof(*d));
}

void api_doc_free(struct api_doc *d)
{
	abuf_free(&d->head);
	abuf_free(&d->tail);
	for (unsigned i = 0; i < GPU_MAX_GPUS; i++)
		abuf_free(&d->item[i]);
	d->n = 0;
}

static void reset(struct api_doc *d)
{
	abuf_reset(&d->head);
	abuf_reset(&d->tail);
	for (unsigned i = 0; i < GPU_MAX_GPUS; i++)
		abuf_reset(&d->item[i]);
	d->n = 0;
}

int api_doc_join(const struct api_doc *d, uint64_t mask, bool pretty, struct abuf *out)
{
	struct abuf tmp;
	abuf_init(&tmp);
	struct abuf *dst = pretty ? &tmp : out;
	abuf_put(dst, d->head.p, d->head.len);
	bool first = true;
	for (unsigned i = 0; i < d->n && i < 64; i++) {
		if (!(mask & (1ull << i)))
			continue;
		if (!first)
			abuf_putc(dst, ',');
		first = false;
		abuf_put(dst, d->item[i].p, d->item[i].len);
	}
	abuf_put(dst, d->tail.p, d->tail.len);
	if (pretty && !tmp.oom) {
		json_error_t jerr;
		json_t *root = json_loadb(tmp.p, tmp.len, 0, &jerr);
		char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_DIGITS) : NULL;
		if (s) {
			abuf_puts(out, s);
			free(s);
		} else {
			out->oom = true;
		}
		json_decref(root);
	}
	if (!out->oom)
		abuf_putc(out, '\n');
	bool oom = out->oom || tmp.oom;
	abuf_free(&tmp);
	return oom ? -1 : 0;
}

/* Appends a compact dump of o to b and drops o. */
static void dump_into(struct abuf *b, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_DIGITS) : NULL;
	if (s) {
		abuf_puts(b, s);
		free(s);
	} else {
		b->oom = true;
	}
	json_decref(o);
}

static const char *host_of(const struct snapshot *snap, const char *hostname)
{
	if (hostname)
		return hostname;
	return VAL_HAS(snap->sys.hostname) ? snap->sys.hostname.s : snap->sys.server_name;
}

static void head_common(json_t *root, const struct snapshot *snap, const char *hostname)
{
	json_object_set_new(root, "simulated", json_boolean(snap->sys.simulated));
	if (snap->sys.simulated)
		json_object_set_new(root, "server", json_string(snap->sys.server_name));
	json_object_set_new(root, "hostname", json_string(host_of(snap, hostname)));
	json_object_set_new(root, "backend", json_string(snap->sys.backend));
	json_object_set_new(root, "taken", json_real((double)snap->taken_ns / 1e9));
}

/* Writes the document's head: the common fields, then `"<key>":[`. */
static void write_head(struct abuf *b, json_t *root, const char *key)
{
	struct abuf tmp;
	abuf_init(&tmp);
	dump_into(&tmp, root);
	/* the compact dump ends with '}': reopen it for the array */
	if (!tmp.oom && tmp.len >= 2) {
		abuf_put(b, tmp.p, tmp.len - 1);
		abuf_printf(b, "%s\"%s\":[", tmp.len > 2 ? "," : "", key);
	} else {
		b->oom = true;
	}
	abuf_free(&tmp);
}

/* One GPU: the object `info --json` writes (view/json_util.c) without the
 * per-link NVLink objects, then what only the agent knows. The old keys
 * written beside them for a release went in issue 35 (docs/changelog.md). */
static json_t *gpu_object(const struct snapshot *snap, unsigned i)
{
	const struct gpu_view *v = &snap->gpu[i];
	json_t *g = json_gpu_view(v, JSON_GPU_NO_NVLINK_LIST);
	json_object_set_new(g, "index", json_integer(i)); /* the snapshot's position, what ?gpu= selects */
	if (v->last_ok_ns)
		json_object_set_new(g, "sample_age_seconds",
				    json_real(snap->taken_ns > v->last_ok_ns ? (double)(snap->taken_ns - v->last_ok_ns) / 1e9 : 0));
	json_object_set_new(g, "samples", json_integer((json_int_t)v->samples));
	json_object_set_new(g, "errors", json_integer((json_int_t)v->errors));
	if (v->up && v->s.nvlink_n) {
		unsigned up = 0;
		for (unsigned l = 0; l < v->s.nvlink_n && l < GPU_MAX_NVLINKS; l++)
			up += VAL_HAS(v->s.nvlink[l].active) && v->s.nvlink[l].active.v;
		json_object_set_new(g, "nvlink_links", json_integer(v->s.nvlink_n));
		json_object_set_new(g, "nvlink_links_up", json_integer(up));
	}
	json_t *xids = json_array();
	for (unsigned k = 0; k < v->nxid && k < 32; k++) {
		json_t *xo = json_object();
		json_object_set_new(xo, "xid", json_integer((json_int_t)v->xid[k].code));
		json_object_set_new(xo, "count", json_integer((json_int_t)v->xid[k].count));
		json_object_set_new(xo, "last_seen", json_real((double)v->xid[k].last_ns / 1e9));
		json_array_append_new(xids, xo);
	}
	json_object_set_new(g, "xid", xids);
	json_unavailable_last(g);
	return g;
}

int api_render_gpus(struct api_doc *d, const struct snapshot *snap, const char *hostname)
{
	reset(d);
	json_t *root = json_object();
	head_common(root, snap, hostname);
	json_object_set_new(root, "system", json_gpu_system(&snap->sys)); /* as info --json's */
	write_head(&d->head, root, "gpus");
	bool oom = d->head.oom;
	for (unsigned i = 0; i < snap->n && i < GPU_MAX_GPUS; i++) {
		dump_into(&d->item[i], gpu_object(snap, i));
		oom |= d->item[i].oom;
	}
	d->n = snap->n;
	abuf_puts(&d->tail, "]}");
	return oom || d->tail.oom ? -1 : 0;
}

static json_t *leaks_of(const struct api_leak_watch *lw, unsigned gpu)
{
	json_t *a = json_array();
	char clean[64];
	for (unsigned k = 0; k < lw->nleaks; k++) {
		const struct leakwatch_leak *l = &lw->leaks[k];
		if (l->gpu != gpu)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "pid", json_integer(l->pid));
		utf8_clean(clean, sizeof(clean), l->user);
		json_object_set_new(o, "user", json_string(clean));
		utf8_clean(clean, sizeof(clean), l->comm);
		json_object_set_new(o, "name", json_string(clean)); /* as a process's (issue 35) */
		json_object_set_new(o, "gpu", json_integer(l->gpu));
		json_object_set_new(o, "growth_bytes_per_second", json_real(l->rate));
		json_object_set_new(o, "window_seconds", json_real(l->window_s));
		json_object_set_new(o, "used_mem_bytes", json_integer((json_int_t)l->bytes));
		json_array_append_new(a, o);
	}
	return a;
}

int api_render_health(struct api_doc *d, const struct snapshot *snap, const struct health_report *rep,
		      const char *hostname)
{
	return api_render_health_watch(d, snap, rep, hostname, NULL);
}

int api_render_health_watch(struct api_doc *d, const struct snapshot *snap, const struct health_report *rep,
			    const char *hostname, const struct api_leak_watch *lw)
{
	reset(d);
	json_t *root = json_object();
	head_common(root, snap, hostname);
	/* a version not read is left out and named under "unavailable" (docs/json.md),
	 * which goes after "gpus", in the tail: the last member, where readers look */
	json_put_strv(root, "driver_version", &snap->sys.driver_version);
	json_put_strv(root, "cuda_driver_version", &snap->sys.cuda_driver_version);
	json_t *unavailable = json_incref(json_object_get(root, "unavailable"));
	json_object_del(root, "unavailable");
	json_object_set_new(root, "rules", json_boolean(rep != NULL));
	if (rep) {
		json_object_set_new(root, "verdict", json_string(health_verdict_name(rep->verdict)));
		json_object_set_new(root, "action", json_string(health_action_name(rep->action)));
		json_t *sys = health_entity_json(&rep->system, rep->system.verdict, rep->system.action, HEALTH_JSON_BRIEF);
		json_object_set_new(root, "system", sys);
	}
	if (lw) {
		json_t *w = json_object();
		json_object_set_new(w, "window_seconds", json_real(lw->window_s));
		json_object_set_new(w, "min_rate_bytes_per_second", json_real(lw->min_rate));
		json_object_set_new(w, "min_growth_bytes", json_real(lw->min_growth));
		json_object_set_new(w, "tracked_processes", json_integer(lw->tracked));
		json_object_set_new(w, "untracked_sightings", json_integer((json_int_t)lw->untracked));
		json_object_set_new(root, "leak_watch", w);
	}
	write_head(&d->head, root, "gpus");
	bool oom = d->head.oom;
	for (unsigned i = 0; i < snap->n && i < GPU_MAX_GPUS; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		json_t *g;
		if (rep && i < rep->n) {
			g = health_entity_json(&rep->gpu[i], health_gpu_verdict(rep, i), health_gpu_action(rep, i),
					       HEALTH_JSON_BRIEF);
		} else {
			g = json_object();
			json_object_set_new(g, "verdict", json_string(v->up ? "PASS" : "FAIL"));
		}
		json_object_set_new(g, "index", json_integer(i));
		json_put_strv(g, "uuid", &v->st.uuid);
		json_object_set_new(g, "up", json_boolean(v->up));
		json_object_set_new(g, "error", v->last_error[0] ? json_string(v->last_error) : json_null()); /* as json_gpu_view */
		if (lw)
			json_object_set_new(g, "leaks", leaks_of(lw, i));
		json_unavailable_last(g);
		dump_into(&d->item[i], g);
		oom |= d->item[i].oom;
	}
	d->n = snap->n;
	abuf_putc(&d->tail, ']');
	if (unavailable) {
		abuf_puts(&d->tail, ",\"unavailable\":");
		dump_into(&d->tail, unavailable);
	}
	abuf_putc(&d->tail, '}');
	return oom || d->tail.oom ? -1 : 0;
}
