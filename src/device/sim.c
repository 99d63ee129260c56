/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.c - the simulated-server backend (gpu_backend_sim): option parsing,
 * the fault table and the run-time fault file, per-call latency, hung and
 * lost GPUs, the XID event stream, and thread safety. What the GPUs report
 * is computed in sim_model.c; the server file is read in sim_parse.c.
 *
 * open(arg): "NAME|PATH[,key=value...]"; see docs/simulator.md. Every call
 * for a GPU goes: enter (re-read the fault file if it changed, block while
 * the GPU hangs, fail if it is lost), sleep the latency without the lock,
 * then compute under the lock (microseconds), then leave. close() wakes hung
 * callers and waits for every call in flight to leave before freeing.
 */
#include "sim_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/data_path.h"
#include "core/clock.h"

#define SIM_FILE_MAX (4u << 20)
#define HANG_POLL_MS 10
/* the run-time fault file is looked at this often by a waiting poll_events
 * (every call for a GPU looks at it too) */
#define FAULT_FILE_CHECK_NS 1000000000ull
#define DEFAULT_HANG_MS 3600000ull

/* ---- small helpers ---- */

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Waits on the condition for at most ms milliseconds (CLOCK_REALTIME deadline,
 * as pthread_cond_timedwait wants; a jump of the wall clock only shortens or
 * lengthens one short wait). */
static void cond_wait_ms(struct sim_state *st, unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&st->cond, &st->lock, &ts);
}

static struct sim_state *state_of(struct gpu_backend *be)
{
	return be && be->ops == &gpu_backend_sim ? be->priv : NULL;
}

static uint64_t to_ns(double s)
{
	return s <= 0 ? 0 : s >= 1e9 ? UINT64_MAX / 2 : (uint64_t)(s * 1e9);
}

/* Adds a fault starting at ref + at_s. Lock held. Returns its id or GPU_ENOMEM. */
static int add_fault(struct sim_state *st, const struct sim_fault *f, enum sim_fault_origin origin, uint64_t ref_ns)
{
	if (st->nfaults == st->capfaults) {
		unsigned cap = st->capfaults ? st->capfaults * 2 : 16;
		struct sim_fault_rec *nf = realloc(st->faults, cap * sizeof(*nf));
		if (!nf)
			return GPU_ENOMEM;
		st->faults = nf;
		st->capfaults = cap;
	}
	struct sim_fault_rec *r = &st->faults[st->nfaults++];
	memset(r, 0, sizeof(*r));
	r->f = *f;
	r->f.name[sizeof(r->f.name) - 1] = r->f.user[sizeof(r->f.user) - 1] = '\0';
	r->id = ++st->next_id;
	r->origin = origin;
	r->start_ns = ref_ns + to_ns(f->at_s);
	r->end_ns = f->duration_s > 0 ? r->start_ns + to_ns(f->duration_s) : UINT64_MAX;
	pthread_cond_broadcast(&st->cond);
	pthread_cond_broadcast(&st->events_cond);
	return r->id;
}

/* Ends one fault now: its counts stay (they happened); one that has not
 * started yet never will (no counts, no event). Lock held. */
static void end_fault(struct sim_fault_rec *r, uint64_t now_ns)
{
	if (r->end_ns <= now_ns)
		return;
	if (r->start_ns > now_ns) {
		r->f.kind = SIM_FAULT_NONE;
		r->delivered = true;
		r->start_ns = now_ns;
	}
	r->end_ns = now_ns;
}

static void end_faults(struct sim_state *st, enum sim_fault_origin origin, uint64_t now_ns)
{
	for (unsigned i = 0; i < st->nfaults; i++)
		if (st->faults[i].origin == origin)
			end_fault(&st->faults[i], now_ns);
}

/* ---- the run-time fault file ---- */

/* Re-reads the fault file when its identity (inode, size, mtime) changed.
 * A file that cannot be read or parsed keeps the previous faults and leaves
 * a message for sim_fault_file_error(); a file that disappears ends them.
 * Lock held. */
