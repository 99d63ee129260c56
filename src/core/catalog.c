/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog.c - reading the GPU catalog (data/catalog/gpus.json, described in
 * docs/catalog.md) and finding an entry by key or by what the driver reports.
 *
 * The parser is strict: every field of an entry must be present (null where
 * the vendor publishes no figure), of the right type, and no unknown field is
 * accepted, so that a typo in the data file is an error naming the entry and
 * the field instead of a silently missing figure.
 */
#include "catalog.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data_path.h"

#define CATALOG_MAX_BYTES (4u << 20)
#define CATALOG_MAX_GPUS 256

/* Parsing state for one entry: where errors go and which entry they name. */
struct entry_ctx {
	const char *name; /* the entry's key, or "#N" before the key is known */
	char *err;
	size_t errlen;
};

static int fail(struct entry_ctx *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct entry_ctx *c, const char *field, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "catalog entry '%s': field '%s' %s", c->name, field, what);
	return -1;
}

/* Rejects fields not in `allowed` (NULL-terminated); `prefix` names the object. */
static int check_keys(struct entry_ctx *c, json_t *obj, const char *prefix, const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(k, allowed[i]) == 0)
				ok = true;
		if (!ok) {
			char path[96];
			snprintf(path, sizeof(path), "%s%s", prefix, k);
			return fail(c, path, "is not a known field");
		}
	}
	return 0;
}

#define PATH_LEN 96

/* The field's value, or NULL after an error; path gets "prefix.key" for messages. */
static json_t *need_at(struct entry_ctx *c, json_t *obj, const char *prefix, const char *key, char path[PATH_LEN])
{
	snprintf(path, PATH_LEN, "%s%s", prefix, key);
	json_t *v = json_object_get(obj, key);
	if (!v)
		fail(c, path, "is missing");
	return v;
}

static json_t *need(struct entry_ctx *c, json_t *obj, const char *prefix, const char *key)
{
	char path[PATH_LEN];
	return need_at(c, obj, prefix, key, path);
}

static int get_str(struct entry_ctx *c, json_t *obj, const char *prefix, const char *key, char *out, size_t outlen, bool allow_empty)
{
	char path[PATH_LEN];
	json_t *v = need_at(c, obj, prefix, key, path);
	if (!v)
		return -1;
	if (!json_is_string(v))
		return fail(c, path, "must be a string");
	const char *s = json_string_value(v);
	size_t n = strlen(s);
	if (n == 0 && !allow_empty)
		return fail(c, path, "must not be empty");
	if (n >= outlen)
		return fail(c, path, "is longer than %zu characters", outlen - 1);
	memcpy(out, s, n + 1);
	return 0;
}

/* A figure: a non-negative finite number, or null (-> NAN) where allowed. */
static int get_num(struct entry_ctx *c, json_t *obj, const char *prefix, const char *key, double *out, bool nullable)
{
	char path[PATH_LEN];
	json_t *v = need_at(c, obj, prefix, key, path);
	if (!v)
		return -1;
	if (json_is_null(v)) {
		if (!nullable)
			return fail(c, path, "must be a number, not null");
		*out = NAN;
		return 0;
	}
	if (!json_is_number(v))
		return fail(c, path, nullable ? "must be a number or null" : "must be a number");
	double d = json_number_value(v);
	if (!isfinite(d) || d < 0)
		return fail(c, path, "must not be negative");
	*out = d;
	return 0;
}

/* A count: a non-negative integer; null (-> 0, printed "n/a") where allowed. */
static int get_uint(struct entry_ctx *c, json_t *obj, const char *prefix, const char *key, unsigned *out, bool nullable, unsigned max)
{
	char path[PATH_LEN];
	json_t *v = need_at(c, obj, prefix, key, path);
	if (!v)
		return -1;
	if (json_is_null(v) && nullable) {
		*out = 0;
		return 0;
	}
	if (!json_is_integer(v))
		return fail(c, path, nullable ? "must be a whole number or null" : "must be a whole number");
	json_int_t i = json_integer_value(v);
	if (i < 0 || (uint64_t)i > max)
		return fail(c, path, "must be between 0 and %u", max);
	*out = (unsigned)i;
	return 0;
}

