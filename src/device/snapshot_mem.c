/* snapshot_mem.c - a snapshot's memory, sized by its GPU count (snapshot.h). */
#include "snapshot.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_link link_row[GPU_MAX_GPUS];

struct snapshot *snapshot_new(unsigned cap)
{
	if (cap == 0)
		cap = 1;
	if (cap > GPU_MAX_GPUS)
		cap = GPU_MAX_GPUS;
	/* header, then the views, then the rows: each part aligned as its type */
	size_t views_at = (sizeof(struct snapshot) + _Alignof(struct gpu_view) - 1) / _Alignof(struct gpu_view) *
			  _Alignof(struct gpu_view);
	size_t rows_at = views_at + cap * sizeof(struct gpu_view);
	rows_at = (rows_at + _Alignof(link_row) - 1) / _Alignof(link_row) * _Alignof(link_row);
	char *block = calloc(1, rows_at + cap * sizeof(link_row));
	if (!block)
		return NULL;
	struct snapshot *s = (struct snapshot *)block;
	s->cap = cap;
	s->gpu = (struct gpu_view *)(block + views_at);
	s->link = (link_row *)(block + rows_at);
	return s;
}

void snapshot_free(struct snapshot *s)
{
	free(s);
}

void snapshot_attach(struct snapshot *s, struct gpu_view *views, struct gpu_link (*rows)[GPU_MAX_GPUS], unsigned cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->gpu = views;
	s->link = rows;
}

void snapshot_clear(struct snapshot *s)
{
	snapshot_attach(s, s->gpu, s->link, s->cap);
	memset(s->gpu, 0, s->cap * sizeof(s->gpu[0]));
	memset(s->link, 0, s->cap * sizeof(s->link[0]));
}

void snapshot_copy_view(struct gpu_view *dst, const struct gpu_view *src)
{
	memcpy(dst, src, offsetof(struct gpu_view, procs));
	unsigned np = src->nproc < GPU_MAX_PROCS ? src->nproc : GPU_MAX_PROCS;
	unsigned nm = src->nmig < GPU_MAX_MIG ? src->nmig : GPU_MAX_MIG;
	memcpy(dst->procs, src->procs, np * sizeof(src->procs[0]));
	memcpy(dst->mig, src->mig, nm * sizeof(src->mig[0]));
}

int snapshot_copy(struct snapshot *dst, const struct snapshot *src)
{
	if (src->n > dst->cap)
		return -1;
	dst->taken_ns = src->taken_ns;
	dst->sys = src->sys;
	dst->n = src->n;
	for (unsigned i = 0; i < src->n; i++) {
		snapshot_copy_view(&dst->gpu[i], &src->gpu[i]);
		memcpy(dst->link[i], src->link[i], sizeof(src->link[i]));
	}
	return 0;
}