static void reload_fault_file(struct gpu_backend *be, struct sim_state *st)
{
	if (!st->fault_path[0])
		return;
	struct stat sb;
	uint64_t now = gpu_backend_now_ns(be);
	if (stat(st->fault_path, &sb) != 0) {
		if (st->fault_seen)
			end_faults(st, SIM_FROM_FILE, now);
		st->fault_seen = false;
		st->fault_err[0] = '\0';
		return;
	}
	if (st->fault_seen && sb.st_dev == st->fault_dev && sb.st_ino == st->fault_ino && sb.st_size == st->fault_size &&
	    sb.st_mtim.tv_sec == st->fault_mtime.tv_sec && sb.st_mtim.tv_nsec == st->fault_mtime.tv_nsec)
		return;
	st->fault_seen = true;
	st->fault_dev = sb.st_dev;
	st->fault_ino = sb.st_ino;
	st->fault_size = sb.st_size;
	st->fault_mtime = sb.st_mtim;

	char msg[256] = "";
	size_t len = 0;
	char *buf = read_whole_file(st->fault_path, 1u << 20, &len, msg, sizeof(msg));
	if (!buf) {
		snprintf(st->fault_err, sizeof(st->fault_err), "%s", msg);
		return;
	}
	struct gpu_err err = { "" };
	int rc = sim_fault_file_apply(st, buf, len, now, &err);
	free(buf);
	snprintf(st->fault_err, sizeof(st->fault_err), "%s", rc ? err.msg : "");
}

int sim_fault_file_apply(struct sim_state *st, const char *buf, size_t len, uint64_t now_ns, struct gpu_err *err)
{
	struct sim_fault list[SIM_MAX_FAULTS];
	int n = len == 0 ? 0 : sim_faults_parse(buf, len, st->fault_path, list, SIM_MAX_FAULTS, err);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct gpu_err why = { "" };
		if (sim_fault_check(st, &list[i], &why) != 0) {
			gpu_err_set(err, "fault file '%.100s': faults[%d]: %.140s", st->fault_path, i, why.msg);
			return GPU_EDATA;
		}
	}
	end_faults(st, SIM_FROM_FILE, now_ns);
	for (int i = 0; i < n; i++)
		add_fault(st, &list[i], SIM_FROM_FILE, now_ns);
	return 0;
}

/* ---- entering and leaving a call ---- */

static bool hanging(struct gpu_backend *be, struct sim_state *st, unsigned gpu)
{
	return st->hang_gpu == (int)gpu || sim_find_active(st, gpu, SIM_FAULT_HANG, gpu_backend_now_ns(be));
}

/* Starts a call for one GPU (UINT32_MAX: a call for no GPU in particular).
 * On success the lock is NOT held; the call ends with finish() (lock held). */
