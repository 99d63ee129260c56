/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_nccl.cu - NCCL collectives over a list of GPUs from one process and one
 * thread (ncclCommInitAll, ncclGroupStart/End around the per-device calls),
 * with libnccl.so.2 loaded by dlopen. Every rank's output is checked against
 * the closed form of its inputs, which are small integers so float sums are
 * exact. A collective that does not finish before the deadline is aborted and
 * the ranks still running are named.
 *
 * NVLink multicast (NVLS) is switched off unless the caller's environment says
 * otherwise (setenv without overwrite): on shared hosts it can take the GPUs
 * out of service.
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"
#include "gk_nccl.cuh"

#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdlib.h>

typedef ncclResult_t (*n_version_t)(int *);
typedef ncclResult_t (*n_initall_t)(ncclComm_t *, int, const int *);
typedef ncclResult_t (*n_comm_t)(ncclComm_t);
typedef const char *(*n_errstr_t)(ncclResult_t);
typedef ncclResult_t (*n_group_t)(void);
typedef ncclResult_t (*n_allreduce_t)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*n_allgather_t)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*n_redscat_t)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*n_bcast_t)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*n_send_t)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*n_recv_t)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);

static struct {
	pthread_once_t once;
	bool ok;
	char err[200];
	int version;
	n_version_t get_version; n_initall_t init_all; n_comm_t destroy, abort_; n_errstr_t errstr;
	n_group_t group_start, group_end;
	n_allreduce_t all_reduce; n_allgather_t all_gather; n_redscat_t reduce_scatter; n_bcast_t broadcast;
	n_send_t send; n_recv_t recv;
	/* one cached communicator set (init costs seconds): the last device list */
	pthread_mutex_t mu;
	int ndevs, devs[GK_MAX_DEVS];
	ncclComm_t comms[GK_MAX_DEVS];
} N = { PTHREAD_ONCE_INIT, false, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER, 0, {}, {} };

#define NSYM(h, dst, name) do { void *p_ = dlsym(h, name); if (!p_) { N.ok = false; \
	snprintf(N.err, sizeof N.err, "libnccl.so.2 lacks %s (too old?)", name); } memcpy(&(dst), &p_, sizeof p_); } while (0)

static void load_nccl(void)
{
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(N.err, sizeof N.err, "NCCL not available (%s)", dlerror());
		return;
	}
	N.ok = true;
	NSYM(h, N.get_version, "ncclGetVersion");
	NSYM(h, N.init_all, "ncclCommInitAll");
	NSYM(h, N.destroy, "ncclCommDestroy");
	NSYM(h, N.abort_, "ncclCommAbort");
	NSYM(h, N.errstr, "ncclGetErrorString");
	NSYM(h, N.group_start, "ncclGroupStart");
	NSYM(h, N.group_end, "ncclGroupEnd");
	NSYM(h, N.all_reduce, "ncclAllReduce");
	NSYM(h, N.all_gather, "ncclAllGather");
	NSYM(h, N.reduce_scatter, "ncclReduceScatter");
	NSYM(h, N.broadcast, "ncclBroadcast");
	NSYM(h, N.send, "ncclSend");
	NSYM(h, N.recv, "ncclRecv");
	if (N.ok && N.get_version(&N.version) != ncclSuccess) N.version = 0;
}

#define CKN(call) do { ncclResult_t n_ = (call); if (n_ != ncclSuccess) \
	return gk_fail(r, GK_ECUDA, "gk_nccl.cu:%d: %s: %s", __LINE__, #call, N.errstr(n_)); } while (0)

/* Input of rank q at index i: a small integer, so every sum is exact in float. */
__device__ __forceinline__ float nin(int q, size_t i) { return (float)((gk_hash32(i * 131 + q) & 7u) + 1u); }

__global__ void k_nccl_fill(float *p, size_t n, int rank, int op, size_t cnt)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (op == GK_BROADCAST) ? nin(0, i) : nin(rank, i);
	(void)cnt;
}

__global__ void k_nccl_check(const float *out, size_t n, int rank, int nranks, int op, size_t cnt, unsigned long long *bad)
{
	unsigned long long b = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float want = 0;
		switch (op) {
		case GK_ALL_REDUCE: for (int q = 0; q < nranks; q++) want += nin(q, i); break;
		case GK_ALL_GATHER: want = nin((int)(i / cnt), i % cnt); break;
		case GK_REDUCE_SCATTER: for (int q = 0; q < nranks; q++) want += nin(q, rank * cnt + i); break;
		case GK_BROADCAST: want = nin(0, i); break;
		case GK_ALL_TO_ALL: want = nin((int)(i / cnt), rank * cnt + i % cnt); break;
		}
		b += out[i] != want;
	}
	if (b) atomicAdd(bad, b);
}

