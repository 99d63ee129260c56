/* SPDX-License-Identifier: Apache-2.0 */
/* results_file.c - see results_file.h. */
#include "results_file.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data_path.h"
#include "view/json_util.h"

#define MAX_RESULTS 100000
#define MAX_FILE_BYTES (256u << 20)

/* ---- writing ------------------------------------------------------------ */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *stats_json(const struct stats *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "median", num(s->median));
	json_object_set_new(o, "min", num(s->min));
	json_object_set_new(o, "max", num(s->max));
	json_object_set_new(o, "mean", num(s->mean));
	json_object_set_new(o, "stddev", num(s->stddev));
	json_object_set_new(o, "p10", num(s->p10));
	json_object_set_new(o, "p90", num(s->p90));
	json_object_set_new(o, "spread_pct", num(s->spread_pct));
	return o;
}

static json_t *telemetry_json(const struct bench_telemetry *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "samples", json_integer(t->samples));
	json_object_set_new(o, "window_s", num(t->window_s));
	json_object_set_new(o, "sm_clock_mhz_min", num(t->sm_clock_mhz_min));
	json_object_set_new(o, "sm_clock_mhz_max", num(t->sm_clock_mhz_max));
	json_object_set_new(o, "mem_clock_mhz_min", num(t->mem_clock_mhz_min));
	json_object_set_new(o, "power_w_avg", num(t->power_w_avg));
	json_object_set_new(o, "power_w_max", num(t->power_w_max));
	json_object_set_new(o, "temp_c_max", num(t->temp_c_max));
	json_object_set_new(o, "temp_mem_c_max", num(t->temp_mem_c_max));
	json_object_set_new(o, "energy_j", num(t->energy_j));
	json_object_set_new(o, "test_s", num(t->test_s));
	json_object_set_new(o, "energy_from", json_string(t->energy_from));
	json_object_set_new(o, "clock_event_reasons", json_integer((json_int_t)t->clock_event_reasons));
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
		json_object_set_new(o, bench_tel_gpm_keys[k], num(t->gpm_pct[k]));
	return o;
}

static json_t *result_json(const struct bench_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "suite", json_string(r->suite));
	json_object_set_new(o, "test", json_string(r->test));
	json_object_set_new(o, "variant", json_string(r->variant));
	json_object_set_new(o, "gpu", json_integer(r->gpu));
	json_object_set_new(o, "peer", json_integer(r->peer));
	json_object_set_new(o, "ngpus", json_integer(r->ngpus));
	json_object_set_new(o, "size_bytes", json_integer((json_int_t)r->size_bytes));
	json_object_set_new(o, "m", json_integer(r->m));
	json_object_set_new(o, "n", json_integer(r->n));
	json_object_set_new(o, "k", json_integer(r->k));
	json_object_set_new(o, "status", json_string(bench_status_name(r->status)));
	json_object_set_new(o, "metric", json_string(bench_metric_name(r->metric)));
	json_object_set_new(o, "unit", json_string(r->unit));
	json_object_set_new(o, "median", num(r->value.median));
	json_object_set_new(o, "limit", num(r->limit));
	json_object_set_new(o, "limit_what", json_string(r->limit_what));
	json_object_set_new(o, "ratio", num(r->ratio));
	json_object_set_new(o, "min_ratio", num(r->min_ratio));
	json_object_set_new(o, "value", stats_json(&r->value));
	json_object_set_new(o, "time_ms", stats_json(&r->time_ms));
	json_object_set_new(o, "bytes", json_real(r->bytes));
	json_object_set_new(o, "flops", json_real(r->flops));
	json_object_set_new(o, "scale", num(r->scale));
	json_object_set_new(o, "algbw_gbs", num(r->algbw_gbs));
	json_object_set_new(o, "verified", json_boolean(r->verified));
	json_object_set_new(o, "max_err", num(r->max_err));
	json_object_set_new(o, "message", json_string(r->message));
	json_t *s = json_array();
	for (unsigned i = 0; i < r->nsamples; i++)
		json_array_append_new(s, json_real(r->samples_ms[i]));
	json_object_set_new(o, "samples_ms", s);
	json_t *aux = json_array();
	for (unsigned i = 0; i < r->naux; i++) {
		json_t *a = json_object();
		json_object_set_new(a, "name", json_string(r->aux[i].name));
		json_object_set_new(a, "value", num(r->aux[i].value));
		json_object_set_new(a, "unit", json_string(r->aux[i].unit));
		json_array_append_new(aux, a);
	}
	json_object_set_new(o, "aux", aux);
	json_object_set_new(o, "telemetry", telemetry_json(&r->tel));
	json_object_set_new(o, "gflops_per_watt", num(r->gflops_per_watt));
	return o;
}