static json_t *get_obj(struct entry_ctx *c, json_t *obj, const char *key)
{
	json_t *v = need(c, obj, "", key);
	if (v && !json_is_object(v)) {
		fail(c, key, "must be an object");
		return NULL;
	}
	return v;
}

static int parse_cc(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	char cc[16];
	if (get_str(c, e, "", "compute_capability", cc, sizeof(cc), false))
		return -1;
	unsigned maj, min;
	char tail;
	if (sscanf(cc, "%u.%u%c", &maj, &min, &tail) != 2 || maj > 99 || min > 9)
		return fail(c, "compute_capability", "must look like \"9.0\", not '%s'", cc);
	g->cc_major = maj;
	g->cc_minor = min;
	return 0;
}

static int parse_memory(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	static const char *const keys[] = { "gb", "total_mib", "type", "bus_width_bits", "bandwidth_gbs", NULL };
	json_t *m = get_obj(c, e, "memory");
	unsigned mib;
	if (!m || check_keys(c, m, "memory.", keys) ||
	    get_num(c, m, "memory.", "gb", &g->mem_gb, false) ||
	    get_uint(c, m, "memory.", "total_mib", &mib, false, 16u << 20) ||
	    get_str(c, m, "memory.", "type", g->mem_type, sizeof(g->mem_type), false) ||
	    get_uint(c, m, "memory.", "bus_width_bits", &g->mem_bus_width_bits, true, 65536) ||
	    get_num(c, m, "memory.", "bandwidth_gbs", &g->mem_bw_gbs, false))
		return -1;
	if (mib == 0 || g->mem_gb <= 0)
		return fail(c, mib == 0 ? "memory.total_mib" : "memory.gb", "must be above 0");
	g->mem_bytes = (uint64_t)mib << 20;
	return 0;
}