static int enter(struct gpu_backend *be, struct sim_state *st, unsigned gpu, struct gpu_err *err)
{
	pthread_mutex_lock(&st->lock);
	if (st->closing) {
		pthread_mutex_unlock(&st->lock);
		gpu_err_set(err, "the simulated server is closing");
		return GPU_EIO;
	}
	if (gpu != UINT32_MAX && gpu >= st->ngpu) {
		pthread_mutex_unlock(&st->lock);
		gpu_err_set(err, "GPU %u does not exist (the simulated server has %u)", gpu, st->ngpu);
		return GPU_ENODEV;
	}
	st->inflight++;
	reload_fault_file(be, st);
	int rc = 0;
	if (gpu != UINT32_MAX) {
		uint64_t start = clock_mono_ns();
		while (!st->closing && hanging(be, st, gpu)) {
			if (clock_mono_ns() - start >= st->hang_ms * 1000000ull) {
				gpu_err_set(err, "GPU %u: the call did not return within %llu ms (simulated hang)", gpu,
					    (unsigned long long)st->hang_ms);
				rc = GPU_ETIMEOUT;
				break;
			}
			cond_wait_ms(st, HANG_POLL_MS);
			reload_fault_file(be, st);
		}
		if (!rc && st->closing) {
			gpu_err_set(err, "GPU %u: the simulated server closed during the call", gpu);
			rc = GPU_EIO;
		}
		if (!rc && sim_find_active(st, gpu, SIM_FAULT_GPU_LOST, gpu_backend_now_ns(be))) {
			gpu_err_set(err, "GPU %u has fallen off the bus (simulated)", gpu);
			rc = GPU_ENODEV;
		}
	}
	if (rc) {
		st->inflight--;
		pthread_cond_broadcast(&st->cond);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* enter(), then the latency (calls x latency_us, slept without the lock),
 * then the lock is taken for the computation; finish() ends the call. */
static int begin(struct gpu_backend *be, struct sim_state *st, unsigned gpu, unsigned calls, struct gpu_err *err)
{
	int rc = enter(be, st, gpu, err);
	if (rc)
		return rc;
	sleep_us(st->latency_us * calls);
	pthread_mutex_lock(&st->lock);
	return 0;
}

static void finish(struct sim_state *st)
{
	st->inflight--;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

/* ---- ops ---- */

static int sim_system_info(struct gpu_backend *be, struct gpu_system *out, struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	int rc = begin(be, st, UINT32_MAX, 1, err);
	if (rc)
		return rc;
	sim_model_system(st, out);
	finish(st);
	return 0;
}

static int sim_static_info(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	int rc = begin(be, st, gpu, 1, err);
	if (rc)
		return rc;
	sim_model_static(st, gpu, gpu_backend_now_ns(be), out);
	finish(st);
	return 0;
}

static int sim_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out,
		      struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	uint64_t t_start = clock_mono_ns();
	memset(out, 0, sizeof(*out));
	out->timestamp_ns = gpu_backend_now_ns(be);
	/* one NVML-like call per metric group asked for */
	unsigned calls = (unsigned)__builtin_popcount(groups & GPU_GRP_ALL);
	int rc = begin(be, st, gpu, calls ? calls : 1, err);
	if (rc) {
		out->lost = rc == GPU_ENODEV && gpu < st->ngpu;
		out->duration_ns = clock_mono_ns() - t_start;
		return rc;
	}
	uint64_t now = gpu_backend_now_ns(be);
	sim_model_sample(st, gpu, groups, now, out);
	out->timestamp_ns = now;
	finish(st);
	out->duration_ns = clock_mono_ns() - t_start;
	return 0;
}

static int sim_processes(struct gpu_backend *be, unsigned gpu, struct gpu_process *out, unsigned max, unsigned *n,
			 struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	*n = 0;
	int rc = begin(be, st, gpu, 1, err);
	if (rc)
		return rc;
	*n = sim_model_processes(st, gpu, gpu_backend_now_ns(be), out, max);
	finish(st);
	return 0;
}

static int sim_link(struct gpu_backend *be, unsigned a, unsigned b, struct gpu_link *out, struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	int rc = begin(be, st, a, 1, err);
	if (rc)
		return rc;
	if (b >= st->ngpu) {
		gpu_err_set(err, "GPU %u does not exist (the simulated server has %u)", b, st->ngpu);
		rc = GPU_ENODEV;
	} else if (sim_find_active(st, b, SIM_FAULT_GPU_LOST, gpu_backend_now_ns(be))) {
		gpu_err_set(err, "GPU %u has fallen off the bus (simulated)", b);
		rc = GPU_ENODEV;
	} else {
		sim_model_link(st, a, b, gpu_backend_now_ns(be), out);
	}
	finish(st);
	return rc;
}

static int sim_mig_instances(struct gpu_backend *be, unsigned gpu, struct gpu_mig *out, unsigned max, unsigned *n,
			     struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	*n = 0;
	int rc = begin(be, st, gpu, 1, err);
	if (rc)
		return rc;
	/* as the NVML backend: a GPU without MIG (or with MIG off) has no instances */
	*n = sim_model_mig(st, gpu, gpu_backend_now_ns(be), out, max);
	finish(st);
	return 0;
}

/* Takes the events that are due and not yet delivered. Lock held. */
static unsigned take_events(struct sim_state *st, uint64_t now, struct gpu_event *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < st->nfaults && n < max; i++) {
		struct sim_fault_rec *r = &st->faults[i];
		if (r->delivered || now < r->start_ns)
			continue;
		if (r->f.kind != SIM_FAULT_XID && r->f.kind != SIM_FAULT_GPU_LOST)
			continue;
		struct gpu_event *e = &out[n++];
		memset(e, 0, sizeof(*e));
		e->kind = EVT_XID;
		e->gpu = r->f.gpu;
		e->xid = r->f.kind == SIM_FAULT_XID ? r->f.xid : 79;
		e->timestamp_ns = r->start_ns;
		snprintf(e->detail, sizeof(e->detail), "%s",
			 r->f.kind == SIM_FAULT_GPU_LOST ? "GPU has fallen off the bus (simulated)" : "simulated XID");
		r->delivered = true;
		st->delivered++;
	}
	return n;
}

/* How long (ns of the backend clock) until the next undelivered event is due;
 * UINT64_MAX if none is scheduled. Lock held. */
static uint64_t next_event_in(const struct sim_state *st, uint64_t now)
{
	uint64_t in = UINT64_MAX;
	for (unsigned i = 0; i < st->nfaults; i++) {
		const struct sim_fault_rec *r = &st->faults[i];
		if (r->delivered || (r->f.kind != SIM_FAULT_XID && r->f.kind != SIM_FAULT_GPU_LOST))
			continue;
		uint64_t d = r->start_ns > now ? r->start_ns - now : 0;
		if (d < in)
			in = d;
	}
	return in;
}

/* Sleeps on events_cond until mono_ns (CLOCK_MONOTONIC) at the latest. Lock held. */
static void events_wait_until(struct sim_state *st, uint64_t mono_ns)
{
	struct timespec ts = { (time_t)(mono_ns / 1000000000ull), (long)(mono_ns % 1000000000ull) };
	st->event_waits++;
	pthread_cond_timedwait(&st->events_cond, &st->lock, &ts);
}

/* Blocks until an event is due, the timeout, or close. With the real clock it
 * sleeps until the next scheduled event (a new fault wakes it), or at most
 * FAULT_FILE_CHECK_NS when there is a fault file; a caller's clock
 * (be->now_ns, tests) may move without a signal, so that one is polled. */
static int sim_poll_events(struct gpu_backend *be, unsigned timeout_ms, struct gpu_event *out, unsigned max,
			   unsigned *n, struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	*n = 0;
	int rc = enter(be, st, UINT32_MAX, err);
	if (rc)
		return rc;
	uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	pthread_mutex_lock(&st->lock);
	for (;;) {
		reload_fault_file(be, st);
		uint64_t bnow = gpu_backend_now_ns(be);
		*n = take_events(st, bnow, out, max);
		uint64_t now = clock_mono_ns();
		if (*n || st->closing || now >= deadline)
			break;
		uint64_t until = deadline;
		uint64_t next = next_event_in(st, bnow);
		if (next != UINT64_MAX && next < until - now)
			until = now + next;
		if (st->fault_path[0] && until - now > FAULT_FILE_CHECK_NS)
			until = now + FAULT_FILE_CHECK_NS;
		if (be->now_ns && until - now > HANG_POLL_MS * 1000000ull)
			until = now + HANG_POLL_MS * 1000000ull;
		events_wait_until(st, until);
	}
	finish(st);
	return 0;
}

/* ---- open and close ---- */

static void state_free(struct sim_state *st)
{
	if (!st)
		return;
	catalog_free(&st->cat);
	free(st->srv);
	free(st->faults);
	pthread_cond_destroy(&st->cond);
	pthread_cond_destroy(&st->events_cond);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static void sim_close(struct gpu_backend *be)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	st->closing = true;
	pthread_cond_broadcast(&st->cond);
	pthread_cond_broadcast(&st->events_cond);
	while (st->inflight > 0)
		pthread_cond_wait(&st->cond, &st->lock);
	pthread_mutex_unlock(&st->lock);
	state_free(st);
	be->priv = NULL;
}

struct sim_options {
	char target[1024];
	char data_dir[1024];
	char faults[1024];
	bool have_latency, have_seed, have_time;
	uint64_t latency_us, seed, hang_ms, time_s;
	int hang_gpu;
	unsigned gpus; /* 0: as in the file */
};

static int opt_uint(const char *key, const char *val, uint64_t min, uint64_t max, uint64_t *out, struct gpu_err *err)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(val, &end, 10);
	if (!*val || *end || errno || v < min || v > max || val[0] == '-') {
		gpu_err_set(err, "sim option '%s': '%s' is not a whole number from %llu to %llu", key, val,
			    (unsigned long long)min, (unsigned long long)max);
		return GPU_EINVAL;
	}
	*out = v;
	return 0;
}

