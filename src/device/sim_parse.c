/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_parse.c - the simulated-server file and the fault list, from JSON
 * bytes into struct sim_server / struct sim_fault. Pure: no I/O, no catalog
 * (sim_server.c resolves models). Every problem is one line naming the file
 * and the field: "sim file 'x.json': gpus[2].power_limit_w: expected a number".
 * Unknown fields are errors, so that a typo does not silently do nothing.
 * The format is documented in docs/simulator.md.
 */
#include "sim.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpulist.h"

static const char *const fault_kind_names[SIM_FAULT_KIND_COUNT] = {
	[SIM_FAULT_NONE] = "none",
	[SIM_FAULT_ECC_UNCORRECTABLE] = "ecc_uncorrectable",
	[SIM_FAULT_ECC_CORRECTED] = "ecc_corrected",
	[SIM_FAULT_XID] = "xid",
	[SIM_FAULT_THERMAL] = "thermal",
	[SIM_FAULT_POWER] = "power",
	[SIM_FAULT_PCIE_DEGRADED] = "pcie_degraded",
	[SIM_FAULT_NVLINK_DOWN] = "nvlink_down",
	[SIM_FAULT_NVLINK_ERRORS] = "nvlink_errors",
	[SIM_FAULT_GPU_LOST] = "gpu_lost",
	[SIM_FAULT_REMAP_PENDING] = "remap_pending",
	[SIM_FAULT_REMAP_FAILURE] = "remap_failure",
	[SIM_FAULT_RETIRED_PAGES] = "retired_pages",
	[SIM_FAULT_PERSISTENCE_OFF] = "persistence_off",
	[SIM_FAULT_FOREIGN_PROCESS] = "foreign_process",
	[SIM_FAULT_HANG] = "hang",
};

const char *sim_fault_kind_name(enum sim_fault_kind k)
{
	return (unsigned)k < SIM_FAULT_KIND_COUNT ? fault_kind_names[k] : "none";
}

enum sim_fault_kind sim_fault_kind_parse(const char *name)
{
	for (unsigned k = 1; k < SIM_FAULT_KIND_COUNT; k++)
		if (strcmp(name, fault_kind_names[k]) == 0)
			return (enum sim_fault_kind)k;
	return SIM_FAULT_NONE;
}

/* ---- field readers: each returns 0 or GPU_EDATA with the message set ---- */

struct pctx {
	const char *what; /* "sim file" or "fault file" */
	const char *origin;
	struct gpu_err *err;
};

/* snprintf for field paths: a path cut short in a message is harmless. */
static void fieldf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fieldf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

/* One line whatever the file holds: a key or value quoted in a message, or
 * the text jansson quotes near an error, may hold a control character ("k\nd"
 * is a valid JSON key). */
static void one_line(struct gpu_err *err)
{
	for (char *c = err->msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

static int fail(const struct pctx *p, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const struct pctx *p, const char *field, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpu_err_set(p->err, "%s '%s': %s: %s", p->what, p->origin, field, msg);
	one_line(p->err);
	return GPU_EDATA;
}

static int rd_str(const struct pctx *p, const json_t *v, const char *field, char *dst, size_t n)
{
	if (!json_is_string(v))
		return fail(p, field, "expected a string");
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	if (len >= n)
		return fail(p, field, "longer than %zu characters", n - 1);
	if (strlen(s) != len)
		return fail(p, field, "contains a NUL character");
	memcpy(dst, s, len + 1);
	return 0;
}

static int rd_num(const struct pctx *p, const json_t *v, const char *field, double *out, double min, double max)
{
	if (!json_is_number(v))
		return fail(p, field, "expected a number");
	double d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max)
		return fail(p, field, "%g is out of range [%g, %g]", d, min, max);
	*out = d;
	return 0;
}

static int rd_uint(const struct pctx *p, const json_t *v, const char *field, uint64_t *out, uint64_t max)
{
	if (!json_is_integer(v))
		return fail(p, field, "expected a whole number");
	json_int_t i = json_integer_value(v);
	if (i < 0 || (uint64_t)i > max)
		return fail(p, field, "%lld is out of range [0, %llu]", (long long)i, (unsigned long long)max);
	*out = (uint64_t)i;
	return 0;
}

static int rd_u32(const struct pctx *p, const json_t *v, const char *field, unsigned *out, unsigned max)
{
	uint64_t x = 0; /* gcc -O2 cannot see that rd_uint sets it whenever rc == 0 */
	int rc = rd_uint(p, v, field, &x, max);
	if (rc == 0)
		*out = (unsigned)x;
	return rc;
}

static int rd_tri(const struct pctx *p, const json_t *v, const char *field, enum sim_tri *out)
{
	if (!json_is_boolean(v))
		return fail(p, field, "expected true or false");
	*out = json_is_true(v) ? SIM_YES : SIM_NO;
	return 0;
}

/* Rejects keys outside `known` (a NULL-terminated list). */
static int check_keys(const struct pctx *p, const json_t *obj, const char *where, const char *const *known)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)obj, key, val) {
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(key, *k) == 0;
		if (!ok) {
			char field[160];
			fieldf(field, sizeof(field), "%s%s%s", where, *where ? "." : "", key);
			return fail(p, field, "unknown field");
		}
	}
	return 0;
}