static int parse_tflops(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	static const char *const keys[] = { "fp64", "fp64_tensor", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", NULL };
	double *dst[] = { &g->tflops_fp64, &g->tflops_fp64_tc, &g->tflops_fp32, &g->tflops_tf32,
			  &g->tflops_fp16, &g->tflops_bf16, &g->tflops_fp8, &g->tflops_int8 };
	json_t *t = get_obj(c, e, "tflops");
	if (!t || check_keys(c, t, "tflops.", keys))
		return -1;
	for (size_t i = 0; keys[i]; i++)
		if (get_num(c, t, "tflops.", keys[i], dst[i], true))
			return -1;
	if (isnan(g->tflops_fp32))
		return fail(c, "tflops.fp32", "must be a number: every GPU has an FP32 figure");
	return 0;
}

static int parse_links(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	static const char *const nv_keys[] = { "gen", "links", "bandwidth_gbs", NULL };
	static const char *const pcie_keys[] = { "gen", "width", NULL };
	static const char *const clk_keys[] = { "max_sm_mhz", "max_mem_mhz", NULL };
	json_t *nv = get_obj(c, e, "nvlink");
	if (!nv || check_keys(c, nv, "nvlink.", nv_keys) ||
	    get_uint(c, nv, "nvlink.", "gen", &g->nvlink_gen, false, 9) ||
	    get_uint(c, nv, "nvlink.", "links", &g->nvlink_links, false, 64) ||
	    get_num(c, nv, "nvlink.", "bandwidth_gbs", &g->nvlink_bw_gbs, true))
		return -1;
	if ((g->nvlink_gen == 0) != (g->nvlink_links == 0) || (g->nvlink_gen == 0) != isnan(g->nvlink_bw_gbs))
		return fail(c, "nvlink", "must have gen, links and bandwidth_gbs all set or all 0/null");
	json_t *p = get_obj(c, e, "pcie");
	if (!p || check_keys(c, p, "pcie.", pcie_keys) ||
	    get_uint(c, p, "pcie.", "gen", &g->pcie_gen, false, 9) ||
	    get_uint(c, p, "pcie.", "width", &g->pcie_width, false, 32))
		return -1;
	json_t *k = get_obj(c, e, "clocks");
	if (!k || check_keys(c, k, "clocks.", clk_keys) ||
	    get_uint(c, k, "clocks.", "max_sm_mhz", &g->max_sm_clock_mhz, true, 10000) ||
	    get_uint(c, k, "clocks.", "max_mem_mhz", &g->max_mem_clock_mhz, true, 50000))
		return -1;
	return 0;
}

static int parse_mig(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	static const char *const keys[] = { "name", "slices", "mem_slices", "mem_gb", "max_instances", "sms", NULL };
	json_t *arr = need(c, e, "", "mig");
	if (!arr)
		return -1;
	if (!json_is_array(arr))
		return fail(c, "mig", "must be an array");
	if (json_array_size(arr) > CAT_MAX_MIG_PROFILES)
		return fail(c, "mig", "has more than %d profiles", CAT_MAX_MIG_PROFILES);
	json_t *tot = json_object_get(e, "mig_memory_slices");
	if (json_array_size(arr) > 0) {
		if (get_uint(c, e, "", "mig_memory_slices", &g->mig_mem_slices_total, false, 16))
			return -1;
		if (g->mig_mem_slices_total == 0)
			return fail(c, "mig_memory_slices", "must be above 0");
	} else if (tot) {
		return fail(c, "mig_memory_slices", "is set but mig lists no profile");
	}
	size_t i;
	json_t *p;
	json_array_foreach(arr, i, p) {
		char prefix[32], label[32];
		snprintf(prefix, sizeof(prefix), "mig[%zu].", i);
		snprintf(label, sizeof(label), "mig[%zu]", i);
		if (!json_is_object(p))
			return fail(c, label, "must be an object");
		struct cat_mig_profile *m = &g->mig[i];
		if (check_keys(c, p, prefix, keys) ||
		    get_str(c, p, prefix, "name", m->name, sizeof(m->name), false) ||
		    get_uint(c, p, prefix, "slices", &m->slices, false, 8) ||
		    get_uint(c, p, prefix, "mem_slices", &m->mem_slices, false, 16) ||
		    get_num(c, p, prefix, "mem_gb", &m->mem_gb, false) ||
		    get_uint(c, p, prefix, "max_instances", &m->max_instances, false, 8) ||
		    get_uint(c, p, prefix, "sms", &m->sm_count, true, 1024))
			return -1;
		if (m->slices == 0 || m->max_instances == 0 || m->mem_slices == 0)
			return fail(c, label, "must have slices, mem_slices and max_instances above 0");
		if (m->mem_slices > g->mig_mem_slices_total)
			return fail(c, label, "uses %u memory slices of the GPU's %u", m->mem_slices, g->mig_mem_slices_total);
		if (g->sm_count && m->sm_count > g->sm_count)
			return fail(c, label, "has more SMs (%u) than the GPU (%u)", m->sm_count, g->sm_count);
		for (size_t j = 0; j < i; j++)
			if (strcmp(g->mig[j].name, m->name) == 0)
				return fail(c, label, "repeats profile '%s'", m->name);
	}
	g->mig_n = (unsigned)json_array_size(arr);
	return 0;
}

static int parse_aliases(struct entry_ctx *c, json_t *e, struct cat_gpu *g)
{
	json_t *arr = json_object_get(e, "aliases"); /* optional */
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return fail(c, "aliases", "must be an array of strings");
	if (json_array_size(arr) > sizeof(g->aliases) / sizeof(g->aliases[0]))
		return fail(c, "aliases", "has more than %zu names", sizeof(g->aliases) / sizeof(g->aliases[0]));
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		if (!s || !*s || strlen(s) >= sizeof(g->aliases[0]))
			return fail(c, "aliases", "must hold non-empty names under %zu characters", sizeof(g->aliases[0]));
		strcpy(g->aliases[i], s);
	}
	g->n_aliases = (unsigned)i;
	return 0;
}

