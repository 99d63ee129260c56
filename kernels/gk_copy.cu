/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_copy.cu - host<->device copies (copy engine or SM kernel on mapped pinned
 * memory, pageable/pinned, sync/async, bidirectional, overlap with a kernel)
 * and GPU<->GPU copies (peer copy engine, SM kernel writing peer memory,
 * staged through pinned host memory, and peer pointer-chase latency).
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"

#include <stdlib.h>

/* ---- host pattern fill / check (ground truth: gk_word) ------------------- */
static void host_fill(uint32_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) p[i] = gk_word(seed, i);
}

static uint64_t host_check(const uint32_t *p, size_t n, uint64_t seed)
{
	uint64_t bad = 0;
	for (size_t i = 0; i < n; i++) bad += p[i] != gk_word(seed, i);
	return bad;
}

/* A compute kernel that does not touch memory: for the overlap test. */
__global__ void k_busy(float *out, int iters, float a)
{
	float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
	for (int i = 0; i < iters; i++) { x = fmaf(x, a, y); y = fmaf(y, a, x); }
	if (x == 12345.678f) out[0] = y; /* never true; keeps the loop */
}

struct copy_ctx {
	const struct gk_copy_args *a;
	int dev;
	void *host[2], *devb[2];
	cudaStream_t s2, s_busy;
	cudaEvent_t j1, j2, jb;
	bool do_copy, do_busy;
	int busy_iters;
	float *busy_out;
};