/* Bus ids as NVML prints them: "00000000:18:00.0" (domain:bus:device.function, hex). */
/* A PCI path below /sys/devices ("pci0000:17/0000:17:01.0/.../0000:18:00.0"):
 * what nic_path_class() can place (a root complex and a device). */
static int rd_pci_path(const struct pctx *p, const json_t *v, const char *field, char *dst)
{
	int rc = rd_str(p, v, field, dst, NIC_PATH_LEN);
	if (!rc && (strncmp(dst, "pci", 3) || nic_path_class(dst, 0, dst, 0) == LINK_UNKNOWN))
		rc = fail(p, field, "'%s' is not a PCI path like \"pci0000:17/0000:17:01.0/0000:18:00.0\"", dst);
	return rc;
}

static bool valid_bus_id(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;
	return sscanf(s, "%8x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) == 4 && strlen(s) >= 12;
}

/* ---- faults ---- */

static int parse_fault(const struct pctx *p, const json_t *o, const char *where, struct sim_fault *f)
{
	static const char *const keys[] = { "kind", "gpu", "at_s", "duration_s", "count", "xid", "location",
		"link", "rate_per_s", "gen", "width", "temp_c", "sbe", "dbe", "pid", "name", "user",
		"mem_mib", "comment", NULL };
	char field[160];
	int rc;
	if (!json_is_object(o))
		return fail(p, where, "expected an object");
	if ((rc = check_keys(p, o, where, keys)))
		return rc;
	memset(f, 0, sizeof(*f));
	f->link = -1;
	json_t *v = json_object_get(o, "kind");
	fieldf(field, sizeof(field), "%s.kind", where);
	char kind[32];
	if (!v)
		return fail(p, field, "missing");
	if ((rc = rd_str(p, v, field, kind, sizeof(kind))))
		return rc;
	f->kind = sim_fault_kind_parse(kind);
	if (f->kind == SIM_FAULT_NONE)
		return fail(p, field, "unknown fault kind '%s'", kind);
	fieldf(field, sizeof(field), "%s.gpu", where);
	if (!(v = json_object_get(o, "gpu")))
		return fail(p, field, "missing");
	if ((rc = rd_u32(p, v, field, &f->gpu, GPU_MAX_GPUS - 1)))
		return rc;

	const char *key;
	json_object_foreach((json_t *)o, key, v) {
		fieldf(field, sizeof(field), "%s.%s", where, key);
		uint64_t u = 0;
		double d = 0;
		rc = 0;
		if (!strcmp(key, "at_s"))
			rc = rd_num(p, v, field, &f->at_s, 0, 1e9);
		else if (!strcmp(key, "duration_s"))
			rc = rd_num(p, v, field, &f->duration_s, 0, 1e9);
		else if (!strcmp(key, "count"))
			rc = rd_uint(p, v, field, &f->count, 1000000000ull);
		else if (!strcmp(key, "xid"))
			rc = rd_uint(p, v, field, &f->xid, 100000);
		else if (!strcmp(key, "location")) {
			char loc[8];
			if (!(rc = rd_str(p, v, field, loc, sizeof(loc)))) {
				if (!strcmp(loc, "dram"))
					f->location = SIM_LOC_DRAM;
				else if (!strcmp(loc, "sram"))
					f->location = SIM_LOC_SRAM;
				else
					rc = fail(p, field, "expected \"dram\" or \"sram\"");
			}
		} else if (!strcmp(key, "link")) {
			if (!(rc = rd_num(p, v, field, &d, -1, GPU_MAX_NVLINKS - 1)))
				f->link = (int)d;
			if (!rc && d != (double)f->link)
				rc = fail(p, field, "expected a whole number");
		} else if (!strcmp(key, "rate_per_s"))
			rc = rd_num(p, v, field, &f->rate_per_s, 0, 1e9);
		else if (!strcmp(key, "gen"))
			rc = rd_u32(p, v, field, &f->gen, 6);
		else if (!strcmp(key, "width"))
			rc = rd_u32(p, v, field, &f->width, 32);
		else if (!strcmp(key, "temp_c"))
			rc = rd_u32(p, v, field, &f->temp_c, 150);
		else if (!strcmp(key, "sbe"))
			rc = rd_uint(p, v, field, &f->sbe, 100000);
		else if (!strcmp(key, "dbe"))
			rc = rd_uint(p, v, field, &f->dbe, 100000);
		else if (!strcmp(key, "pid")) {
			if (!(rc = rd_uint(p, v, field, &u, 4194304)))
				f->pid = (uint32_t)u;
		} else if (!strcmp(key, "name"))
			rc = rd_str(p, v, field, f->name, sizeof(f->name));
		else if (!strcmp(key, "user"))
			rc = rd_str(p, v, field, f->user, sizeof(f->user));
		else if (!strcmp(key, "mem_mib")) {
			if (!(rc = rd_uint(p, v, field, &u, 1u << 24)))
				f->mem_bytes = u << 20;
		}
		if (rc)
			return rc;
	}
	if (f->kind == SIM_FAULT_XID && f->xid == 0) {
		fieldf(field, sizeof(field), "%s.xid", where);
		return fail(p, field, "an xid fault needs its code (1 or more)");
	}
	return 0;
}

static int parse_fault_array(const struct pctx *p, const json_t *arr, const char *where, struct sim_fault *out,
			     unsigned max, unsigned *n)
{
	if (!json_is_array(arr))
		return fail(p, where, "expected an array");
	if (json_array_size(arr) > max)
		return fail(p, where, "more than %u faults", max);
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		char field[64];
		fieldf(field, sizeof(field), "%s[%zu]", where, i);
		int rc = parse_fault(p, v, field, &out[i]);
		if (rc)
			return rc;
	}
	*n = (unsigned)json_array_size(arr);
	return 0;
}