/* "NAME|PATH[,key=value...]"; data_dir= takes the rest of the string, so a
 * directory name may hold commas (main appends it last). */
static int parse_options(const char *arg, struct sim_options *o, struct gpu_err *err)
{
	memset(o, 0, sizeof(*o));
	o->hang_gpu = -1;
	o->hang_ms = DEFAULT_HANG_MS;
	if (!arg || !*arg || *arg == ',') {
		gpu_err_set(err, "no simulated server given (--sim NAME|FILE[,option=value...])");
		return GPU_EINVAL;
	}
	const char *comma = strchr(arg, ',');
	size_t tlen = comma ? (size_t)(comma - arg) : strlen(arg);
	if (tlen >= sizeof(o->target)) {
		gpu_err_set(err, "simulated server name too long");
		return GPU_EINVAL;
	}
	memcpy(o->target, arg, tlen);
	for (const char *p = comma; p && *p;) {
		p++;
		const char *eq = strchr(p, '=');
		const char *next = strchr(p, ',');
		if (!eq || (next && eq > next)) {
			gpu_err_set(err, "sim option '%.*s': expected key=value", (int)(next ? next - p : (long)strlen(p)), p);
			return GPU_EINVAL;
		}
		char key[32];
		size_t klen = (size_t)(eq - p);
		snprintf(key, sizeof(key), "%.*s", (int)(klen < sizeof(key) ? klen : sizeof(key) - 1), p);
		const char *v = eq + 1;
		if (!strcmp(key, "data_dir")) {
			snprintf(o->data_dir, sizeof(o->data_dir), "%s", v);
			break;
		}
		char val[1024];
		size_t vlen = next ? (size_t)(next - v) : strlen(v);
		if (vlen >= sizeof(val)) {
			gpu_err_set(err, "sim option '%s': value too long", key);
			return GPU_EINVAL;
		}
		memcpy(val, v, vlen);
		val[vlen] = '\0';
		uint64_t u = 0;
		int rc = 0;
		if (!strcmp(key, "latency_us")) {
			rc = opt_uint(key, val, 0, 10000000, &o->latency_us, err);
			o->have_latency = true;
		} else if (!strcmp(key, "seed")) {
			rc = opt_uint(key, val, 0, UINT32_MAX, &o->seed, err);
			o->have_seed = true;
		} else if (!strcmp(key, "time_s")) {
			rc = opt_uint(key, val, 0, 86400 * 365, &o->time_s, err);
			o->have_time = true;
		} else if (!strcmp(key, "hang_gpu")) {
			if (!(rc = opt_uint(key, val, 0, GPU_MAX_GPUS - 1, &u, err)))
				o->hang_gpu = (int)u;
		} else if (!strcmp(key, "hang_ms")) {
			rc = opt_uint(key, val, 0, 86400000, &o->hang_ms, err);
		} else if (!strcmp(key, "gpus")) {
			if (!(rc = opt_uint(key, val, 1, GPU_MAX_GPUS, &u, err)))
				o->gpus = (unsigned)u;
		} else if (!strcmp(key, "faults")) {
			if (!vlen) {
				gpu_err_set(err, "sim option 'faults': needs a file path");
				rc = GPU_EINVAL;
			}
			snprintf(o->faults, sizeof(o->faults), "%s", val);
		} else {
			gpu_err_set(err, "unknown sim option '%s' (known: latency_us, faults, seed, time_s, hang_gpu, "
				    "hang_ms, gpus, data_dir)", key);
			rc = GPU_EINVAL;
		}
		if (rc)
			return rc;
		p = next;
	}
	return 0;
}

