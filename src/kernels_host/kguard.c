/* SPDX-License-Identifier: Apache-2.0 */
/* kguard.c - the kernels module's entry points under a watchdog (kguard.h). */
#include "kguard.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"

/* The entries that take (const args *, struct gk_result *): X(member, args type). */
#define KGUARD_RESULT_ENTRIES(X) \
	X(copy, gk_copy_args) X(memory, gk_mem_args) X(fma, gk_fma_args) X(gemm, gk_gemm_args) \
	X(own_gemm, gk_own_gemm_args) X(p2p, gk_p2p_args) X(nccl, gk_nccl_args) X(memtest, gk_memtest_args) \
	X(stress, gk_stress_args)

enum call_op {
#define OP_NAME(name, type) OP_##name,
	KGUARD_RESULT_ENTRIES(OP_NAME)
#undef OP_NAME
	OP_device_count, OP_device_info, OP_load_open, OP_load_step
};

/* One call, owned by the caller until it gives up, then by the thread. */
struct call {
	enum call_op op;
	const struct gk_api *real;
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool done, given_up;
	int rc;
	union {
#define ARGS_MEMBER(name, type) struct type name;
		KGUARD_RESULT_ENTRIES(ARGS_MEMBER)
#undef ARGS_MEMBER
		struct gk_load_args load_open;
		struct { struct gk_load *l; double seconds; uint64_t deadline_ns; } load_step;
		int device;
	} a;
	struct gk_result r;
	struct gk_device_info info;
	struct gk_load *load;
	int count;
	char err[GK_ERR_LEN];
};

static const struct gk_api *real_api;
static double grace_s = KGUARD_DEFAULT_GRACE_S;
static struct gk_api guarded;
static atomic_uint hung_calls;

unsigned kguard_hung_calls(void)
{
	return atomic_load(&hung_calls);
}

static void call_free(struct call *c)
{
	pthread_mutex_destroy(&c->m);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static int call_dispatch(struct call *c)
{
	const struct gk_api *api = c->real;
	switch (c->op) {
#define DISPATCH(name, type) case OP_##name: return api->name(&c->a.name, &c->r);
	KGUARD_RESULT_ENTRIES(DISPATCH)
#undef DISPATCH
	case OP_device_count: return api->device_count(&c->count, c->err, sizeof(c->err));
	case OP_device_info: return api->device_info(c->a.device, &c->info);
	case OP_load_open: return api->load_open(&c->a.load_open, &c->load, c->err, sizeof(c->err));
	case OP_load_step:
		return api->load_step(c->a.load_step.l, c->a.load_step.seconds, c->a.load_step.deadline_ns, &c->r);
	}
	return GK_EARG;
}

static void *call_thread(void *arg)
{
	struct call *c = arg;
	int rc = call_dispatch(c);
	pthread_mutex_lock(&c->m);
	c->rc = rc;
	c->done = true;
	bool orphan = c->given_up;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->m);
	if (orphan) {
		call_free(c);
		atomic_fetch_sub(&hung_calls, 1);
	}
	return NULL;
}

static struct call *call_new(enum call_op op)
{
	struct call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->op = op;
	c->real = real_api;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&c->m, NULL);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	return c;
}

/* Runs c until it returns or the watchdog (deadline + grace) passes. Returns
 * true when it returned (c->rc is its code; the caller frees c), false when it
 * was given up on (the thread frees c; the caller must not touch it). */
static bool call_run(struct call *c, uint64_t deadline_ns)
{
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	bool started = pthread_create(&t, &at, call_thread, c) == 0;
	pthread_attr_destroy(&at);
	if (!started) { /* no thread to be had: call it here, unguarded */
		c->rc = call_dispatch(c);
		return true;
	}
	uint64_t watchdog = deadline_ns + (uint64_t)(grace_s * 1e9);
	struct timespec ts = { (time_t)(watchdog / 1000000000ull), (long)(watchdog % 1000000000ull) };
	pthread_mutex_lock(&c->m);
	while (!c->done)
		if (pthread_cond_timedwait(&c->cv, &c->m, &ts) == ETIMEDOUT)
			break;
	bool done = c->done;
	if (!done) {
		c->given_up = true;
		atomic_fetch_add(&hung_calls, 1);
	}
	pthread_mutex_unlock(&c->m);
	return done;
}