static json_t *load_json(const struct pctx *p, const char *buf, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		gpu_err_set(p->err, "%s '%s': line %d: %s", p->what, p->origin, je.line, je.text);
		one_line(p->err);
	}
	return root;
}

int sim_faults_parse(const char *buf, size_t len, const char *origin, struct sim_fault *out, unsigned max,
		     struct gpu_err *err)
{
	struct pctx p = { "fault file", origin, err };
	json_t *root = load_json(&p, buf, len);
	if (!root)
		return GPU_EDATA;
	unsigned n = 0;
	int rc;
	if (json_is_object(root)) {
		static const char *const keys[] = { "faults", "comment", NULL };
		json_t *arr = json_object_get(root, "faults");
		rc = check_keys(&p, root, "", keys);
		if (!rc && !arr)
			rc = fail(&p, "faults", "missing");
		if (!rc)
			rc = parse_fault_array(&p, arr, "faults", out, max, &n);
	} else {
		rc = parse_fault_array(&p, root, "faults", out, max, &n);
	}
	json_decref(root);
	return rc ? rc : (int)n;
}

/* ---- GPUs ---- */

static int parse_load(const struct pctx *p, const json_t *v, const char *where, struct sim_gpu_desc *g)
{
	char field[160];
	int rc;
	if (json_is_number(v)) {
		g->nload = 1;
		g->load[0].t_s = 0;
		return rd_num(p, v, where, &g->load[0].util_pct, 0, 100);
	}
	if (!json_is_array(v))
		return fail(p, where, "expected a utilization in percent or an array of {t_s, util_pct}");
	if (json_array_size(v) > SIM_MAX_LOAD_STEPS)
		return fail(p, where, "more than %d steps", SIM_MAX_LOAD_STEPS);
	size_t i;
	json_t *s;
	json_array_foreach(v, i, s) {
		static const char *const keys[] = { "t_s", "util_pct", NULL };
		fieldf(field, sizeof(field), "%s[%zu]", where, i);
		if (!json_is_object(s))
			return fail(p, field, "expected an object {t_s, util_pct}");
		if ((rc = check_keys(p, s, field, keys)))
			return rc;
		json_t *t = json_object_get(s, "t_s"), *u = json_object_get(s, "util_pct");
		if (!t || !u)
			return fail(p, field, "needs both t_s and util_pct");
		fieldf(field, sizeof(field), "%s[%zu].t_s", where, i);
		if ((rc = rd_num(p, t, field, &g->load[i].t_s, 0, 1e9)))
			return rc;
		if (i > 0 && g->load[i].t_s < g->load[i - 1].t_s)
			return fail(p, field, "steps must be in time order");
		fieldf(field, sizeof(field), "%s[%zu].util_pct", where, i);
		if ((rc = rd_num(p, u, field, &g->load[i].util_pct, 0, 100)))
			return rc;
	}
	g->nload = (unsigned)json_array_size(v);
	return 0;
}

