/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot_mem.c - a snapshot's memory, sized by its GPU count, its views
 * dense and their process and MIG tables packed after them (snapshot.h). */
#include "snapshot.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_link link_row[GPU_MAX_GPUS];

static size_t align_up(size_t at, size_t align)
{
	return (at + align - 1) / align * align;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/* Each view at its own part of the room: cap x GPU_MAX_PROCS entries and
 * cap x GPU_MAX_MIG, view i's from i x GPU_MAX_PROCS (GPU_MAX_MIG). */
static void own_tables(struct snapshot *s)
{
	for (unsigned i = 0; i < s->cap; i++) {
		s->gpu[i].procs = s->proc_room + (size_t)i * GPU_MAX_PROCS;
		s->gpu[i].mig = s->mig_room + (size_t)i * GPU_MAX_MIG;
	}
}

struct snapshot *snapshot_new(unsigned cap)
{
	if (cap == 0)
		cap = 1;
	if (cap > GPU_MAX_GPUS)
		cap = GPU_MAX_GPUS;
	/* header, views, rows, processes, MIG instances: each aligned as its type */
	size_t views_at = align_up(sizeof(struct snapshot), _Alignof(struct gpu_view));
	size_t rows_at = align_up(views_at + cap * sizeof(struct gpu_view), _Alignof(link_row));
	size_t procs_at = align_up(rows_at + cap * sizeof(link_row), _Alignof(struct gpu_process));
	size_t mig_at = align_up(procs_at + (size_t)cap * GPU_MAX_PROCS * sizeof(struct gpu_process),
				 _Alignof(struct gpu_mig));
	/* calloc: the room is zero pages the kernel gives only when written */
	char *block = calloc(1, mig_at + (size_t)cap * GPU_MAX_MIG * sizeof(struct gpu_mig));
	if (!block)
		return NULL;
	struct snapshot *s = (struct snapshot *)block;
	s->cap = cap;
	s->gpu = (struct gpu_view *)(block + views_at);
	s->link = (link_row *)(block + rows_at);
	s->proc_room = (struct gpu_process *)(block + procs_at);
	s->mig_room = (struct gpu_mig *)(block + mig_at);
	own_tables(s);
	return s;
}

void snapshot_free(struct snapshot *s)
{
	free(s);
}

void snapshot_attach(struct snapshot *s, struct gpu_view *views, struct gpu_link (*rows)[GPU_MAX_GPUS],
		     struct snapshot_tables *tables, unsigned cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap < GPU_MAX_GPUS ? cap : GPU_MAX_GPUS;
	s->gpu = views;
	s->link = rows;
	s->proc_room = tables->procs;
	s->mig_room = tables->mig;
	own_tables(s);
}

void snapshot_reset(struct snapshot *s)
{
	struct snapshot keep = *s;
	memset(s, 0, sizeof(*s));
	s->cap = keep.cap;
	s->gpu = keep.gpu;
	s->link = keep.link;
	s->proc_room = keep.proc_room;
	s->mig_room = keep.mig_room;
}

/* Whether p lies in [room, room + n): the view's table is in this snapshot's room. */
static bool in_room(const void *p, const void *room, size_t bytes)
{
	uintptr_t a = (uintptr_t)p, r = (uintptr_t)room;
	return p && a >= r && a < r + bytes;
}

void snapshot_clear(struct snapshot *s)
{
	size_t proc_bytes = (size_t)s->cap * GPU_MAX_PROCS * sizeof(struct gpu_process);
	size_t mig_bytes = (size_t)s->cap * GPU_MAX_MIG * sizeof(struct gpu_mig);
	/* the entries written: zeroing the whole room would make all of it resident */
	for (unsigned i = 0; i < s->cap; i++) {
		struct gpu_view *v = &s->gpu[i];
		if (in_room(v->procs, s->proc_room, proc_bytes))
			memset(v->procs, 0, min_u(v->nproc, GPU_MAX_PROCS) * sizeof(v->procs[0]));
		if (in_room(v->mig, s->mig_room, mig_bytes))
			memset(v->mig, 0, min_u(v->nmig, GPU_MAX_MIG) * sizeof(v->mig[0]));
	}
	snapshot_reset(s);
	memset(s->gpu, 0, s->cap * sizeof(s->gpu[0]));
	memset(s->link, 0, s->cap * sizeof(s->link[0]));
	own_tables(s);
}

void snapshot_place_tables(struct snapshot *s, unsigned i)
{
	if (i >= s->cap)
		return;
	/* at most view i's own part: a view before that was not placed by this
	 * fill (or points elsewhere) leaves i at its own part, never past it */
	size_t pat = (size_t)i * GPU_MAX_PROCS, mat = (size_t)i * GPU_MAX_MIG;
	if (i == 0) {
		pat = mat = 0;
	} else {
		const struct gpu_view *prev = &s->gpu[i - 1];
		if (in_room(prev->procs, s->proc_room, pat * sizeof(struct gpu_process))) {
			size_t at = (size_t)(prev->procs - s->proc_room) + min_u(prev->nproc, GPU_MAX_PROCS);
			if (at < pat)
				pat = at;
		}
		if (in_room(prev->mig, s->mig_room, mat * sizeof(struct gpu_mig))) {
			size_t at = (size_t)(prev->mig - s->mig_room) + min_u(prev->nmig, GPU_MAX_MIG);
			if (at < mat)
				mat = at;
		}
	}
	s->gpu[i].procs = s->proc_room + pat;
	s->gpu[i].mig = s->mig_room + mat;
}

void snapshot_copy_view(struct gpu_view *dst, const struct gpu_view *src)
{
	struct gpu_process *procs = dst->procs;
	struct gpu_mig *mig = dst->mig;
	memcpy(dst, src, offsetof(struct gpu_view, procs));
	dst->nproc = procs && src->procs ? min_u(src->nproc, GPU_MAX_PROCS) : 0;
	dst->nmig = mig && src->mig ? min_u(src->nmig, GPU_MAX_MIG) : 0;
	if (dst->nproc)
		memcpy(procs, src->procs, dst->nproc * sizeof(src->procs[0]));
	if (dst->nmig)
		memcpy(mig, src->mig, dst->nmig * sizeof(src->mig[0]));
}

int snapshot_copy(struct snapshot *dst, const struct snapshot *src)
{
	if (src->n > dst->cap)
		return -1;
	dst->taken_ns = src->taken_ns;
	dst->sys = src->sys;
	dst->n = src->n;
	for (unsigned i = 0; i < src->n; i++) {
		snapshot_place_tables(dst, i);
		snapshot_copy_view(&dst->gpu[i], &src->gpu[i]);
		memcpy(dst->link[i], src->link[i], sizeof(src->link[i]));
	}
	return 0;
}

void gpu_view_zero(struct gpu_view *v)
{
	struct gpu_process *procs = v->procs;
	struct gpu_mig *mig = v->mig;
	memset(v, 0, sizeof(*v));
	v->procs = procs;
	v->mig = mig;
}

struct gpu_view *gpu_view_new(void)
{
	struct one {
		struct gpu_view v;
		struct gpu_process procs[GPU_MAX_PROCS];
		struct gpu_mig mig[GPU_MAX_MIG];
	} *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->v.procs = o->procs;
	o->v.mig = o->mig;
	return &o->v; /* the first member: free() of it frees o */
}

void gpu_rate_base_set(struct gpu_rate_base *b, const struct gpu_sample *s)
{
	b->timestamp_ns = s->timestamp_ns;
	b->lost = s->lost;
#define RATE_BASE_COPY(member, ...) b->member = s->member;
	GPU_SAMPLE_FIELDS(RATE_BASE_COPY)
#undef RATE_BASE_COPY
	b->nvlink_n = min_u(s->nvlink_n, GPU_MAX_NVLINKS);
	for (unsigned l = 0; l < b->nvlink_n; l++) {
		b->nvlink[l].tx_bytes = s->nvlink[l].tx_bytes;
		b->nvlink[l].rx_bytes = s->nvlink[l].rx_bytes;
	}
}

u64v gpu_rate_base_field(const struct gpu_rate_base *b, size_t sample_offset)
{
#define RATE_BASE_FIELD(member, ...) \
	if (sample_offset == offsetof(struct gpu_sample, member)) \
		return b->member;
	GPU_SAMPLE_FIELDS(RATE_BASE_FIELD)
#undef RATE_BASE_FIELD
	return (u64v){ 0, VAL_UNKNOWN };
}

const struct gpu_mig *gpu_view_mig(const struct gpu_view *v, unsigned gi_id)
{
	for (unsigned k = 0; v->mig && k < v->nmig && k < GPU_MAX_MIG; k++)
		if (v->mig[k].gi_id == gi_id)
			return &v->mig[k];
	return NULL;
}