char *bench_results_to_json(const struct bench_run *run)
{
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string(BENCH_SCHEMA));
	json_object_set_new(o, "version", json_integer(BENCH_SCHEMA_VERSION));
	json_object_set_new(o, "simulated", json_false());
	json_object_set_new(o, "gpuctl_version", json_string(run->gpuctl_version));
	json_object_set_new(o, "started_utc", json_string(run->started_utc));
	json_object_set_new(o, "host", json_string(run->host));
	json_object_set_new(o, "driver_version", json_string(run->driver_version));
	json_object_set_new(o, "cuda_version", json_string(run->cuda_version));
	json_object_set_new(o, "kernels_build", json_string(run->kernels_build));
	json_object_set_new(o, "mode", json_string(run->mode));
	json_object_set_new(o, "note", json_string(run->note));
	json_object_set_new(o, "duration_s", num(run->duration_s));
	json_t *gpus = json_array();
	for (unsigned i = 0; i < run->ngpus && i < BENCH_MAX_GPUS; i++) {
		const struct bench_gpu_info *g = &run->gpu[i];
		json_t *j = json_object();
		json_object_set_new(j, "index", json_integer(g->index));
		json_object_set_new(j, "name", json_string(g->name));
		json_object_set_new(j, "uuid", json_string(g->uuid));
		json_object_set_new(j, "pci_bus_id", json_string(g->pci_bus_id));
		json_object_set_new(j, "catalog_model", json_string(g->catalog_model));
		json_array_append_new(gpus, j);
	}
	json_object_set_new(o, "gpus", gpus);
	json_t *res = json_array();
	for (size_t i = 0; i < run->n; i++)
		json_array_append_new(res, result_json(&run->r[i]));
	json_object_set_new(o, "results", res);
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_DIGITS);
	json_decref(o);
	if (!text)
		return NULL;
	size_t len = strlen(text);
	char *out = realloc(text, len + 2);
	if (!out) {
		free(text);
		return NULL;
	}
	out[len] = '\n';
	out[len + 1] = '\0';
	return out;
}

int bench_results_save(const struct bench_run *run, const char *path, char *err, size_t errlen)
{
	char *text = bench_results_to_json(run);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		free(text);
		return -1;
	}
	size_t len = strlen(text);
	int bad = fwrite(text, 1, len, f) != len;
	bad |= fclose(f) != 0;
	free(text);
	if (bad) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

struct rd {
	char *err;
	size_t errlen;
	char where[48];
};

static int fail(struct rd *rd, const char *field, const char *what)
{
	snprintf(rd->err, rd->errlen, "%s%s'%s' %s", rd->where, rd->where[0] ? ": " : "", field, what);
	return -1;
}

static int get_str(struct rd *rd, json_t *o, const char *k, char *out, size_t outlen, bool required)
{
	json_t *v = json_object_get(o, k);
	if (!v) {
		out[0] = '\0';
		return required ? fail(rd, k, "is missing") : 0;
	}
	if (!json_is_string(v))
		return fail(rd, k, "is not a string");
	if (json_string_length(v) >= outlen)
		return fail(rd, k, "is too long");
	snprintf(out, outlen, "%s", json_string_value(v));
	return 0;
}

/* number or null (NAN); absent = NAN */
static int get_num(struct rd *rd, json_t *o, const char *k, double *out)
{
	json_t *v = json_object_get(o, k);
	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return fail(rd, k, "is not a number");
	*out = json_number_value(v);
	return 0;
}