static int parse_proc(const struct pctx *p, const json_t *o, const char *where, struct sim_proc_desc *pr)
{
	static const char *const keys[] = { "pid", "uid", "user", "name", "mem_mib", "leak_mib_per_s", "type",
		"mig_gi", "comment", NULL };
	char field[160];
	int rc;
	if (!json_is_object(o))
		return fail(p, where, "expected an object");
	if ((rc = check_keys(p, o, where, keys)))
		return rc;
	pr->uid = UINT32_MAX;
	pr->type = 'C';
	pr->mig_gi = -1;
	snprintf(pr->user, sizeof(pr->user), "root");
	snprintf(pr->name, sizeof(pr->name), "python3");
	const char *key;
	json_t *v;
	bool have_pid = false;
	json_object_foreach((json_t *)o, key, v) {
		fieldf(field, sizeof(field), "%s.%s", where, key);
		uint64_t u = 0;
		double d = 0;
		rc = 0;
		if (!strcmp(key, "pid")) {
			if (!(rc = rd_uint(p, v, field, &u, 4194304)))
				pr->pid = (uint32_t)u;
			have_pid = u > 0;
		} else if (!strcmp(key, "uid")) {
			if (!(rc = rd_uint(p, v, field, &u, UINT32_MAX - 1)))
				pr->uid = (uint32_t)u;
		} else if (!strcmp(key, "user"))
			rc = rd_str(p, v, field, pr->user, sizeof(pr->user));
		else if (!strcmp(key, "name"))
			rc = rd_str(p, v, field, pr->name, sizeof(pr->name));
		else if (!strcmp(key, "mem_mib")) {
			if (!(rc = rd_uint(p, v, field, &u, 1u << 24)))
				pr->mem_bytes = u << 20;
		} else if (!strcmp(key, "leak_mib_per_s")) {
			if (!(rc = rd_num(p, v, field, &d, 0, 1e6)))
				pr->leak_bytes_per_s = d * 1048576.0;
		} else if (!strcmp(key, "type")) {
			char t[4];
			if (!(rc = rd_str(p, v, field, t, sizeof(t)))) {
				if (strcmp(t, "C") && strcmp(t, "G"))
					rc = fail(p, field, "expected \"C\" (compute) or \"G\" (graphics)");
				pr->type = t[0];
			}
		} else if (!strcmp(key, "mig_gi")) {
			if (!(rc = rd_uint(p, v, field, &u, 64)))
				pr->mig_gi = (int)u;
		}
		if (rc)
			return rc;
	}
	if (!have_pid) {
		fieldf(field, sizeof(field), "%s.pid", where);
		return fail(p, field, "missing (a process needs a pid of 1 or more)");
	}
	return 0;
}

/* A workload's name: gemm, memory-bound, idle-allocated or dataloader-starved. */
static int rd_workload(const struct pctx *p, const json_t *v, const char *field, enum sim_workload *out)
{
	char w[32] = "";
	int rc;
	int wl = (rc = rd_str(p, v, field, w, sizeof(w))) ? 0 : sim_workload_parse(w);
	if (wl < 0)
		rc = fail(p, field, "'%s' is not gemm, memory-bound, idle-allocated or dataloader-starved", w);
	*out = (enum sim_workload)(wl > 0 ? wl : 0);
	return rc;
}

static int parse_mig(const struct pctx *p, const json_t *arr, const char *where, struct sim_gpu_desc *g)
{
	char field[160];
	int rc;
	if (!json_is_array(arr))
		return fail(p, where, "expected an array");
	if (json_array_size(arr) > GPU_MAX_MIG)
		return fail(p, where, "more than %d instances", GPU_MAX_MIG);
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		static const char *const keys[] = { "profile", "gi_id", "ci_id", "uuid", "workload", NULL };
		struct sim_mig_desc *m = &g->mig_inst[i];
		fieldf(field, sizeof(field), "%s[%zu]", where, i);
		if (!json_is_object(o))
			return fail(p, field, "expected an object");
		if ((rc = check_keys(p, o, field, keys)))
			return rc;
		json_t *v;
		fieldf(field, sizeof(field), "%s[%zu].profile", where, i);
		if (!(v = json_object_get(o, "profile")))
			return fail(p, field, "missing");
		if ((rc = rd_str(p, v, field, m->profile, sizeof(m->profile))))
			return rc;
		fieldf(field, sizeof(field), "%s[%zu].gi_id", where, i);
		if (!(v = json_object_get(o, "gi_id")))
			return fail(p, field, "missing");
		if ((rc = rd_u32(p, v, field, &m->gi_id, 64)))
			return rc;
		for (size_t k = 0; k < i; k++)
			if (g->mig_inst[k].gi_id == m->gi_id)
				return fail(p, field, "GPU instance %u listed twice", m->gi_id);
		fieldf(field, sizeof(field), "%s[%zu].ci_id", where, i);
		if ((v = json_object_get(o, "ci_id")) && (rc = rd_u32(p, v, field, &m->ci_id, 64)))
			return rc;
		fieldf(field, sizeof(field), "%s[%zu].uuid", where, i);
		if ((v = json_object_get(o, "uuid")) && (rc = rd_str(p, v, field, m->uuid, sizeof(m->uuid))))
			return rc;
		if (m->uuid[0] && strncmp(m->uuid, "MIG-", 4) != 0)
			return fail(p, field, "a MIG UUID starts with \"MIG-\"");
		fieldf(field, sizeof(field), "%s[%zu].workload", where, i);
		if ((v = json_object_get(o, "workload")) && (rc = rd_workload(p, v, field, &m->workload)))
			return rc;
	}
	g->nmig = (unsigned)json_array_size(arr);
	return 0;
}