static int parse_entry(json_t *e, size_t index, struct cat_gpu *g, char *err, size_t errlen)
{
	static const char *const keys[] = { "key", "vendor_name", "aliases", "architecture", "compute_capability",
		"form_factor", "sm_count", "cuda_cores", "memory", "clocks", "tflops", "nvlink", "pcie", "tdp_w",
		"l2_mb", "mig_memory_slices", "mig", "source", "notes", NULL };
	char idx[24];
	snprintf(idx, sizeof(idx), "#%zu", index);
	struct entry_ctx c = { idx, err, errlen };
	memset(g, 0, sizeof(*g));
	if (!json_is_object(e))
		return fail(&c, "(entry)", "must be an object");
	if (get_str(&c, e, "", "key", g->key, sizeof(g->key), false))
		return -1;
	c.name = g->key;
	if (check_keys(&c, e, "", keys) ||
	    get_str(&c, e, "", "vendor_name", g->vendor_name, sizeof(g->vendor_name), false) ||
	    parse_aliases(&c, e, g) ||
	    get_str(&c, e, "", "architecture", g->architecture, sizeof(g->architecture), false) ||
	    parse_cc(&c, e, g) ||
	    get_str(&c, e, "", "form_factor", g->form_factor, sizeof(g->form_factor), false) ||
	    get_uint(&c, e, "", "sm_count", &g->sm_count, false, 1024) ||
	    get_uint(&c, e, "", "cuda_cores", &g->cuda_cores, false, 1u << 20) ||
	    parse_memory(&c, e, g) || parse_tflops(&c, e, g) || parse_links(&c, e, g) ||
	    get_num(&c, e, "", "tdp_w", &g->tdp_w, false) ||
	    get_num(&c, e, "", "l2_mb", &g->l2_mb, true) ||
	    parse_mig(&c, e, g) ||
	    get_str(&c, e, "", "source", g->source, sizeof(g->source), false) ||
	    get_str(&c, e, "", "notes", g->notes, sizeof(g->notes), true))
		return -1;
	if (g->sm_count == 0 || g->cuda_cores == 0)
		return fail(&c, g->sm_count == 0 ? "sm_count" : "cuda_cores", "must be above 0");
	return 0;
}

int catalog_parse(struct catalog *cat, const char *json_text, size_t len, char *err, size_t errlen)
{
	memset(cat, 0, sizeof(*cat));
	json_error_t jerr;
	json_t *root = json_loadb(json_text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "catalog: invalid JSON at line %d: %s", jerr.line, jerr.text);
		return -1;
	}
	int rc = -1;
	json_t *gpus = json_is_object(root) ? json_object_get(root, "gpus") : NULL;
	json_t *schema = json_is_object(root) ? json_object_get(root, "schema") : NULL;
	if (!json_is_array(gpus)) {
		snprintf(err, errlen, "catalog: missing array 'gpus'");
		goto out;
	}
	if (!json_is_integer(schema) || json_integer_value(schema) != 1) {
		snprintf(err, errlen, "catalog: field 'schema' must be 1");
		goto out;
	}
	size_t n = json_array_size(gpus);
	if (n == 0 || n > CATALOG_MAX_GPUS) {
		snprintf(err, errlen, "catalog: 'gpus' must hold 1 to %d entries, not %zu", CATALOG_MAX_GPUS, n);
		goto out;
	}
	cat->gpus = calloc(n, sizeof(*cat->gpus));
	if (!cat->gpus) {
		snprintf(err, errlen, "catalog: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_entry(json_array_get(gpus, i), i, &cat->gpus[i], err, errlen))
			goto out;
		for (size_t j = 0; j < i; j++)
			if (strcasecmp(cat->gpus[j].key, cat->gpus[i].key) == 0) {
				snprintf(err, errlen, "catalog entry '%s': field 'key' repeats an earlier entry", cat->gpus[i].key);
				goto out;
			}
		cat->n = i + 1;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		catalog_free(cat);
	return rc;
}

/* catalog_parse, with the file's name in front of the parser's message */
static int parse_named(struct catalog *cat, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	int rc = catalog_parse(cat, text, len, err, errlen);
	if (rc) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "'%s': %s", name, msg);
	}
	return rc;
}

int catalog_load(struct catalog *cat, const char *path, char *err, size_t errlen)
{
	size_t len;
	char *text = read_whole_file(path, CATALOG_MAX_BYTES, &len, err, errlen);
	if (!text) {
		memset(cat, 0, sizeof(*cat));
		return -1;
	}
	int rc = parse_named(cat, path, text, len, err, errlen);
	free(text);
	return rc;
}

int catalog_load_default(struct catalog *cat, char *err, size_t errlen)
{
	return catalog_load_dir(cat, NULL, err, errlen);
}

