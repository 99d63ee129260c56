/* SPDX-License-Identifier: Apache-2.0 */
/* metrics_dcgm.c - dcgm-exporter's names for the agent's values (see metrics_dcgm.h). */
#include "metrics_dcgm.h"

#include <stdio.h>
#include <string.h>

#define DCGM_ROW(name, type, member, mul, div, dec, help) \
	{ #name, METRIC_##type, offsetof(struct gpu_sample, member), #member, mul, div, dec, help },
const struct dcgm_compat_row dcgm_compat_rows[] = { DCGM_COMPAT_TABLE(DCGM_ROW) };
#undef DCGM_ROW
const size_t dcgm_compat_rows_n = sizeof(dcgm_compat_rows) / sizeof(dcgm_compat_rows[0]);

/* dcgm-exporter's label keys, in its order; the last three (Kubernetes') are
 * empty unless a label.* setting gives one a value. */
static const char *const dcgm_keys[] = { "gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
					 "container", "namespace", "pod" };
enum { DCGM_NKEYS = sizeof(dcgm_keys) / sizeof(dcgm_keys[0]), DCGM_FIRST_K8S = 6 };

static int dcgm_key_index(const char *key)
{
	for (int k = 0; k < DCGM_NKEYS; k++)
		if (strcmp(dcgm_keys[k], key) == 0)
			return k;
	return -1;
}

/* dcgm-exporter's labels of GPU i, without the braces: a label.* setting
 * named as one of them is not written twice (Prometheus drops a scrape with
 * a duplicate label): it fills a Kubernetes one, the others keep theirs. */
static void gpu_labels(struct abuf *b, const struct snapshot *snap, unsigned i, const struct metrics_opts *o)
{
	const struct gpu_static *st = &snap->gpu[i].st;
	char idx[16], dev[24];
	snprintf(idx, sizeof(idx), "%u", i);
	snprintf(dev, sizeof(dev), "nvidia%u", i);
	const char *val[DCGM_NKEYS] = { idx, VAL_HAS(st->uuid) ? st->uuid.s : "",
		VAL_HAS(st->pci_bus_id) ? st->pci_bus_id.s : "", dev, VAL_HAS(st->name) ? st->name.s : "",
		metrics_hostname(snap, o), "", "", "" };
	for (unsigned k = 0; k < o->nlabels; k++) {
		int d = dcgm_key_index(o->labels[k].key);
		if (d >= DCGM_FIRST_K8S)
			val[d] = o->labels[k].value;
	}
	for (int k = 0; k < DCGM_NKEYS; k++)
		metrics_put_label(b, k == 0, dcgm_keys[k], val[k]);
	for (unsigned k = 0; k < o->nlabels; k++)
		if (dcgm_key_index(o->labels[k].key) < 0)
			metrics_put_label(b, false, o->labels[k].key, o->labels[k].value);
}

static void family_head(struct abuf *b, const char *name, enum metric_type type, const char *help, bool om)
{
	const char *t = type == METRIC_GAUGE ? "gauge" : om ? "unknown" : "counter";
	abuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, t);
}

static void sample(struct abuf *b, const char *name, const struct abuf *lab, size_t from, size_t to, uint64_t v,
		   unsigned dec)
{
	abuf_puts(b, name);
	abuf_putc(b, '{');
	abuf_put(b, lab->p + from, to - from);
	abuf_put(b, "} ", 2);
	abuf_put_scaled(b, v, dec);
	abuf_putc(b, '\n');
}

/* The field of MIG instance m that row's gpu_sample member is for, or NULL
 * (a row the instances do not have). */
static const u64v *mig_field(const struct gpu_mig *m, size_t sample_off)
{
#define MIG_FIELD(member) \
	if (sample_off == offsetof(struct gpu_sample, member)) \
		return &m->member;
	GPU_MIG_PROF_FIELDS(MIG_FIELD)
#undef MIG_FIELD
	return NULL;
}

/* The row's series of GPU i's MIG instances, as dcgm-exporter writes them
 * with MIG on: the GPU's labels and GPU_I_PROFILE, GPU_I_ID. */
static bool render_mig_rows(struct abuf *out, const struct dcgm_compat_row *row, const struct snapshot *snap,
			    unsigned i, const struct abuf *lab, size_t from, size_t to, bool headed,
			    const struct metrics_opts *o)
{
	const struct gpu_view *v = &snap->gpu[i];
	for (unsigned k = 0; v->mig && k < v->nmig && k < GPU_MAX_MIG; k++) {
		const u64v *x = mig_field(&v->mig[k], row->off);
		if (!x || !VAL_HAS(*x))
			continue;
		if (!headed)
			family_head(out, row->name, row->type, row->help, o->openmetrics);
		headed = true;
		char gi[16];
		snprintf(gi, sizeof(gi), "%u", v->mig[k].gi_id);
		abuf_puts(out, row->name);
		abuf_putc(out, '{');
		abuf_put(out, lab->p + from, to - from);
		metrics_put_label(out, false, "GPU_I_PROFILE", v->mig[k].profile);
		metrics_put_label(out, false, "GPU_I_ID", gi);
		abuf_put(out, "} ", 2);
		abuf_put_scaled(out, x->v * row->mul / row->div, row->dec);
		abuf_putc(out, '\n');
	}
	return headed;
}

/* The code of the XID seen last on GPU v, or 0. */
static uint64_t last_xid(const struct gpu_view *v)
{
	uint64_t code = 0, at = 0;
	for (unsigned k = 0; k < v->nxid && k < 32; k++)
		if (v->xid[k].count && v->xid[k].last_ns >= at) {
			at = v->xid[k].last_ns;
			code = v->xid[k].code;
		}
	return code;
}

void metrics_dcgm_render(struct abuf *out, const struct snapshot *snap, const struct metrics_opts *o)
{
	struct abuf lab;
	size_t off[GPU_MAX_GPUS + 1];
	if (snap->n > GPU_MAX_GPUS)
		return;
	abuf_init(&lab);
	for (unsigned i = 0; i < snap->n; i++) {
		off[i] = lab.len;
		gpu_labels(&lab, snap, i, o);
	}
	off[snap->n] = lab.len;
	for (size_t r = 0; r < dcgm_compat_rows_n; r++) {
		const struct dcgm_compat_row *row = &dcgm_compat_rows[r];
		bool headed = false;
		for (unsigned i = 0; i < snap->n; i++) {
			const struct gpu_view *v = &snap->gpu[i];
			const u64v *x = (const u64v *)(const void *)((const char *)&v->s + row->off);
			if (v->up && v->nmig)
				headed = render_mig_rows(out, row, snap, i, &lab, off[i], off[i + 1], headed, o);
			if (!v->up || !VAL_HAS(*x))
				continue;
			if (!headed)
				family_head(out, row->name, row->type, row->help, o->openmetrics);
			headed = true;
			sample(out, row->name, &lab, off[i], off[i + 1], x->v * row->mul / row->div, row->dec);
		}
	}
	if (o->groups & MG_XID) {
		bool headed = false;
		for (unsigned i = 0; i < snap->n; i++) {
			if (!snap->gpu[i].up)
				continue;
			if (!headed)
				family_head(out, DCGM_COMPAT_XID_NAME, METRIC_GAUGE,
					    "Value of the last XID error encountered (0: none since the agent started).",
					    o->openmetrics);
			headed = true;
			sample(out, DCGM_COMPAT_XID_NAME, &lab, off[i], off[i + 1], last_xid(&snap->gpu[i]), 0);
		}
	}
	if (lab.oom)
		out->oom = true;
	abuf_free(&lab);
}