static int enqueue_one(struct copy_ctx *x, int dir, void *host, void *devb, cudaStream_t s, struct gk_result *r)
{
	const struct gk_copy_args *a = x->a;
	void *dst = dir == GK_H2D ? devb : host;
	const void *src = dir == GK_H2D ? host : devb;
	if (a->engine == GK_SM) return gk_launch_copy16(r, dst, src, a->bytes, x->dev, s);
	if (a->async || dir == GK_BIDIR)
		CK(cudaMemcpyAsync(dst, src, a->bytes, dir == GK_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
	else
		CK(cudaMemcpy(dst, src, a->bytes, dir == GK_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
	return GK_OK;
}

static int copy_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct copy_ctx *x = (struct copy_ctx *)vctx;
	const struct gk_copy_args *a = x->a;
	if (x->do_busy) { /* the kernel starts with the copy, on its own stream */
		CK(cudaEventRecord(x->jb, s));
		CK(cudaStreamWaitEvent(x->s_busy, x->jb, 0));
		k_busy<<<gk_sm_count(x->dev) * 4, 256, 0, x->s_busy>>>(x->busy_out, x->busy_iters, 0.999f);
		CKL();
	}
	if (x->do_copy) {
		if (a->dir == GK_BIDIR) {
			CK(cudaEventRecord(x->j1, s));
			CK(cudaStreamWaitEvent(x->s2, x->j1, 0));
			CKR(enqueue_one(x, GK_H2D, x->host[0], x->devb[0], s, r));
			CKR(enqueue_one(x, GK_D2H, x->host[1], x->devb[1], x->s2, r));
			CK(cudaEventRecord(x->j2, x->s2));
			CK(cudaStreamWaitEvent(s, x->j2, 0));
		} else {
			CKR(enqueue_one(x, a->dir, x->host[0], x->devb[0], s, r));
		}
	}
	if (x->do_busy) {
		CK(cudaEventRecord(x->jb, x->s_busy));
		CK(cudaStreamWaitEvent(s, x->jb, 0));
	}
	return GK_OK;
}

static int copy_inner(const struct gk_copy_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->dir < GK_H2D || a->dir > GK_BIDIR) return gk_fail(r, GK_EARG, "unknown copy direction %d", a->dir);
	if (a->bytes < 16 || a->bytes % 16) return gk_fail(r, GK_EARG, "copy size %zu is not a positive multiple of 16 bytes", a->bytes);
	if (a->engine == GK_SM && a->host_mem != GK_PINNED)
		return gk_fail(r, GK_EARG, "an SM-kernel copy needs pinned (mapped) host memory");
	bool pinned = a->host_mem == GK_PINNED;
	/* the legacy default stream for synchronous cudaMemcpy so the events bracket it */
	bool legacy = !a->async && a->dir != GK_BIDIR && a->engine == GK_CE;
	struct copy_ctx x = {};
	x.a = a; x.dev = a->c.device;
	cudaStream_t s = 0;
	cudaEvent_t e0, e1;
	if (!legacy) CKR(gk_stream(t, r, &s));
	CKR(gk_stream(t, r, &x.s2));
	CKR(gk_stream(t, r, &x.s_busy));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_event(t, r, &x.j1)); CKR(gk_event(t, r, &x.j2)); CKR(gk_event(t, r, &x.jb));
	CKR(gk_dmalloc(t, r, (void **)&x.busy_out, 16));
	int nbuf = a->dir == GK_BIDIR ? 2 : 1;
	uint64_t seed = gk_seed(&a->c);
	size_t words = a->bytes / 4;
	for (int i = 0; i < nbuf; i++) {
		int dir = a->dir == GK_BIDIR ? (i == 0 ? GK_H2D : GK_D2H) : a->dir;
		if (pinned) CKR(gk_pinned(t, r, &x.host[i], a->bytes, cudaHostAllocMapped | cudaHostAllocPortable));
		else CKR(gk_hmalloc(t, r, &x.host[i], a->bytes));
		CKR(gk_dmalloc(t, r, &x.devb[i], a->bytes));
		if (dir == GK_H2D) {
			host_fill((uint32_t *)x.host[i], words, seed + i);
			CK(cudaMemset(x.devb[i], 0, a->bytes));
		} else {
			memset(x.host[i], 0, a->bytes); /* also faults pageable pages in before timing */
			CKR(gk_fill_words(r, (uint32_t *)x.devb[i], words, seed + i, s));
		}
	}
	CK(cudaDeviceSynchronize());
	x.do_copy = true;
	CKR(gk_time_body(r, &a->c, 2, s, e0, e1, copy_body, &x));
	r->bytes = (double)a->bytes * nbuf;
	if (a->overlap) {
		/* copy alone is what was just timed; size the kernel to match it, then run both */
		double copy_ms = gk_median(r->samples_ms, r->nsamples);
		struct gk_common c1 = a->c;
		c1.iters = GK_MIN_SAMPLES;
		struct gk_result tmp;
		gk_result_init(&tmp);
		x.do_copy = false; x.do_busy = true; x.busy_iters = 1024;
		CKR(gk_time_body(&tmp, &c1, 1, s, e0, e1, copy_body, &x));
		double k_ms = gk_median(tmp.samples_ms, tmp.nsamples);
		if (k_ms > 0) x.busy_iters = (int)(1024 * copy_ms / k_ms) + 1;
		CKR(gk_time_body(&tmp, &c1, 1, s, e0, e1, copy_body, &x));
		k_ms = gk_median(tmp.samples_ms, tmp.nsamples);
		x.do_copy = true;
		CKR(gk_time_body(r, &a->c, 1, s, e0, e1, copy_body, &x));
		double both = gk_median(r->samples_ms, r->nsamples);
		double shorter = copy_ms < k_ms ? copy_ms : k_ms;
		double ov = shorter > 0 ? (copy_ms + k_ms - both) / shorter : 0;
		gk_aux(r, "copy_alone_ms", copy_ms, "ms");
		gk_aux(r, "kernel_alone_ms", k_ms, "ms");
		gk_aux(r, "both_ms", both, "ms");
		gk_aux(r, "overlap", ov < 0 ? 0 : ov > 1 ? 1 : ov, "ratio");
	}
	CK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	for (int i = 0; i < nbuf; i++) {
		int dir = a->dir == GK_BIDIR ? (i == 0 ? GK_H2D : GK_D2H) : a->dir;
		uint64_t b = 0;
		if (dir == GK_H2D) CKR(gk_check_words(r, (const uint32_t *)x.devb[i], words, seed + i, x.s2, &b, a->c.deadline_ns));
		else b = host_check((const uint32_t *)x.host[i], words, seed + i);
		bad += b;
	}
	r->verify.checked = words * nbuf;
	r->verify.mismatches = bad;
	r->verify.verified = bad == 0;
	if (bad) return gk_fail(r, GK_EVERIFY, "copy: %llu words differ from the source", (unsigned long long)bad);
	return GK_OK;
}

int gk_copy(const struct gk_copy_args *a, struct gk_result *r) { GK_ENTRY(r, copy_inner(a, r, GK_T)); }

/* ---- P2P ------------------------------------------------------------------------ */
#define STAGE_CHUNK (8u << 20)
#define STAGE_BUFS 4
#define P2P_SPLIT_MAX 4

struct p2p_dir {            /* one direction: src on dev_src, dst on dev_dst */
	int dev_src, dev_dst;
	void *src, *dst;
	cudaStream_t s_src, s_dst;
	void *stage[STAGE_BUFS];
	cudaEvent_t ev_d2h[STAGE_BUFS], ev_h2d[STAGE_BUFS];
	cudaStream_t s_split[P2P_SPLIT_MAX]; /* extra copy streams on the source GPU (CE mode) */
	cudaEvent_t ev_split[P2P_SPLIT_MAX];
};

struct p2p_ctx {
	const struct gk_p2p_args *a;
	int ndir;
	int nsplit;            /* CE: the copy cut into this many pieces on as many streams */
	struct p2p_dir d[2];
	cudaEvent_t start, done[2];
};

static int enqueue_dir(const struct gk_p2p_args *a, int nsplit, cudaEvent_t start, struct p2p_dir *d, struct gk_result *r)
{
	switch (a->mode) {
	case GK_P2P_CE: { /* pieces 1.. on their own streams, so several copy engines can share the link */
		size_t piece = (a->bytes / nsplit) & ~(size_t)15, off = 0;
		for (int q = 1; q < nsplit; q++) {
			CK(cudaStreamWaitEvent(d->s_split[q], start, 0));
			CK(cudaMemcpyPeerAsync((char *)d->dst + off, d->dev_dst, (const char *)d->src + off, d->dev_src, piece,
					       d->s_split[q]));
			CK(cudaEventRecord(d->ev_split[q], d->s_split[q]));
			off += piece;
		}
		CK(cudaMemcpyPeerAsync((char *)d->dst + off, d->dev_dst, (const char *)d->src + off, d->dev_src, a->bytes - off,
				       d->s_src));
		for (int q = 1; q < nsplit; q++) CK(cudaStreamWaitEvent(d->s_src, d->ev_split[q], 0));
		return GK_OK;
	}
	case GK_P2P_SM: /* the source GPU's SMs push into peer memory */
		CK(cudaSetDevice(d->dev_src));
		return gk_launch_copy16(r, d->dst, d->src, a->bytes, d->dev_src, d->s_src);
	case GK_P2P_HOST_STAGED: {
		size_t nchunks = (a->bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
		for (size_t i = 0; i < nchunks; i++) {
			int b = (int)(i % STAGE_BUFS);
			size_t off = i * STAGE_CHUNK, len = a->bytes - off < STAGE_CHUNK ? a->bytes - off : STAGE_CHUNK;
			if (i >= STAGE_BUFS) CK(cudaStreamWaitEvent(d->s_src, d->ev_h2d[b], 0));
			CK(cudaMemcpyAsync(d->stage[b], (char *)d->src + off, len, cudaMemcpyDeviceToHost, d->s_src));
			CK(cudaSetDevice(d->dev_src));
			CK(cudaEventRecord(d->ev_d2h[b], d->s_src));
			CK(cudaStreamWaitEvent(d->s_dst, d->ev_d2h[b], 0));
			CK(cudaMemcpyAsync((char *)d->dst + off, d->stage[b], len, cudaMemcpyHostToDevice, d->s_dst));
			CK(cudaSetDevice(d->dev_dst));
			CK(cudaEventRecord(d->ev_h2d[b], d->s_dst));
		}
		/* the direction ends on s_src */
		CK(cudaSetDevice(d->dev_dst));
		CK(cudaEventRecord(d->ev_h2d[0], d->s_dst));
		CK(cudaStreamWaitEvent(d->s_src, d->ev_h2d[0], 0));
		return GK_OK;
	}
	}
	return gk_fail(r, GK_EARG, "unknown p2p mode %d", a->mode);
}

static int p2p_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct p2p_ctx *x = (struct p2p_ctx *)vctx;
	int dev0 = x->d[0].dev_src;
	CK(cudaSetDevice(dev0));
	CK(cudaEventRecord(x->start, s));
	for (int i = 0; i < x->ndir; i++) {
		CK(cudaStreamWaitEvent(x->d[i].s_src, x->start, 0));
		CKR(enqueue_dir(x->a, x->nsplit, x->start, &x->d[i], r));
		CK(cudaSetDevice(x->d[i].dev_src));
		CK(cudaEventRecord(x->done[i], x->d[i].s_src));
		CK(cudaSetDevice(dev0));
		CK(cudaStreamWaitEvent(s, x->done[i], 0));
	}
	return GK_OK;
}

static int enable_peer(struct gk_result *r, int dev, int peer, bool *ok)
{
	int can = 0;
	CK(cudaDeviceCanAccessPeer(&can, dev, peer));
	*ok = can != 0;
	if (!can) return GK_OK;
	CK(cudaSetDevice(dev));
	cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
	if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
	else CK(e);
	return GK_OK;
}

static int p2p_inner(const struct gk_p2p_args *a, struct gk_result *r, struct gk_track *t)
{
	int dev = a->c.device, peer = a->peer;
	CKR(gk_set_device(r, dev));
	CKR(gk_set_device(r, peer));
	if (dev == peer) return gk_fail(r, GK_EARG, "p2p needs two different GPUs (got %d twice)", dev);
	if (a->mode < GK_P2P_CE || a->mode > GK_P2P_LATENCY) return gk_fail(r, GK_EARG, "unknown p2p mode %d", a->mode);
	bool ok1, ok2;
	CKR(enable_peer(r, dev, peer, &ok1));
	CKR(enable_peer(r, peer, dev, &ok2));
	gk_aux(r, "peer_access", ok1 && ok2, "bool");
	if (!(ok1 && ok2) && (a->mode == GK_P2P_SM || a->mode == GK_P2P_LATENCY))
		return gk_fail(r, GK_EUNSUPPORTED, "GPUs %d and %d cannot access each other's memory (no P2P)", dev, peer);
	if (a->mode == GK_P2P_LATENCY) {
		uint64_t *chain;
		double ns;
		size_t bytes = a->bytes ? a->bytes : (64u << 20);
		CK(cudaSetDevice(peer));
		CKR(gk_dmalloc(t, r, (void **)&chain, bytes));
		return gk_chase_latency(r, t, &a->c, dev, chain, bytes, 128, false, &ns);
	}
	if (a->bytes < 16 || a->bytes % 16) return gk_fail(r, GK_EARG, "p2p size %zu is not a positive multiple of 16 bytes", a->bytes);
	struct p2p_ctx x = {};
	x.a = a;
	x.ndir = a->bidirectional ? 2 : 1;
	uint64_t seed = gk_seed(&a->c);
	size_t words = a->bytes / 4;
	for (int i = 0; i < x.ndir; i++) {
		struct p2p_dir *d = &x.d[i];
		d->dev_src = i == 0 ? dev : peer;
		d->dev_dst = i == 0 ? peer : dev;
		CK(cudaSetDevice(d->dev_dst));
		CKR(gk_dmalloc(t, r, &d->dst, a->bytes));
		CK(cudaMemset(d->dst, 0, a->bytes));
		CKR(gk_stream(t, r, &d->s_dst));
		for (int b = 0; b < STAGE_BUFS; b++) CKR(gk_event(t, r, &d->ev_h2d[b]));
		CK(cudaSetDevice(d->dev_src));
		CKR(gk_dmalloc(t, r, &d->src, a->bytes));
		CKR(gk_stream(t, r, &d->s_src));
		CKR(gk_event(t, r, &x.done[i]));
		for (int b = 0; b < STAGE_BUFS; b++) CKR(gk_event(t, r, &d->ev_d2h[b]));
		for (int q = 1; q < P2P_SPLIT_MAX && a->mode == GK_P2P_CE; q++) {
			CKR(gk_stream(t, r, &d->s_split[q]));
			CKR(gk_event(t, r, &d->ev_split[q]));
		}
		CKR(gk_fill_words(r, (uint32_t *)d->src, words, seed + i, d->s_src));
		if (a->mode == GK_P2P_HOST_STAGED)
			for (int b = 0; b < STAGE_BUFS; b++)
				CKR(gk_pinned(t, r, &d->stage[b], STAGE_CHUNK, cudaHostAllocPortable));
	}
	CK(cudaSetDevice(peer));
	CK(cudaDeviceSynchronize());
	CK(cudaSetDevice(dev));
	CK(cudaDeviceSynchronize());
	cudaStream_t s; cudaEvent_t e0, e1;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1)); CKR(gk_event(t, r, &x.start));
	x.nsplit = 1;
	if (a->mode == GK_P2P_CE && a->bytes >= (64u << 20)) {
		/* large copies: keep the piece count (1, 2 or 4) that moves the bytes fastest */
		float best = 1e30f;
		int bestk = 1;
		for (int k = 1; k <= P2P_SPLIT_MAX; k *= 2) {
			x.nsplit = k;
			CKR(p2p_body(&x, s, r));
			CK(cudaEventRecord(e0, s));
			for (int j = 0; j < 3; j++) CKR(p2p_body(&x, s, r));
			CK(cudaEventRecord(e1, s));
			CKR(gk_wait_event(r, e1, a->c.deadline_ns));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (ms < best) { best = ms; bestk = k; }
		}
		x.nsplit = bestk;
	}
	CKR(gk_time_body(r, &a->c, 2, s, e0, e1, p2p_body, &x));
	r->bytes = (double)a->bytes * x.ndir;
	if (a->mode == GK_P2P_CE) gk_aux(r, "streams", x.nsplit, "count");
	uint64_t bad = 0;
	for (int i = 0; i < x.ndir; i++) {
		uint64_t b = 0;
		CK(cudaSetDevice(x.d[i].dev_dst));
		CKR(gk_check_words(r, (const uint32_t *)x.d[i].dst, words, seed + i, x.d[i].s_dst, &b, a->c.deadline_ns));
		bad += b;
	}
	CK(cudaSetDevice(dev));
	r->verify.checked = words * x.ndir;
	r->verify.mismatches = bad;
	r->verify.verified = bad == 0;
	if (bad) return gk_fail(r, GK_EVERIFY, "p2p: %llu words differ from the source", (unsigned long long)bad);
	return GK_OK;
}

int gk_p2p(const struct gk_p2p_args *a, struct gk_result *r) { GK_ENTRY(r, p2p_inner(a, r, GK_T)); }