static int parse_gpu(const struct pctx *p, const json_t *o, const char *where, struct sim_gpu_desc *g)
{
	static const char *const keys[] = { "model", "bus_id", "uuid", "serial", "vbios", "board_part_number",
		"numa_node", "power_limit_w", "persistence", "ecc", "mig", "fan", "idle_power_w", "idle_temp_c",
		"load_temp_c", "temp_slowdown_c", "temp_shutdown_c", "load", "load_period_s", "mig_instances",
		"processes", "workload", "pci_path", "comment", NULL };
	char field[160];
	int rc;
	if (!json_is_object(o))
		return fail(p, where, "expected an object");
	if ((rc = check_keys(p, o, where, keys)))
		return rc;
	g->numa_node = -1;
	fieldf(field, sizeof(field), "%s.model", where);
	json_t *v = json_object_get(o, "model");
	if (!v)
		return fail(p, field, "missing (a GPU catalog key such as \"H200 SXM\")");
	const char *key;
	json_object_foreach((json_t *)o, key, v) {
		fieldf(field, sizeof(field), "%s.%s", where, key);
		double d = 0;
		rc = 0;
		if (!strcmp(key, "model"))
			rc = rd_str(p, v, field, g->model, sizeof(g->model));
		else if (!strcmp(key, "bus_id")) {
			if (!(rc = rd_str(p, v, field, g->bus_id, sizeof(g->bus_id))) && !valid_bus_id(g->bus_id))
				rc = fail(p, field, "'%s' is not a PCI bus id like \"00000000:18:00.0\"", g->bus_id);
		} else if (!strcmp(key, "uuid")) {
			if (!(rc = rd_str(p, v, field, g->uuid, sizeof(g->uuid))) && strncmp(g->uuid, "GPU-", 4))
				rc = fail(p, field, "a GPU UUID starts with \"GPU-\"");
		} else if (!strcmp(key, "serial"))
			rc = rd_str(p, v, field, g->serial, sizeof(g->serial));
		else if (!strcmp(key, "vbios"))
			rc = rd_str(p, v, field, g->vbios, sizeof(g->vbios));
		else if (!strcmp(key, "pci_path"))
			rc = rd_pci_path(p, v, field, g->pci_path);
		else if (!strcmp(key, "board_part_number"))
			rc = rd_str(p, v, field, g->board_part, sizeof(g->board_part));
		else if (!strcmp(key, "numa_node")) {
			if (!(rc = rd_num(p, v, field, &d, -1, 63)))
				g->numa_node = (int)d;
		} else if (!strcmp(key, "power_limit_w"))
			rc = rd_num(p, v, field, &g->power_limit_w, 10, 2000);
		else if (!strcmp(key, "persistence"))
			rc = rd_tri(p, v, field, &g->persistence);
		else if (!strcmp(key, "ecc"))
			rc = rd_tri(p, v, field, &g->ecc);
		else if (!strcmp(key, "mig"))
			rc = rd_tri(p, v, field, &g->mig);
		else if (!strcmp(key, "fan"))
			rc = rd_tri(p, v, field, &g->fan);
		else if (!strcmp(key, "idle_power_w"))
			rc = rd_num(p, v, field, &g->idle_power_w, 1, 2000);
		else if (!strcmp(key, "idle_temp_c"))
			rc = rd_num(p, v, field, &g->idle_temp_c, 5, 120);
		else if (!strcmp(key, "load_temp_c"))
			rc = rd_num(p, v, field, &g->load_temp_c, 5, 120);
		else if (!strcmp(key, "temp_slowdown_c"))
			rc = rd_u32(p, v, field, &g->temp_slowdown_c, 150);
		else if (!strcmp(key, "temp_shutdown_c"))
			rc = rd_u32(p, v, field, &g->temp_shutdown_c, 150);
		else if (!strcmp(key, "load"))
			rc = parse_load(p, v, field, g);
		else if (!strcmp(key, "load_period_s"))
			rc = rd_num(p, v, field, &g->load_period_s, 1, 1e9);
		else if (!strcmp(key, "mig_instances"))
			rc = parse_mig(p, v, field, g);
		else if (!strcmp(key, "workload"))
			rc = rd_workload(p, v, field, &g->workload);
		else if (!strcmp(key, "processes")) {
			if (!json_is_array(v))
				rc = fail(p, field, "expected an array");
			else if (json_array_size(v) > SIM_MAX_PROCS)
				rc = fail(p, field, "more than %d processes", SIM_MAX_PROCS);
			size_t i;
			json_t *pv;
			json_array_foreach(v, i, pv) {
				if (rc)
					break;
				char pf[160];
				fieldf(pf, sizeof(pf), "%s[%zu]", field, i);
				rc = parse_proc(p, pv, pf, &g->procs[i]);
				g->nproc = (unsigned)i + 1;
			}
		}
		if (rc)
			return rc;
	}
	if (!isnan(g->load_period_s) && g->load_period_s > 0)
		for (unsigned i = 0; i < g->nload; i++)
			if (g->load[i].t_s >= g->load_period_s) {
				fieldf(field, sizeof(field), "%s.load[%u].t_s", where, i);
				return fail(p, field, "%g s is not within load_period_s (%g s)", g->load[i].t_s,
					    g->load_period_s);
			}
	return 0;
}