static bool is_path(const char *t)
{
	size_t n = strlen(t);
	return strchr(t, '/') || (n >= 5 && !strcmp(t + n - 5, ".json"));
}

/* "a100x8, h200x8, ...": the servers of the data folder sim/ (core/data_path.h). */
static void sim_server_names(const char *data_dir, char *out, size_t outlen)
{
	struct data_places p;
	char **names, msg[128];
	size_t n, used = 0;
	data_places_default(&p, data_dir);
	snprintf(out, outlen, "none");
	if (data_places_list(&p, "sim", ".json", &names, &n, msg, sizeof(msg)) != DATA_OK)
		return;
	for (size_t i = 0; i < n && used < outlen; i++) {
		const char *base = names[i] + strlen("sim/");
		int len = (int)strlen(base) - (int)strlen(".json");
		int w = snprintf(out + used, outlen - used, "%s%.*s", i ? ", " : "", len, base);
		used += w > 0 ? (size_t)w : 0;
	}
	data_list_free(names, n);
}

/* Reads and parses the server file, then the catalog; st->srv on success. */
static int load_server(struct sim_state *st, const struct sim_options *o, struct gpu_err *err)
{
	const char *dd = o->data_dir[0] ? o->data_dir : NULL;
	char msg[256];
	struct data_file f = { .text = NULL };
	if (is_path(o->target)) {
		snprintf(f.name, sizeof(f.name), "%s", o->target);
		f.text = read_whole_file(f.name, SIM_FILE_MAX, &f.len, msg, sizeof(msg));
	} else {
		char rel[1100];
		/* the shipped names are lower case: H200X8 is h200x8 */
		int rl = snprintf(rel, sizeof(rel), "sim/%s.json", o->target);
		for (int k = 4; k < rl && k < (int)sizeof(rel) - 5; k++)
			rel[k] = (char)tolower((unsigned char)rel[k]);
		if (data_file_read(dd, rel, SIM_FILE_MAX, &f, msg, sizeof(msg)) == DATA_ENOENT) {
			char known[512];
			sim_server_names(dd, known, sizeof(known));
			gpu_err_set(err, "unknown simulated server '%s' (no %s in the data files; there are: %s)", o->target,
				    rel, known);
			return GPU_EIO;
		}
	}
	if (!f.text) {
		gpu_err_set(err, "%s", msg);
		return GPU_EIO;
	}
	const char *path = f.name;
	snprintf(st->origin, sizeof(st->origin), "%.*s", (int)sizeof(st->origin) - 1, path);
	int rc = sim_server_parse(f.text, f.len, path, &st->srv, err);
	if (rc == 0 && o->gpus)
		rc = sim_server_replicate(st->srv, o->gpus, err);
	if (rc == 0 && catalog_load_dir(&st->cat, dd, msg, sizeof(msg)) != 0) {
		gpu_err_set(err, "%s", msg);
		rc = GPU_EDATA;
	}
	if (rc == 0)
		rc = sim_server_resolve(st->srv, &st->cat, path, err);
	data_file_free(&f);
	return rc;
}