static int get_int(struct rd *rd, json_t *o, const char *k, long long lo, long long hi, long long dflt, long long *out)
{
	json_t *v = json_object_get(o, k);
	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return fail(rd, k, "is not an integer");
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return fail(rd, k, "is out of range");
	*out = x;
	return 0;
}

static int get_stats(struct rd *rd, json_t *o, const char *k, struct stats *s)
{
	stats_clear(s);
	json_t *v = json_object_get(o, k);
	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(rd, k, "is not an object");
	long long n;
	if (get_int(rd, v, "n", 0, BENCH_MAX_SAMPLES, 0, &n) || get_num(rd, v, "median", &s->median) ||
	    get_num(rd, v, "min", &s->min) || get_num(rd, v, "max", &s->max) || get_num(rd, v, "mean", &s->mean) ||
	    get_num(rd, v, "stddev", &s->stddev) || get_num(rd, v, "p10", &s->p10) || get_num(rd, v, "p90", &s->p90) ||
	    get_num(rd, v, "spread_pct", &s->spread_pct))
		return -1;
	s->n = (size_t)n;
	return 0;
}

static int parse_telemetry(struct rd *rd, json_t *o, struct bench_telemetry *t)
{
	json_t *v = json_object_get(o, "telemetry");
	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(rd, "telemetry", "is not an object");
	long long n, reasons;
	if (get_int(rd, v, "samples", 0, 1000000000LL, 0, &n) || get_num(rd, v, "window_s", &t->window_s) ||
	    get_num(rd, v, "sm_clock_mhz_min", &t->sm_clock_mhz_min) ||
	    get_num(rd, v, "sm_clock_mhz_max", &t->sm_clock_mhz_max) ||
	    get_num(rd, v, "mem_clock_mhz_min", &t->mem_clock_mhz_min) ||
	    get_num(rd, v, "power_w_avg", &t->power_w_avg) || get_num(rd, v, "power_w_max", &t->power_w_max) ||
	    get_num(rd, v, "temp_c_max", &t->temp_c_max) || get_num(rd, v, "temp_mem_c_max", &t->temp_mem_c_max) ||
	    get_num(rd, v, "energy_j", &t->energy_j) || get_num(rd, v, "test_s", &t->test_s) ||
	    get_str(rd, v, "energy_from", t->energy_from, sizeof(t->energy_from), false) ||
	    get_int(rd, v, "clock_event_reasons", 0, INT64_MAX, 0, &reasons))
		return -1;
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++) /* absent (older files, no GPM): NAN */
		if (get_num(rd, v, bench_tel_gpm_keys[k], &t->gpm_pct[k]))
			return -1;
	t->samples = (unsigned)n;
	t->clock_event_reasons = (uint64_t)reasons;
	return 0;
}

