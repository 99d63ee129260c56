/* SPDX-License-Identifier: Apache-2.0 */
/* telemetry.c - see telemetry.h. */
#include "telemetry.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "sampler/sampler.h"

#define BENCH_TEL_ENERGY_MIN_S 1.0

#define GPM_KEY(key, member, title) [BENCH_GPM_##key] = #member, /* the sample's key: one name per value (docs/json.md) */
const char *const bench_tel_gpm_keys[BENCH_TEL_NGPM] = { BENCH_TEL_GPM_TABLE(GPM_KEY) };
#undef GPM_KEY
#define GPM_OFF(key, member, title) [BENCH_GPM_##key] = offsetof(struct gpu_sample, member),
static const size_t gpm_off[BENCH_TEL_NGPM] = { BENCH_TEL_GPM_TABLE(GPM_OFF) };
#undef GPM_OFF

void bench_tel_acc_init(struct bench_tel_acc *a)
{
	memset(a, 0, sizeof(*a));
	a->power_max_w = a->clock_min = a->clock_max = a->mem_clock_min = a->temp_max = a->temp_mem_max = NAN;
}

static void keep_min(double *m, double v) { if (isnan(*m) || v < *m) *m = v; }
static void keep_max(double *m, double v) { if (isnan(*m) || v > *m) *m = v; }

void bench_tel_acc_add(struct bench_tel_acc *a, const struct gpu_sample *s)
{
	if (s->lost || s->timestamp_ns == 0 || (a->n && s->timestamp_ns == a->last_ns))
		return;
	if (a->n == 0) {
		a->first_ns = s->timestamp_ns;
		a->energy_ok = VAL_HAS(s->energy_mj);
		a->energy_first_mj = s->energy_mj.v;
	}
	a->n++;
	a->last_ns = s->timestamp_ns;
	if (a->energy_ok && VAL_HAS(s->energy_mj))
		a->energy_last_mj = s->energy_mj.v;
	else
		a->energy_ok = false;
	if (VAL_HAS(s->power_mw)) {
		double w = (double)s->power_mw.v / 1e3;
		a->power_sum_w += w;
		a->power_n++;
		keep_max(&a->power_max_w, w);
	}
	if (VAL_HAS(s->sm_clock_mhz)) {
		keep_min(&a->clock_min, (double)s->sm_clock_mhz.v);
		keep_max(&a->clock_max, (double)s->sm_clock_mhz.v);
	}
	if (VAL_HAS(s->mem_clock_mhz))
		keep_min(&a->mem_clock_min, (double)s->mem_clock_mhz.v);
	if (VAL_HAS(s->temp_c))
		keep_max(&a->temp_max, (double)s->temp_c.v);
	if (VAL_HAS(s->temp_mem_c))
		keep_max(&a->temp_mem_max, (double)s->temp_mem_c.v);
	if (VAL_HAS(s->clock_event_reasons))
		a->reasons |= s->clock_event_reasons.v & ~CLK_EVT_GPU_IDLE;
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++) {
		const u64v *x = (const u64v *)(const void *)((const char *)s + gpm_off[k]);
		if (VAL_HAS(*x)) {
			a->gpm_sum[k] += (double)x->v;
			a->gpm_n[k]++;
		}
	}
}

void bench_tel_summarise(const struct bench_tel_acc *acc, unsigned n, double test_s, struct bench_telemetry *out)
{
	struct bench_telemetry t = { 0 };
	t.window_s = t.sm_clock_mhz_min = t.sm_clock_mhz_max = t.mem_clock_mhz_min = NAN;
	t.power_w_avg = t.power_w_max = t.temp_c_max = t.temp_mem_c_max = t.energy_j = NAN;
	t.test_s = test_s > 0 ? test_s : NAN;
	double gpm_sum[BENCH_TEL_NGPM] = { 0 };
	unsigned gpm_gpus[BENCH_TEL_NGPM] = { 0 };
	bool all_power = n > 0, all_counter = n > 0, no_reading = n > 0;
	double power = 0, pmax = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct bench_tel_acc *a = &acc[i];
		if (a->n == 0) {
			all_power = all_counter = false;
			continue;
		}
		no_reading = false;
		t.samples += a->n;
		double win = (double)(a->last_ns - a->first_ns) / 1e9;
		keep_max(&t.window_s, win);
		if (!isnan(a->clock_min)) {
			keep_min(&t.sm_clock_mhz_min, a->clock_min);
			keep_max(&t.sm_clock_mhz_max, a->clock_max);
		}
		if (!isnan(a->mem_clock_min))
			keep_min(&t.mem_clock_mhz_min, a->mem_clock_min);
		if (!isnan(a->temp_max))
			keep_max(&t.temp_c_max, a->temp_max);
		if (!isnan(a->temp_mem_max))
			keep_max(&t.temp_mem_c_max, a->temp_mem_max);
		t.clock_event_reasons |= a->reasons;
		for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
			if (a->gpm_n[k]) {
				gpm_sum[k] += a->gpm_sum[k] / a->gpm_n[k];
				gpm_gpus[k]++;
			}
		/* Power from the energy counter only over a window of a second or
		 * more: the counter advances in coarse steps (on an H200 a 50 ms test
		 * saw 0 J or twice its share), so shorter tests average the sampled
		 * power readings instead. */
		bool e = a->energy_ok && a->n >= 2 && win >= BENCH_TEL_ENERGY_MIN_S &&
			 a->energy_last_mj > a->energy_first_mj;
		if (e) {
			power += (double)(a->energy_last_mj - a->energy_first_mj) / 1e3 / win;
		} else {
			all_counter = false;
			if (a->power_n)
				power += a->power_sum_w / a->power_n;
			else
				all_power = false;
		}
		if (!isnan(a->power_max_w))
			pmax += a->power_max_w;
	}
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
		t.gpm_pct[k] = gpm_gpus[k] ? gpm_sum[k] / gpm_gpus[k] : NAN;
	if (all_power) {
		t.power_w_avg = power;
		t.power_w_max = pmax > 0 ? pmax : NAN;
	}
	/* the test's energy: its average power over the whole call */
	if (all_power && t.test_s > 0) {
		t.energy_j = power * t.test_s;
		snprintf(t.energy_from, sizeof(t.energy_from), "%s", all_counter ? "counter" : "readings");
	} else if (n == 0) {
		snprintf(t.energy_from, sizeof(t.energy_from), "no telemetry (no GPU sampled)");
	} else if (no_reading && t.test_s > 0) {
		snprintf(t.energy_from, sizeof(t.energy_from), "no reading in the %.3g ms test", t.test_s * 1e3);
	} else if (!all_power) {
		snprintf(t.energy_from, sizeof(t.energy_from), "%s", no_reading ? "no reading during the test"
					     : "a GPU under test had no power reading");
	} else {
		snprintf(t.energy_from, sizeof(t.energy_from), "the test's duration is unknown");
	}
	*out = t;
}