static int sim_open(struct gpu_backend *be, const char *arg, struct gpu_err *err)
{
	struct sim_options o;
	int rc = parse_options(arg, &o, err);
	if (rc)
		return rc;
	struct sim_state *st = calloc(1, sizeof(*st));
	if (!st) {
		gpu_err_set(err, "out of memory");
		return GPU_ENOMEM;
	}
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->events_cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = load_server(st, &o, err)) || (rc = sim_state_build(st, err))) {
		state_free(st);
		return rc;
	}
	if (o.hang_gpu >= (int)st->ngpu) {
		gpu_err_set(err, "sim option 'hang_gpu': GPU %d does not exist (the server has %u)", o.hang_gpu, st->ngpu);
		state_free(st);
		return GPU_EINVAL;
	}
	st->latency_us = o.have_latency ? o.latency_us : st->srv->latency_us;
	st->seed = o.have_seed ? o.seed : st->srv->seed;
	st->frozen = o.have_time;
	st->frozen_s = (double)o.time_s;
	st->hang_gpu = o.hang_gpu;
	st->hang_ms = o.hang_ms;
	snprintf(st->fault_path, sizeof(st->fault_path), "%s", o.faults);
	st->t0_ns = gpu_backend_now_ns(be);
	for (unsigned i = 0; i < st->srv->nfault; i++) {
		if ((rc = sim_fault_check(st, &st->srv->faults[i], err))) {
			char m[sizeof(err->msg)];
			snprintf(m, sizeof(m), "%s", err->msg);
			gpu_err_set(err, "sim file '%s': faults[%u]: %s", st->origin, i, m);
			state_free(st);
			return GPU_EDATA;
		}
		if (add_fault(st, &st->srv->faults[i], SIM_FROM_SERVER, st->t0_ns) < 0) {
			gpu_err_set(err, "out of memory");
			state_free(st);
			return GPU_ENOMEM;
		}
	}
	be->priv = st;
	be->gpu_count = st->ngpu;
	return 0;
}