static void hung_message(char *err, size_t errlen)
{
	snprintf(err, errlen, "no answer %g s past its deadline", grace_s);
}

/* The entries with a result: the caller's result goes in, the call's comes back. */
static int run_with_result(struct call *c, uint64_t deadline_ns, struct gk_result *r)
{
	c->r = *r;
	if (!call_run(c, deadline_ns)) {
		memset(r, 0, sizeof(*r));
		r->rc = KGUARD_EHUNG;
		hung_message(r->err, sizeof(r->err));
		return KGUARD_EHUNG;
	}
	*r = c->r;
	int rc = c->rc;
	call_free(c);
	return rc;
}

#define GUARD_ENTRY(name, type) \
	static int guard_##name(const struct type *a, struct gk_result *r) \
	{ \
		struct call *c = a->c.deadline_ns ? call_new(OP_##name) : NULL; \
		if (!c) \
			return real_api->name(a, r); \
		c->a.name = *a; \
		return run_with_result(c, a->c.deadline_ns, r); \
	}
KGUARD_RESULT_ENTRIES(GUARD_ENTRY)
#undef GUARD_ENTRY

static int guard_load_step(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r)
{
	struct call *c = deadline_ns ? call_new(OP_load_step) : NULL;
	if (!c)
		return real_api->load_step(l, seconds, deadline_ns, r);
	c->a.load_step.l = l;
	c->a.load_step.seconds = seconds;
	c->a.load_step.deadline_ns = deadline_ns;
	return run_with_result(c, deadline_ns, r);
}

static int guard_load_open(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen)
{
	struct call *c = a->c.deadline_ns ? call_new(OP_load_open) : NULL;
	if (!c)
		return real_api->load_open(a, out, err, errlen);
	c->a.load_open = *a;
	if (!call_run(c, a->c.deadline_ns)) {
		*out = NULL;
		hung_message(err, errlen);
		return KGUARD_EHUNG;
	}
	*out = c->load;
	snprintf(err, errlen, "%s", c->err);
	int rc = c->rc;
	call_free(c);
	return rc;
}

static uint64_t info_deadline(void)
{
	return clock_mono_ns() + (uint64_t)(KGUARD_INFO_S * 1e9);
}

static int guard_device_count(int *count, char *err, size_t errlen)
{
	struct call *c = call_new(OP_device_count);
	if (!c)
		return real_api->device_count(count, err, errlen);
	if (!call_run(c, info_deadline())) {
		*count = 0;
		hung_message(err, errlen);
		return KGUARD_EHUNG;
	}
	*count = c->count;
	snprintf(err, errlen, "%s", c->err);
	int rc = c->rc;
	call_free(c);
	return rc;
}

static int guard_device_info(int device, struct gk_device_info *out)
{
	struct call *c = call_new(OP_device_info);
	if (!c)
		return real_api->device_info(device, out);
	c->a.device = device;
	c->info = *out;
	if (!call_run(c, info_deadline())) {
		memset(out, 0, sizeof(*out));
		hung_message(out->err, sizeof(out->err));
		return KGUARD_EHUNG;
	}
	*out = c->info;
	int rc = c->rc;
	call_free(c);
	return rc;
}

const struct gk_api *kguard_wrap(const struct gk_api *real, double grace)
{
	real_api = real;
	grace_s = grace > 0 ? grace : KGUARD_DEFAULT_GRACE_S;
	guarded = *real;
	/* an entry the module lacks stays NULL: the caller checks as it would on real */
#define SET_GUARD(name, type) guarded.name = real->name ? guard_##name : NULL;
	KGUARD_RESULT_ENTRIES(SET_GUARD)
	SET_GUARD(load_step, -) SET_GUARD(load_open, -) SET_GUARD(device_count, -) SET_GUARD(device_info, -)
#undef SET_GUARD
	return &guarded;
}