int catalog_load_dir(struct catalog *cat, const char *data_dir, char *err, size_t errlen)
{
	struct data_file f;
	if (data_file_read(data_dir, "catalog/gpus.json", CATALOG_MAX_BYTES, &f, err, errlen) != DATA_OK) {
		memset(cat, 0, sizeof(*cat));
		return -1;
	}
	int rc = parse_named(cat, f.name, f.text, f.len, err, errlen);
	data_file_free(&f);
	return rc;
}

void catalog_free(struct catalog *cat)
{
	free(cat->gpus);
	cat->gpus = NULL;
	cat->n = 0;
}

const struct cat_gpu *catalog_find(const struct catalog *cat, const char *key)
{
	for (size_t i = 0; key && i < cat->n; i++)
		if (strcasecmp(cat->gpus[i].key, key) == 0)
			return &cat->gpus[i];
	return NULL;
}

const struct cat_mig_profile *catalog_mig_profile(const struct cat_gpu *g, const char *name)
{
	if (!g || !name)
		return NULL;
	if (strncasecmp(name, "MIG ", 4) == 0)
		name += 4;
	for (unsigned i = 0; i < g->mig_n; i++)
		if (strcasecmp(g->mig[i].name, name) == 0)
			return &g->mig[i];
	return NULL;
}

/*
 * Reduces a driver name to the words that tell models apart:
 * "NVIDIA A100-SXM4-80GB" -> "a100 sxm4", "Tesla V100-SXM2-16GB" -> "v100 sxm2".
 * Vendor words and memory sizes go; the size is compared separately.
 */
static void name_family(const char *in, char *out, size_t outlen)
{
	char buf[128];
	size_t n = 0;
	for (const char *p = in; *p && n + 1 < sizeof(buf); p++)
		buf[n++] = (*p == '-' || *p == '_') ? ' ' : (char)tolower((unsigned char)*p);
	buf[n] = '\0';
	size_t o = 0;
	out[0] = '\0';
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "nvidia") || !strcmp(w, "tesla") || !strcmp(w, "geforce"))
			continue;
		size_t d = strspn(w, "0123456789");
		if (d > 0 && !strcmp(w + d, "gb"))
			continue;
		int k = snprintf(out + o, outlen - o, "%s%s", o ? " " : "", w);
		if (k < 0 || (size_t)k >= outlen - o)
			break;
		o += (size_t)k;
	}
}

static uint64_t mem_distance(const struct cat_gpu *g, uint64_t mem_bytes)
{
	return g->mem_bytes > mem_bytes ? g->mem_bytes - mem_bytes : mem_bytes - g->mem_bytes;
}

/* Among entries accepted by `same`, the one whose memory is nearest mem_bytes (0: the first). */
static const struct cat_gpu *nearest(const struct catalog *cat, uint64_t mem_bytes, const char *name,
				     bool (*same)(const struct cat_gpu *, const char *))
{
	const struct cat_gpu *best = NULL;
	for (size_t i = 0; i < cat->n; i++) {
		const struct cat_gpu *g = &cat->gpus[i];
		if (!same(g, name))
			continue;
		if (!best || (mem_bytes && mem_distance(g, mem_bytes) < mem_distance(best, mem_bytes)))
			best = g;
	}
	return best;
}

static bool same_name(const struct cat_gpu *g, const char *name)
{
	if (strcasecmp(g->vendor_name, name) == 0)
		return true;
	for (unsigned a = 0; a < g->n_aliases; a++)
		if (strcasecmp(g->aliases[a], name) == 0)
			return true;
	return false;
}

static bool same_family(const struct cat_gpu *g, const char *family)
{
	char f[128];
	name_family(g->vendor_name, f, sizeof(f));
	if (strcmp(f, family) == 0)
		return true;
	for (unsigned a = 0; a < g->n_aliases; a++) {
		name_family(g->aliases[a], f, sizeof(f));
		if (strcmp(f, family) == 0)
			return true;
	}
	return false;
}

const struct cat_gpu *catalog_match(const struct catalog *cat, const char *driver_name, uint64_t mem_bytes)
{
	if (!cat || !driver_name || !*driver_name)
		return NULL;
	const struct cat_gpu *g = nearest(cat, mem_bytes, driver_name, same_name);
	if (g)
		return g;
	char family[128];
	name_family(driver_name, family, sizeof(family));
	if (!family[0])
		return NULL;
	return nearest(cat, mem_bytes, family, same_family);
}