static int comms_for(struct gk_result *r, const struct gk_nccl_args *a)
{
	if (N.ndevs == a->ndevs && memcmp(N.devs, a->devs, sizeof(int) * a->ndevs) == 0) return GK_OK;
	for (int i = 0; i < N.ndevs; i++) N.destroy(N.comms[i]);
	N.ndevs = 0;
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	CKN(N.init_all(N.comms, a->ndevs, a->devs));
	N.ndevs = a->ndevs;
	memcpy(N.devs, a->devs, sizeof(int) * a->ndevs);
	return GK_OK;
}

struct nccl_rank { float *send, *recv; cudaStream_t s; cudaEvent_t e0, e1; };

static int launch(struct gk_result *r, const struct gk_nccl_args *a, struct nccl_rank *rk, size_t n, size_t cnt)
{
	int R = a->ndevs;
	for (int i = 0; i < R; i++) {
		CK(cudaSetDevice(a->devs[i]));
		CK(cudaEventRecord(rk[i].e0, rk[i].s));
	}
	CKN(N.group_start());
	for (int i = 0; i < R; i++) {
		ncclComm_t c = N.comms[i];
		switch (a->op) {
		case GK_ALL_REDUCE: CKN(N.all_reduce(rk[i].send, rk[i].recv, n, ncclFloat, ncclSum, c, rk[i].s)); break;
		case GK_ALL_GATHER: CKN(N.all_gather(rk[i].send, rk[i].recv, cnt, ncclFloat, c, rk[i].s)); break;
		case GK_REDUCE_SCATTER: CKN(N.reduce_scatter(rk[i].send, rk[i].recv, cnt, ncclFloat, ncclSum, c, rk[i].s)); break;
		case GK_BROADCAST: CKN(N.broadcast(rk[i].send, rk[i].recv, n, ncclFloat, 0, c, rk[i].s)); break;
		case GK_ALL_TO_ALL:
			for (int q = 0; q < R; q++) {
				CKN(N.send(rk[i].send + q * cnt, cnt, ncclFloat, q, c, rk[i].s));
				CKN(N.recv(rk[i].recv + q * cnt, cnt, ncclFloat, q, c, rk[i].s));
			}
			break;
		}
	}
	CKN(N.group_end());
	for (int i = 0; i < R; i++) {
		CK(cudaSetDevice(a->devs[i]));
		CK(cudaEventRecord(rk[i].e1, rk[i].s));
	}
	return GK_OK;
}

/* Wait for every rank; on timeout abort the communicators and name the stuck GPUs. */
static int wait_all(struct gk_result *r, const struct gk_nccl_args *a, struct nccl_rank *rk, float *ms)
{
	*ms = 0;
	for (;;) {
		int pending = 0;
		char stuck[128] = "";
		for (int i = 0; i < a->ndevs; i++) {
			cudaError_t q = cudaEventQuery(rk[i].e1);
			if (q == cudaErrorNotReady) {
				pending++;
				size_t l = strlen(stuck);
				snprintf(stuck + l, sizeof stuck - l, "%s%d", l ? "," : "", a->devs[i]);
			} else if (q != cudaSuccess) {
				CK(q);
			}
		}
		if (!pending) break;
		if (gk_past(a->c.deadline_ns)) {
			for (int i = 0; i < N.ndevs; i++) N.abort_(N.comms[i]);
			N.ndevs = 0;
			return gk_fail(r, GK_ETIMEOUT, "nccl %s hung: GPU(s) %s did not finish before the deadline (communicators aborted)",
				       a->op == GK_ALL_REDUCE ? "all_reduce" : "collective", stuck);
		}
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < a->ndevs; i++) {
		float t;
		CK(cudaEventElapsedTime(&t, rk[i].e0, rk[i].e1));
		if (t > *ms) *ms = t;
	}
	return GK_OK;
}