/* ---- topology ---- */

static int parse_link_name(const char *s, unsigned *nv, enum gpu_link_kind *k)
{
	static const struct { const char *name; enum gpu_link_kind k; } names[] = {
		{ "X", LINK_SELF }, { "PIX", LINK_PIX }, { "PXB", LINK_PXB }, { "PHB", LINK_PHB },
		{ "NODE", LINK_NODE }, { "SYS", LINK_SYS },
	};
	*nv = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*k = names[i].k;
			return 0;
		}
	unsigned n;
	char tail;
	if (sscanf(s, "NV%u%c", &n, &tail) == 1 && n >= 1 && n <= GPU_MAX_NVLINKS && s[2] >= '1' && s[2] <= '9') {
		*nv = n;
		*k = LINK_NVLINK;
		return 0;
	}
	return -1;
}

/* Reads an n x n matrix of nvidia-smi topo -m names into nvlinks/pcie.
 * pcie_only: the PCIe path matrix (no NV# entries). */
static int parse_matrix(const struct pctx *p, const json_t *m, const char *where, bool pcie_only, struct sim_server *srv)
{
	char field[64];
	int rc;
	if (!json_is_array(m) || json_array_size(m) != srv->ngpu)
		return fail(p, where, "expected %u rows, one per GPU", srv->ngpu);
	for (unsigned a = 0; a < srv->ngpu; a++) {
		json_t *row = json_array_get(m, a);
		fieldf(field, sizeof(field), "%s[%u]", where, a);
		if (!json_is_array(row) || json_array_size(row) != srv->ngpu)
			return fail(p, field, "expected %u entries, one per GPU", srv->ngpu);
		for (unsigned b = 0; b < srv->ngpu; b++) {
			fieldf(field, sizeof(field), "%s[%u][%u]", where, a, b);
			char s[8];
			enum gpu_link_kind k;
			unsigned nv;
			if ((rc = rd_str(p, json_array_get(row, b), field, s, sizeof(s))))
				return rc;
			if (parse_link_name(s, &nv, &k) || (pcie_only && k == LINK_NVLINK))
				return fail(p, field, "'%s' is not one of X, %sPIX, PXB, PHB, NODE, SYS", s,
					    pcie_only ? "" : "NV#, ");
			if ((a == b) != (k == LINK_SELF))
				return fail(p, field, "X belongs on the diagonal, and only there");
			if (!pcie_only)
				srv->nvlinks[a][b] = nv;
			if (k != LINK_NVLINK)
				srv->pcie[a][b] = k;
		}
	}
	for (unsigned a = 0; a < srv->ngpu; a++)
		for (unsigned b = 0; b < a; b++)
			if (srv->nvlinks[a][b] != srv->nvlinks[b][a] || srv->pcie[a][b] != srv->pcie[b][a]) {
				fieldf(field, sizeof(field), "%s[%u][%u]", where, a, b);
				return fail(p, field, "differs from [%u][%u]: the matrix must be symmetric", b, a);
			}
	return 0;
}

static int parse_topology(const struct pctx *p, const json_t *o, struct sim_server *srv)
{
	static const char *const keys[] = { "nvlink_all_pairs", "matrix", "pcie_matrix", "p2p_pcie", "comment", NULL };
	int rc;
	if (!json_is_object(o))
		return fail(p, "topology", "expected an object");
	if ((rc = check_keys(p, o, "topology", keys)))
		return rc;
	json_t *all = json_object_get(o, "nvlink_all_pairs"), *m = json_object_get(o, "matrix");
	json_t *pm = json_object_get(o, "pcie_matrix"), *p2p = json_object_get(o, "p2p_pcie");
	if (all && m)
		return fail(p, "topology", "give either nvlink_all_pairs or matrix, not both");
	if (p2p) {
		if (!json_is_boolean(p2p))
			return fail(p, "topology.p2p_pcie", "expected true or false");
		srv->p2p_pcie = json_is_true(p2p);
	}
	if (all) {
		unsigned n;
		if ((rc = rd_u32(p, all, "topology.nvlink_all_pairs", &n, GPU_MAX_NVLINKS)))
			return rc;
		for (unsigned a = 0; a < srv->ngpu; a++)
			for (unsigned b = 0; b < srv->ngpu; b++)
				srv->nvlinks[a][b] = a == b ? 0 : n;
	}
	if (m && (rc = parse_matrix(p, m, "topology.matrix", false, srv)))
		return rc;
	if (pm && (rc = parse_matrix(p, pm, "topology.pcie_matrix", true, srv)))
		return rc;
	return 0;
}

