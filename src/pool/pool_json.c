/* SPDX-License-Identifier: Apache-2.0 */
/* pool_json.c - a job and its accounting as JSON (docs/pool.md, "Job objects"). */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/abuf.h"
#include "view/json_util.h"

static const char *const state_names[JOB_STATE_COUNT] = {
	"pending", "starting", "running", "done", "failed", "cancelled", "timeout", "lost",
};

const char *job_state_name(enum job_state s)
{
	return (unsigned)s < JOB_STATE_COUNT ? state_names[s] : "unknown";
}

int job_state_parse(const char *name)
{
	for (int i = 0; i < JOB_STATE_COUNT; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -1;
}

static json_t *mask_json(uint64_t mask)
{
	json_t *a = json_array();
	for (unsigned g = 0; g < 64; g++)
		if (mask >> g & 1)
			json_array_append_new(a, json_integer(g));
	return a;
}

json_t *pool_job_json(const struct pool_job *j, bool with_command, const struct sched_decision *d)
{
	(void)d;
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_u64(j->id));
	json_object_set_new(o, "name", json_string(j->name));
	json_object_set_new(o, "user", json_string(j->user));
	json_object_set_new(o, "uid", json_u64(j->uid));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "reason", json_string(j->reason));
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "submit_ns", json_u64(j->submit_ns));
	if (j->start_ns)
		json_object_set_new(o, "start_ns", json_u64(j->start_ns));
	if (j->end_ns)
		json_object_set_new(o, "end_ns", json_u64(j->end_ns));
	if (j->state == JOB_PENDING && j->est_start_ns)
		json_object_set_new(o, "est_start_ns", json_u64(j->est_start_ns));
	if (j->time_limit_ns)
		json_object_set_new(o, "time_limit_s", json_u64(j->time_limit_ns / 1000000000ull));
	if (j->state == JOB_RUNNING && j->idle_note[0])
		json_object_set_new(o, "warning", json_string(j->idle_note));
	if (j->after)
		json_object_set_new(o, "after", json_u64(j->after));
	json_t *req = json_object();
	if (j->mig_profile[0]) {
		json_object_set_new(req, "mig", json_string(j->mig_profile));
	} else {
		json_object_set_new(req, "gpus", json_integer(j->req_gpus));
		if (j->req_mask)
			json_object_set_new(req, "gpu_ids", mask_json(j->req_mask));
		json_object_set_new(req, "nvlink", json_boolean(j->req_nvlink));
	}
	if (j->req_mem)
		json_object_set_new(req, "mem_per_gpu_bytes", json_u64(j->req_mem));
	json_object_set_new(o, "request", req);
	if (j->gpu_mask || j->mig_gpu >= 0) {
		json_object_set_new(o, "gpus", j->mig_gpu >= 0 ? mask_json(1ull << j->mig_gpu) : mask_json(j->gpu_mask));
		if (j->mig_gpu >= 0)
			json_object_set_new(o, "mig_instance", json_pack("{s:i, s:i}", "gpu", j->mig_gpu, "gi", j->mig_gi));
		json_object_set_new(o, "cuda_visible_devices", json_string(j->devices));
	}
	if (j->state >= JOB_STARTING) {
		if (j->cgroup[0])
			json_object_set_new(o, "cgroup", json_string(j->cgroup));
		if (j->shim_pid)
			json_object_set_new(o, "shim_pid", json_integer(j->shim_pid));
		if (j->job_pid)
			json_object_set_new(o, "pid", json_integer(j->job_pid));
	}
	if (job_state_ended(j->state)) {
		if (j->exit_code >= 0)
			json_object_set_new(o, "exit_code", json_integer(j->exit_code));
		if (j->exit_signal > 0)
			json_object_set_new(o, "exit_signal", json_integer(j->exit_signal));
	}
	if (with_command && j->spec_json) {
		json_t *spec = json_loads(j->spec_json, 0, NULL);
		if (spec) {
			json_object_set(o, "command", json_object_get(spec, "argv"));
			json_object_set(o, "cwd", json_object_get(spec, "cwd"));
			json_object_set_new(o, "shell", json_boolean(j->shell));
			json_decref(spec);
		}
	}
	return o;
}