static int nccl_inner(const struct gk_nccl_args *a, struct gk_result *r, struct gk_track *t)
{
	pthread_once(&N.once, load_nccl);
	if (!N.ok) return gk_fail(r, GK_EUNSUPPORTED, "%s", N.err);
	int R = a->ndevs;
	if (R < 1 || R > GK_MAX_DEVS) return gk_fail(r, GK_EARG, "nccl needs 1..%d GPUs (got %d)", GK_MAX_DEVS, R);
	if (a->op < GK_ALL_REDUCE || a->op > GK_ALL_TO_ALL) return gk_fail(r, GK_EARG, "unknown collective %d", a->op);
	for (int i = 0; i < R; i++) {
		CKR(gk_set_device(r, a->devs[i]));
		for (int j = 0; j < i; j++)
			if (a->devs[j] == a->devs[i]) return gk_fail(r, GK_EARG, "GPU %d listed twice", a->devs[i]);
	}
	size_t n = a->bytes / 4 / R * R; /* floats in the largest buffer, a multiple of the ranks */
	if (n < (size_t)R) return gk_fail(r, GK_EARG, "nccl size %zu bytes is under 4 bytes a rank", a->bytes);
	size_t cnt = n / R;
	pthread_mutex_lock(&N.mu);
	struct nccl_rank rk[GK_MAX_DEVS];
	int rc = comms_for(r, a);
	for (int i = 0; i < R && rc == GK_OK; i++) {
		rc = gk_set_device(r, a->devs[i]);
		if (rc == GK_OK) rc = gk_dmalloc(t, r, (void **)&rk[i].send, n * 4);
		if (rc == GK_OK) rc = gk_dmalloc(t, r, (void **)&rk[i].recv, n * 4);
		if (rc == GK_OK) rc = gk_stream(t, r, &rk[i].s);
		if (rc == GK_OK) rc = gk_event(t, r, &rk[i].e0);
		if (rc == GK_OK) rc = gk_event(t, r, &rk[i].e1);
		if (rc == GK_OK) {
			size_t sendn = a->op == GK_ALL_GATHER ? cnt : n;
			k_nccl_fill<<<gk_grid(sendn, 256, 8192), 256, 0, rk[i].s>>>(rk[i].send, sendn, i, a->op, cnt);
			cudaError_t e = cudaGetLastError();
			if (e == cudaSuccess) e = cudaMemsetAsync(rk[i].recv, 0xff, n * 4, rk[i].s);
			if (e != cudaSuccess) rc = gk_cuda_fail(r, __FILE__, __LINE__, "k_nccl_fill", e);
		}
	}
	int w = gk_warmups(&a->c, 3), ns = gk_samples(&a->c);
	for (int i = 0; i < w + ns && rc == GK_OK; i++) {
		float ms;
		rc = launch(r, a, rk, n, cnt);
		if (rc == GK_OK) rc = wait_all(r, a, rk, &ms);
		if (rc == GK_OK && i >= w) r->samples_ms[r->nsamples++] = ms;
	}
	pthread_mutex_unlock(&N.mu);
	CKR(rc);
	/* nccl-tests' "size": all_gather and reduce_scatter count the whole gathered buffer */
	r->bytes = (double)n * 4;
	gk_aux(r, "nccl_version", N.version, "code");
	gk_aux(r, "ranks", R, "count");
	uint64_t bad = 0;
	for (int i = 0; i < R; i++) {
		unsigned long long *d, h = 0;
		size_t outn = a->op == GK_REDUCE_SCATTER ? cnt : n;
		CK(cudaSetDevice(a->devs[i]));
		CKR(gk_dmalloc(t, r, (void **)&d, sizeof *d));
		CK(cudaMemsetAsync(d, 0, sizeof *d, rk[i].s));
		k_nccl_check<<<gk_grid(outn, 256, 8192), 256, 0, rk[i].s>>>(rk[i].recv, outn, i, R, a->op, cnt, d);
		CKL();
		CKR(gk_wait_stream(r, rk[i].s, a->c.deadline_ns));
		CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
		bad += h;
		r->verify.checked += outn;
	}
	r->verify.mismatches = bad;
	r->verify.verified = bad == 0;
	if (bad) return gk_fail(r, GK_EVERIFY, "nccl: %llu output elements differ from the expected result", (unsigned long long)bad);
	return GK_OK;
}

int gk_nccl(const struct gk_nccl_args *a, struct gk_result *r) { GK_ENTRY(r, nccl_inner(a, r, GK_T)); }

int gk_nccl_api_get(struct gk_result *r, struct gk_nccl_api *out)
{
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	pthread_once(&N.once, load_nccl);
	if (!N.ok) return gk_fail(r, GK_EUNSUPPORTED, "%s", N.err);
	out->init_all = N.init_all;
	out->destroy = N.destroy;
	out->errstr = N.errstr;
	out->group_start = N.group_start;
	out->group_end = N.group_end;
	out->all_reduce = N.all_reduce;
	out->version = N.version;
	return GK_OK;
}