static int parse_result(struct rd *rd, json_t *o, struct bench_result *r)
{
	char buf[32];
	long long gpu, peer, ngpus, size, m, n, k;
	double d;
	if (!json_is_object(o))
		return fail(rd, "result", "is not an object");
	if (get_str(rd, o, "suite", r->suite, sizeof(r->suite), true) ||
	    get_str(rd, o, "test", r->test, sizeof(r->test), true) ||
	    get_str(rd, o, "variant", r->variant, sizeof(r->variant), false) ||
	    get_int(rd, o, "gpu", -1, BENCH_MAX_GPUS - 1, -1, &gpu) ||
	    get_int(rd, o, "peer", -1, BENCH_MAX_GPUS - 1, -1, &peer) ||
	    get_int(rd, o, "ngpus", 0, BENCH_MAX_GPUS, 1, &ngpus) ||
	    get_int(rd, o, "size_bytes", 0, INT64_MAX, 0, &size) || get_int(rd, o, "m", 0, 1 << 30, 0, &m) ||
	    get_int(rd, o, "n", 0, 1 << 30, 0, &n) || get_int(rd, o, "k", 0, 1 << 30, 0, &k))
		return -1;
	r->gpu = (int)gpu;
	r->peer = (int)peer;
	r->ngpus = (int)ngpus;
	r->size_bytes = (uint64_t)size;
	r->m = (unsigned)m;
	r->n = (unsigned)n;
	r->k = (unsigned)k;
	if (get_str(rd, o, "status", buf, sizeof(buf), true))
		return -1;
	if (bench_status_parse(buf, &r->status) != 0)
		return fail(rd, "status", "is not ok, low, failed or skipped");
	if (get_str(rd, o, "metric", buf, sizeof(buf), true))
		return -1;
	if (bench_metric_parse(buf, &r->metric) != 0)
		return fail(rd, "metric", "is not a known metric");
	if (get_str(rd, o, "unit", r->unit, sizeof(r->unit), false) ||
	    get_str(rd, o, "limit_what", r->limit_what, sizeof(r->limit_what), false) ||
	    get_str(rd, o, "message", r->message, sizeof(r->message), false) ||
	    get_num(rd, o, "limit", &r->limit) || get_num(rd, o, "ratio", &r->ratio) ||
	    get_num(rd, o, "min_ratio", &r->min_ratio) || get_stats(rd, o, "value", &r->value) ||
	    get_stats(rd, o, "time_ms", &r->time_ms) || get_num(rd, o, "scale", &r->scale) ||
	    get_num(rd, o, "algbw_gbs", &r->algbw_gbs) || get_num(rd, o, "max_err", &r->max_err) ||
	    get_num(rd, o, "gflops_per_watt", &r->gflops_per_watt) || parse_telemetry(rd, o, &r->tel))
		return -1;
	if (get_num(rd, o, "bytes", &d))
		return -1;
	r->bytes = isnan(d) ? 0 : d;
	if (get_num(rd, o, "flops", &d))
		return -1;
	r->flops = isnan(d) ? 0 : d;
	json_t *v = json_object_get(o, "verified");
	if (v && !json_is_boolean(v))
		return fail(rd, "verified", "is not true or false");
	r->verified = v && json_is_true(v);
	json_t *s = json_object_get(o, "samples_ms");
	if (s) {
		if (!json_is_array(s) || json_array_size(s) > BENCH_MAX_SAMPLES)
			return fail(rd, "samples_ms", "is not an array of at most 128 numbers");
		for (size_t i = 0; i < json_array_size(s); i++) {
			json_t *x = json_array_get(s, i);
			if (!json_is_number(x))
				return fail(rd, "samples_ms", "holds a value that is not a number");
			r->samples_ms[i] = json_number_value(x);
		}
		r->nsamples = (unsigned)json_array_size(s);
	}
	json_t *aux = json_object_get(o, "aux");
	if (aux) {
		if (!json_is_array(aux) || json_array_size(aux) > BENCH_MAX_AUX) {
			char what[48];
			snprintf(what, sizeof(what), "is not an array of at most %d objects", BENCH_MAX_AUX);
			return fail(rd, "aux", what);
		}
		for (size_t i = 0; i < json_array_size(aux); i++) {
			json_t *a = json_array_get(aux, i);
			struct bench_aux *x = &r->aux[i];
			if (!json_is_object(a))
				return fail(rd, "aux", "holds a value that is not an object");
			if (get_str(rd, a, "name", x->name, sizeof(x->name), true) ||
			    get_str(rd, a, "unit", x->unit, sizeof(x->unit), false) || get_num(rd, a, "value", &x->value))
				return -1;
		}
		r->naux = (unsigned)json_array_size(aux);
	}
	/* a figure must be there for an ok/low result */
	if ((r->status == BS_OK || r->status == BS_LOW) && !isfinite(r->value.median))
		return fail(rd, "value", "has no median for a measured result");
	return 0;
}