double bench_gflops_per_watt(const struct bench_result *r)
{
	if (!(r->flops > 0) || !(r->time_ms.median > 0) || !(r->tel.power_w_avg > 0))
		return NAN;
	return r->flops / 1e9 / (r->time_ms.median * 1e-3) / r->tel.power_w_avg;
}

/* ---- the recorder thread ------------------------------------------------- */

struct bench_tel_rec {
	struct sampler *s;
	unsigned poll_ms;
	pthread_t thread;
	pthread_mutex_t mu;
	bool stop, active;
	uint64_t begin_ns;
	unsigned n;
	int gpus[GPU_MAX_GPUS];
	struct bench_tel_acc acc[GPU_MAX_GPUS];
};

static void poll_once(struct bench_tel_rec *t)
{
	struct gpu_view *v = gpu_view_new();
	if (!v)
		return;
	pthread_mutex_lock(&t->mu);
	for (unsigned i = 0; t->active && i < t->n; i++) {
		sampler_read_gpu(t->s, (unsigned)t->gpus[i], v);
		if (v->up)
			bench_tel_acc_add(&t->acc[i], &v->s);
	}
	pthread_mutex_unlock(&t->mu);
	free(v);
}

static void *rec_thread(void *arg)
{
	struct bench_tel_rec *t = arg;
	struct timespec ts = { .tv_sec = t->poll_ms / 1000, .tv_nsec = (long)(t->poll_ms % 1000) * 1000000L };
	for (;;) {
		pthread_mutex_lock(&t->mu);
		bool stop = t->stop;
		pthread_mutex_unlock(&t->mu);
		if (stop)
			break;
		poll_once(t);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

struct bench_tel_rec *bench_tel_rec_start(struct sampler *s, unsigned poll_ms)
{
	struct bench_tel_rec *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->s = s;
	t->poll_ms = poll_ms ? poll_ms : 20;
	pthread_mutex_init(&t->mu, NULL);
	if (pthread_create(&t->thread, NULL, rec_thread, t) != 0) {
		pthread_mutex_destroy(&t->mu);
		free(t);
		return NULL;
	}
	return t;
}

void bench_tel_rec_begin(struct bench_tel_rec *t, const int *gpus, unsigned n)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->n = n < GPU_MAX_GPUS ? n : GPU_MAX_GPUS;
	for (unsigned i = 0; i < t->n; i++) {
		t->gpus[i] = gpus[i];
		bench_tel_acc_init(&t->acc[i]);
	}
	t->active = true;
	t->begin_ns = clock_mono_ns();
	pthread_mutex_unlock(&t->mu);
}

void bench_tel_rec_end(struct bench_tel_rec *t, struct bench_result *r)
{
	if (!t)
		return;
	poll_once(t); /* whatever arrived since the last poll */
	pthread_mutex_lock(&t->mu);
	t->active = false;
	bench_tel_summarise(t->acc, t->n, (double)(clock_mono_ns() - t->begin_ns) / 1e9, &r->tel);
	pthread_mutex_unlock(&t->mu);
}

void bench_tel_rec_now(struct bench_tel_rec *t, int gpu, double *sm_mhz, double *power_w, double *temp_c)
{
	*sm_mhz = *power_w = *temp_c = NAN;
	struct gpu_view *v = t ? gpu_view_new() : NULL;
	if (!v)
		return;
	sampler_read_gpu(t->s, (unsigned)gpu, v);
	if (v->up) {
		if (VAL_HAS(v->s.sm_clock_mhz))
			*sm_mhz = (double)v->s.sm_clock_mhz.v;
		if (VAL_HAS(v->s.power_mw))
			*power_w = (double)v->s.power_mw.v / 1e3;
		if (VAL_HAS(v->s.temp_c))
			*temp_c = (double)v->s.temp_c.v;
	}
	free(v);
}

void bench_tel_rec_stop(struct bench_tel_rec *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