/* ---- the test API (sim.h) ---- */

int sim_inject(struct gpu_backend *be, const struct sim_fault *f, struct gpu_err *err)
{
	struct sim_state *st = state_of(be);
	if (!st) {
		gpu_err_set(err, "not a simulated server");
		return GPU_EINVAL;
	}
	pthread_mutex_lock(&st->lock);
	int rc = sim_fault_check(st, f, err);
	if (!rc) {
		rc = add_fault(st, f, SIM_FROM_API, gpu_backend_now_ns(be));
		if (rc < 0)
			gpu_err_set(err, "out of memory");
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int sim_nics(struct gpu_backend *be, struct nic *out, unsigned max, char (*gpu_path)[NIC_PATH_LEN])
{
	struct sim_state *st = state_of(be);
	if (!st)
		return -1;
	const struct sim_server *srv = st->srv; /* not changed after open */
	unsigned n = srv->nnic < max ? srv->nnic : max;
	memcpy(out, srv->nic, n * sizeof(*out));
	for (unsigned g = 0; g < srv->ngpu && g < GPU_MAX_GPUS; g++)
		memcpy(gpu_path[g], srv->gpu[g].pci_path, NIC_PATH_LEN);
	return (int)n;
}

int sim_clear(struct gpu_backend *be, int fault_id)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return GPU_EINVAL;
	int rc = GPU_EINVAL;
	pthread_mutex_lock(&st->lock);
	uint64_t now = gpu_backend_now_ns(be);
	for (unsigned i = 0; i < st->nfaults; i++) {
		struct sim_fault_rec *r = &st->faults[i];
		if (r->id != fault_id)
			continue;
		end_fault(r, now);
		rc = 0;
	}
	pthread_cond_broadcast(&st->cond);
	pthread_cond_broadcast(&st->events_cond);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

void sim_clear_all(struct gpu_backend *be)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	uint64_t now = gpu_backend_now_ns(be);
	end_faults(st, SIM_FROM_API, now);
	end_faults(st, SIM_FROM_FILE, now);
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

int sim_fault_file_error(struct gpu_backend *be, char *buf, size_t len)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return 0;
	pthread_mutex_lock(&st->lock);
	reload_fault_file(be, st);
	snprintf(buf, len, "%s", st->fault_err);
	int bad = st->fault_err[0] != '\0';
	pthread_mutex_unlock(&st->lock);
	return bad;
}

uint64_t sim_events_delivered(struct gpu_backend *be)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return 0;
	pthread_mutex_lock(&st->lock);
	uint64_t n = st->delivered;
	pthread_mutex_unlock(&st->lock);
	return n;
}

uint64_t sim_event_waits(struct gpu_backend *be)
{
	struct sim_state *st = state_of(be);
	if (!st)
		return 0;
	pthread_mutex_lock(&st->lock);
	uint64_t n = st->event_waits;
	pthread_mutex_unlock(&st->lock);
	return n;
}

const struct gpu_backend_ops gpu_backend_sim = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.system_info = sim_system_info,
	.static_info = sim_static_info,
	.sample = sim_sample,
	.processes = sim_processes,
	.link = sim_link,
	.mig_instances = sim_mig_instances,
	.poll_events = sim_poll_events,
};