/* ---- the server ---- */

static int parse_numa(const struct pctx *p, const json_t *arr, struct sim_server *srv)
{
	if (!json_is_array(arr))
		return fail(p, "numa_nodes", "expected an array");
	if (json_array_size(arr) > SIM_MAX_NUMA)
		return fail(p, "numa_nodes", "more than %d nodes", SIM_MAX_NUMA);
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		static const char *const keys[] = { "id", "cpus", NULL };
		char field[64];
		int rc;
		fieldf(field, sizeof(field), "numa_nodes[%zu]", i);
		if (!json_is_object(o))
			return fail(p, field, "expected an object {id, cpus}");
		if ((rc = check_keys(p, o, field, keys)))
			return rc;
		json_t *id = json_object_get(o, "id"), *cpus = json_object_get(o, "cpus");
		unsigned n;
		fieldf(field, sizeof(field), "numa_nodes[%zu].id", i);
		if (!id)
			return fail(p, field, "missing");
		if ((rc = rd_u32(p, id, field, &n, 63)))
			return rc;
		srv->numa[i].id = (int)n;
		fieldf(field, sizeof(field), "numa_nodes[%zu].cpus", i);
		if (!cpus)
			return fail(p, field, "missing");
		if ((rc = rd_str(p, cpus, field, srv->numa[i].cpus, sizeof(srv->numa[i].cpus))))
			return rc;
		char why[160];
		if (cpulist_parse(srv->numa[i].cpus, NULL, CPULIST_MAX_CPUS, why, sizeof(why)))
			return fail(p, field, "%s (a CPU list like \"0-55,112-167\", CPUs below %d)", why, CPULIST_MAX_CPUS);
	}
	srv->nnuma = (unsigned)json_array_size(arr);
	return 0;
}

static int parse_nics(const struct pctx *p, const json_t *arr, struct sim_server *srv)
{
	static const char *const keys[] = { "name", "pci_path", "numa_node", "comment", NULL };
	char where[32], field[64];
	int rc;
	if (!json_is_array(arr))
		return fail(p, "nics", "expected an array");
	if (json_array_size(arr) > NIC_MAX)
		return fail(p, "nics", "more than %d NICs", NIC_MAX);
	size_t i;
	const json_t *o;
	json_array_foreach(arr, i, o) {
		struct nic *n = &srv->nic[i];
		double d = -1;
		fieldf(where, sizeof(where), "nics[%zu]", i);
		if (!json_is_object(o))
			return fail(p, where, "expected an object");
		if ((rc = check_keys(p, o, where, keys)))
			return rc;
		const json_t *name = json_object_get(o, "name"), *path = json_object_get(o, "pci_path"),
			     *numa = json_object_get(o, "numa_node");
		if (!name || !path)
			return fail(p, where, "needs a name and a pci_path");
		fieldf(field, sizeof(field), "%s.name", where);
		if ((rc = rd_str(p, name, field, n->name, sizeof(n->name))))
			return rc;
		fieldf(field, sizeof(field), "%s.pci_path", where);
		if ((rc = rd_pci_path(p, path, field, n->pci_path)))
			return rc;
		fieldf(field, sizeof(field), "%s.numa_node", where);
		if (numa && (rc = rd_num(p, numa, field, &d, -1, 4095)))
			return rc;
		n->numa_node = (int)d;
	}
	srv->nnic = (unsigned)json_array_size(arr);
	return 0;
}