json_t *pool_acct_json(const struct acct_summary *a, unsigned n)
{
	json_t *arr = json_array();
	for (unsigned i = 0; arr && i < n; i++) {
		const struct acct_summary *s = &a[i];
		json_t *o = json_object();
		json_t *un = json_object();
		json_object_set_new(o, "gpu", json_integer(s->gpu));
		json_object_set_new(o, "gpu_seconds", json_real(s->gpu_seconds));
		json_object_set_new(o, "samples", json_u64(s->samples));
		if (s->energy_ok)
			json_object_set_new(o, "energy_j", json_real(s->energy_j));
		else
			json_object_set_new(un, "energy_j", json_string("not read"));
		if (s->util_ok) {
			json_object_set_new(o, "util_avg_pct", json_real(s->util_avg_pct));
			json_object_set_new(o, "util_peak_pct", json_real(s->util_peak_pct));
		} else {
			json_object_set_new(un, "util_pct", json_string("not read"));
		}
		if (s->mem_ok) {
			json_object_set_new(o, "mem_avg_bytes", json_real(s->mem_avg_bytes));
			json_object_set_new(o, "mem_peak_bytes", json_real(s->mem_peak_bytes));
		} else {
			json_object_set_new(un, "mem_bytes", json_string("not read"));
		}
		for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
			json_object_set_new(s->gpm_ok[m] ? o : un, acct_gpm_key((enum acct_gpm)m),
					    s->gpm_ok[m] ? json_real(s->gpm_avg_pct[m]) : json_string("not read"));
		char reasons[256];
		clk_evt_describe(s->throttle_reasons, reasons, sizeof(reasons));
		json_object_set_new(o, "throttle_reasons", json_string(s->throttle_reasons ? reasons : "none"));
		if (s->viol_ok) {
			json_object_set_new(o, "throttle_power_s", json_real(s->throttle_power_s));
			json_object_set_new(o, "throttle_thermal_s", json_real(s->throttle_thermal_s));
		} else {
			json_object_set_new(un, "throttle_s", json_string("not read"));
		}
		json_t *x = json_object();
		for (unsigned k = 0; k < s->nxid; k++) {
			char code[24];
			snprintf(code, sizeof(code), "%llu", (unsigned long long)s->xid[k].code);
			json_object_set_new(x, code, json_u64(s->xid[k].count));
		}
		json_object_set_new(o, "xids", x);
		if (json_object_size(un))
			json_object_set_new(o, "unavailable", un);
		else
			json_decref(un);
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ---- the queue, written as text ------------------------------------------------ */

static void put_str(struct abuf *b, const char *s)
{
	abuf_putc(b, '"');
	for (; *s; s++) {
		size_t run = strcspn(s, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12"
					"\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f");
		if (run) { /* the plain bytes at once */
			abuf_put(b, s, run);
			s += run;
			if (!*s)
				break;
		}
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			abuf_putc(b, '\\');
			abuf_putc(b, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			abuf_printf(b, "\\u%04x", c);
		} else {
			abuf_putc(b, (char)c);
		}
	}
	abuf_putc(b, '"');
}

/* No printf below: at 10 000 jobs it was most of the answer's cost */
static void put_key_u64(struct abuf *b, const char *key, uint64_t v)
{
	abuf_puts(b, ",\"");
	abuf_puts(b, key);
	abuf_puts(b, "\":");
	abuf_put_u64(b, v > INT64_MAX ? INT64_MAX : v);
}

static void put_key_int(struct abuf *b, const char *key, long long v)
{
	abuf_puts(b, ",\"");
	abuf_puts(b, key);
	abuf_puts(b, "\":");
	if (v < 0)
		abuf_putc(b, '-');
	abuf_put_u64(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

static void put_mask(struct abuf *b, uint64_t mask)
{
	abuf_putc(b, '[');
	bool first = true;
	for (unsigned g = 0; g < 64; g++)
		if (mask >> g & 1) {
			if (!first)
				abuf_putc(b, ',');
			abuf_put_u64(b, g);
			first = false;
		}
	abuf_putc(b, ']');
}

void pool_queue_render(struct abuf *b, const char *first, struct pool_job *const *v, size_t n, bool simulated,
		       const char *devices)
{
	unsigned pending = 0, running = 0;
	abuf_putc(b, '{');
	abuf_puts(b, first);
	abuf_puts(b, ",\"jobs\":[");
	for (size_t i = 0; i < n; i++) {
		const struct pool_job *j = v[i];
		abuf_puts(b, i ? ",{\"id\":" : "{\"id\":");
		abuf_put_u64(b, j->id);
		abuf_puts(b, ",\"name\":");
		put_str(b, j->name);
		abuf_puts(b, ",\"user\":");
		put_str(b, j->user);
		put_key_u64(b, "uid", j->uid);
		abuf_puts(b, ",\"state\":");
		put_str(b, job_state_name(j->state));
		abuf_puts(b, ",\"reason\":");
		put_str(b, j->reason);
		put_key_int(b, "priority", j->priority);
		put_key_u64(b, "submit_ns", j->submit_ns);
		if (j->start_ns)
			put_key_u64(b, "start_ns", j->start_ns);
		if (j->state == JOB_PENDING && j->est_start_ns)
			put_key_u64(b, "est_start_ns", j->est_start_ns);
		if (j->time_limit_ns)
			put_key_u64(b, "time_limit_s", j->time_limit_ns / 1000000000ull);
		if (j->state == JOB_RUNNING && j->idle_note[0]) {
			abuf_puts(b, ",\"warning\":");
			put_str(b, j->idle_note);
		}
		if (j->after)
			put_key_u64(b, "after", j->after);
		abuf_puts(b, ",\"request\":{");
		if (j->mig_profile[0]) {
			abuf_puts(b, "\"mig\":");
			put_str(b, j->mig_profile);
		} else {
			abuf_puts(b, "\"gpus\":");
			abuf_put_u64(b, j->req_gpus);
			if (j->req_mask) {
				abuf_puts(b, ",\"gpu_ids\":");
				put_mask(b, j->req_mask);
			}
			abuf_puts(b, j->req_nvlink ? ",\"nvlink\":true" : ",\"nvlink\":false");
		}
		if (j->req_mem)
			put_key_u64(b, "mem_per_gpu_bytes", j->req_mem);
		abuf_putc(b, '}');
		if (j->gpu_mask || j->mig_gpu >= 0) {
			abuf_puts(b, ",\"gpus\":");
			put_mask(b, j->mig_gpu >= 0 ? 1ull << j->mig_gpu : j->gpu_mask);
			if (j->mig_gpu >= 0) {
				abuf_puts(b, ",\"mig_instance\":{\"gpu\":");
				abuf_put_u64(b, (unsigned)j->mig_gpu);
				put_key_int(b, "gi", j->mig_gi);
				abuf_putc(b, '}');
			}
		}
		if (j->state == JOB_PENDING)
			put_key_u64(b, "position", ++pending);
		else
			running++;
		abuf_putc(b, '}');
	}
	abuf_printf(b, "],\"pending\":%u,\"running\":%u,\"devices\":", pending, running);
	put_str(b, devices);
	abuf_printf(b, "%s}\n", simulated ? ",\"simulated\":true" : "");
}