static int parse_run(struct rd *rd, json_t *root, struct bench_run *run)
{
	char schema[40];
	long long ver, ngpu;
	if (!json_is_object(root))
		return fail(rd, "(top)", "is not a JSON object");
	if (get_str(rd, root, "schema", schema, sizeof(schema), true))
		return -1;
	if (strcmp(schema, BENCH_SCHEMA) != 0)
		return fail(rd, "schema", "is not '" BENCH_SCHEMA "'");
	if (get_int(rd, root, "version", 1, 1000000, 0, &ver))
		return -1;
	if (ver == 0)
		return fail(rd, "version", "is missing");
	if (ver > BENCH_SCHEMA_VERSION)
		return fail(rd, "version", "is newer than this gpuctl reads (1)");
	json_t *sim = json_object_get(root, "simulated");
	if (sim && !json_is_false(sim))
		return fail(rd, "simulated", "is not false: benchmark figures never come from a simulated server");
	run->schema_version = (int)ver;
	if (get_str(rd, root, "gpuctl_version", run->gpuctl_version, sizeof(run->gpuctl_version), false) ||
	    get_str(rd, root, "started_utc", run->started_utc, sizeof(run->started_utc), false) ||
	    get_str(rd, root, "host", run->host, sizeof(run->host), false) ||
	    get_str(rd, root, "driver_version", run->driver_version, sizeof(run->driver_version), false) ||
	    get_str(rd, root, "cuda_version", run->cuda_version, sizeof(run->cuda_version), false) ||
	    get_str(rd, root, "kernels_build", run->kernels_build, sizeof(run->kernels_build), false) ||
	    get_str(rd, root, "mode", run->mode, sizeof(run->mode), false) ||
	    get_str(rd, root, "note", run->note, sizeof(run->note), false) ||
	    get_num(rd, root, "duration_s", &run->duration_s))
		return -1;
	json_t *gpus = json_object_get(root, "gpus");
	if (gpus) {
		if (!json_is_array(gpus) || json_array_size(gpus) > BENCH_MAX_GPUS)
			return fail(rd, "gpus", "is not an array of at most 64 GPUs");
		for (size_t i = 0; i < json_array_size(gpus); i++) {
			json_t *g = json_array_get(gpus, i);
			struct bench_gpu_info *gi = &run->gpu[i];
			snprintf(rd->where, sizeof(rd->where), "gpus[%zu]", i);
			if (!json_is_object(g))
				return fail(rd, "gpu", "is not an object");
			if (get_int(rd, g, "index", 0, BENCH_MAX_GPUS - 1, (long long)i, &ngpu) ||
			    get_str(rd, g, "name", gi->name, sizeof(gi->name), false) ||
			    get_str(rd, g, "uuid", gi->uuid, sizeof(gi->uuid), false) ||
			    get_str(rd, g, "pci_bus_id", gi->pci_bus_id, sizeof(gi->pci_bus_id), false) ||
			    get_str(rd, g, "catalog_model", gi->catalog_model, sizeof(gi->catalog_model), false))
				return -1;
			gi->index = (int)ngpu;
		}
		run->ngpus = (unsigned)json_array_size(gpus);
	}
	rd->where[0] = '\0';
	json_t *res = json_object_get(root, "results");
	if (!res)
		return fail(rd, "results", "is missing");
	if (!json_is_array(res) || json_array_size(res) > MAX_RESULTS)
		return fail(rd, "results", "is not an array of at most 100000 results");
	for (size_t i = 0; i < json_array_size(res); i++) {
		struct bench_result *r = bench_run_add(run, NULL, NULL, NULL);
		if (!r)
			return fail(rd, "results", "do not fit in memory");
		snprintf(rd->where, sizeof(rd->where), "results[%zu]", i);
		if (parse_result(rd, json_array_get(res, i), r))
			return -1;
	}
	return 0;
}

int bench_results_parse(struct bench_run *run, const char *text, size_t len, char *err, size_t errlen)
{
	bench_run_init(run);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "not valid JSON at line %d: %s", je.line, je.text);
		return -1;
	}
	struct rd rd = { .err = err, .errlen = errlen };
	int rc = parse_run(&rd, root, run);
	json_decref(root);
	if (rc != 0) {
		bench_run_free(run);
		bench_run_init(run);
	}
	return rc;
}

int bench_results_load(struct bench_run *run, const char *path, char *err, size_t errlen)
{
	size_t len;
	char msg[256];
	bench_run_init(run);
	char *text = read_whole_file(path, MAX_FILE_BYTES, &len, err, errlen);
	if (!text)
		return -1;
	int rc = bench_results_parse(run, text, len, msg, sizeof(msg));
	free(text);
	if (rc != 0) {
		snprintf(err, errlen, "'%s': %s", path, msg);
		return -2;
	}
	return 0;
}