static int parse_server(const struct pctx *p, const json_t *root, struct sim_server *srv)
{
	static const char *const keys[] = { "name", "description", "comment", "hostname", "driver_version",
		"cuda_version", "nvml_version", "fabric_manager", "nvswitches", "numa_nodes", "gpus",
		"topology", "latency_us", "seed", "faults", "nics", NULL };
	int rc;
	if (!json_is_object(root))
		return fail(p, "(top level)", "expected an object");
	if ((rc = check_keys(p, root, "", keys)))
		return rc;
	json_t *v;
	if (!(v = json_object_get(root, "name")))
		return fail(p, "name", "missing");
	if ((rc = rd_str(p, v, "name", srv->name, sizeof(srv->name))))
		return rc;
	snprintf(srv->hostname, sizeof(srv->hostname), "%s", srv->name);
	snprintf(srv->driver, sizeof(srv->driver), "580.159.04");
	snprintf(srv->cuda, sizeof(srv->cuda), "13.0");
	snprintf(srv->nvml, sizeof(srv->nvml), "13.580.159.04");
	srv->p2p_pcie = true;
	srv->seed = 1;
	struct { const char *key; char *dst; size_t n; } strs[] = {
		{ "hostname", srv->hostname, sizeof(srv->hostname) },
		{ "driver_version", srv->driver, sizeof(srv->driver) },
		{ "cuda_version", srv->cuda, sizeof(srv->cuda) },
		{ "nvml_version", srv->nvml, sizeof(srv->nvml) },
	};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if ((v = json_object_get(root, strs[i].key)) && (rc = rd_str(p, v, strs[i].key, strs[i].dst, strs[i].n)))
			return rc;
	if ((v = json_object_get(root, "fabric_manager"))) {
		char fm[16];
		if ((rc = rd_str(p, v, "fabric_manager", fm, sizeof(fm))))
			return rc;
		if (!strcmp(fm, "running"))
			srv->fabric_manager = SIM_YES;
		else if (!strcmp(fm, "stopped"))
			srv->fabric_manager = SIM_NO;
		else
			return fail(p, "fabric_manager", "expected \"running\" or \"stopped\"");
	}
	if ((v = json_object_get(root, "nvswitches"))) {
		if (!json_is_array(v) || json_array_size(v) > SIM_MAX_SWITCHES)
			return fail(p, "nvswitches", "expected an array of at most %d PCI bus ids", SIM_MAX_SWITCHES);
		size_t i;
		json_t *s;
		json_array_foreach(v, i, s) {
			char field[32];
			fieldf(field, sizeof(field), "nvswitches[%zu]", i);
			if ((rc = rd_str(p, s, field, srv->switches[i], sizeof(srv->switches[i]))))
				return rc;
			if (!valid_bus_id(srv->switches[i]))
				return fail(p, field, "'%s' is not a PCI bus id", srv->switches[i]);
		}
		srv->nswitch = (unsigned)json_array_size(v);
	}
	if ((v = json_object_get(root, "nics")) && (rc = parse_nics(p, v, srv)))
		return rc;
	if ((v = json_object_get(root, "numa_nodes")) && (rc = parse_numa(p, v, srv)))
		return rc;
	if ((v = json_object_get(root, "latency_us")) && (rc = rd_uint(p, v, "latency_us", &srv->latency_us, 10000000)))
		return rc;
	if ((v = json_object_get(root, "seed")) && (rc = rd_uint(p, v, "seed", &srv->seed, UINT32_MAX)))
		return rc;

	if (!(v = json_object_get(root, "gpus")))
		return fail(p, "gpus", "missing");
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > GPU_MAX_GPUS)
		return fail(p, "gpus", "expected an array of 1 to %d GPUs", GPU_MAX_GPUS);
	srv->ngpu = (unsigned)json_array_size(v);
	for (unsigned a = 0; a < GPU_MAX_GPUS; a++)
		for (unsigned b = 0; b < GPU_MAX_GPUS; b++)
			srv->pcie[a][b] = a == b ? LINK_SELF : LINK_UNKNOWN;
	for (unsigned i = 0; i < srv->ngpu; i++) {
		char field[32];
		fieldf(field, sizeof(field), "gpus[%u]", i);
		if ((rc = parse_gpu(p, json_array_get(v, i), field, &srv->gpu[i])))
			return rc;
	}
	if ((v = json_object_get(root, "topology")) && (rc = parse_topology(p, v, srv)))
		return rc;
	if ((v = json_object_get(root, "faults"))) {
		if ((rc = parse_fault_array(p, v, "faults", srv->faults, SIM_MAX_FAULTS, &srv->nfault)))
			return rc;
		for (unsigned i = 0; i < srv->nfault; i++)
			if (srv->faults[i].gpu >= srv->ngpu) {
				char field[32];
				fieldf(field, sizeof(field), "faults[%u].gpu", i);
				return fail(p, field, "GPU %u does not exist (the server has %u)", srv->faults[i].gpu,
					    srv->ngpu);
			}
	}
	return 0;
}

int sim_server_parse(const char *buf, size_t len, const char *origin, struct sim_server **out, struct gpu_err *err)
{
	struct pctx p = { "sim file", origin, err };
	*out = NULL;
	json_t *root = load_json(&p, buf, len);
	if (!root)
		return GPU_EDATA;
	struct sim_server *srv = calloc(1, sizeof(*srv));
	if (!srv) {
		json_decref(root);
		gpu_err_set(err, "out of memory parsing '%s'", origin);
		return GPU_ENOMEM;
	}
	int rc = parse_server(&p, root, srv);
	json_decref(root);
	if (rc) {
		free(srv);
		return rc;
	}
	*out = srv;
	return 0;
}
