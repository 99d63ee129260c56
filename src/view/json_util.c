/* SPDX-License-Identifier: Apache-2.0 */
/* json_util.c - see json_util.h. */
#include "json_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/abuf.h"

/* "not supported", "error", "not read" (VAL_UNKNOWN); NULL for VAL_OK. */
static const char *json_val_reason(enum val_status st)
{
	switch (st) {
	case VAL_OK: return NULL;
	case VAL_UNSUPPORTED: return "not supported";
	case VAL_ERROR: return "error";
	default: return "not read";
	}
}

json_t *json_u64(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static void put_unavailable(json_t *obj, const char *key, enum val_status st)
{
	json_t *u = json_object_get(obj, "unavailable");
	if (!u) {
		u = json_object();
		json_object_set_new(obj, "unavailable", u);
	}
	json_object_set_new(u, key, json_string(json_val_reason(st)));
}

void json_unavailable_last(json_t *obj)
{
	json_t *u = json_object_get(obj, "unavailable");
	if (!u)
		return;
	json_incref(u);
	json_object_del(obj, "unavailable");
	json_object_set_new(obj, "unavailable", u);
}

void json_put_u64v(json_t *obj, const char *key, u64v v)
{
	if (v.st == VAL_OK)
		json_object_set_new(obj, key, json_u64(v.v));
	else
		put_unavailable(obj, key, v.st);
}

void json_put_i64v(json_t *obj, const char *key, i64v v)
{
	if (v.st == VAL_OK)
		json_object_set_new(obj, key, json_integer(v.v));
	else
		put_unavailable(obj, key, v.st);
}

static void put_chars(json_t *obj, const char *key, const char *s, enum val_status st)
{
	if (st == VAL_OK)
		json_object_set_new(obj, key, json_string(s));
	else
		put_unavailable(obj, key, st);
}

void json_put_strv(json_t *obj, const char *key, const strv *v)
{
	put_chars(obj, key, v->s, v->st);
}

static void json_put_busidv(json_t *obj, const char *key, const busidv *v)
{
	put_chars(obj, key, v->s, v->st);
}

void json_put_boolv(json_t *obj, const char *key, u64v v)
{
	if (v.st == VAL_OK)
		json_object_set_new(obj, key, json_boolean(v.v != 0));
	else
		put_unavailable(obj, key, v.st);
}

const struct clk_evt_name clk_evt_names[] = {
	{ CLK_EVT_GPU_IDLE, "gpu_idle", "Idle" },
	{ CLK_EVT_APP_CLOCKS, "applications_clocks_setting", "Applications Clocks Setting" },
	{ CLK_EVT_SW_POWER_CAP, "sw_power_cap", "SW Power Cap" },
	{ CLK_EVT_HW_SLOWDOWN, "hw_slowdown", "HW Slowdown" },
	{ CLK_EVT_SYNC_BOOST, "sync_boost", "Sync Boost" },
	{ CLK_EVT_SW_THERMAL, "sw_thermal_slowdown", "SW Thermal Slowdown" },
	{ CLK_EVT_HW_THERMAL, "hw_thermal_slowdown", "HW Thermal Slowdown" },
	{ CLK_EVT_HW_POWER_BRAKE, "hw_power_brake_slowdown", "HW Power Brake Slowdown" },
	{ CLK_EVT_DISPLAY_CLOCKS, "display_clock_setting", "Display Clock Setting" },
};
const unsigned clk_evt_count = sizeof(clk_evt_names) / sizeof(clk_evt_names[0]);

void clk_evt_describe(uint64_t bits, char *out, size_t outlen)
{
	size_t len = 0;
	uint64_t known = 0;
	if (outlen == 0)
		return;
	out[0] = '\0';
	for (unsigned i = 0; i < clk_evt_count; i++) {
		known |= clk_evt_names[i].bit;
		if (bits & clk_evt_names[i].bit) {
			int n = snprintf(out + len, outlen - len, "%s%s", len ? ", " : "", clk_evt_names[i].label);
			if (n < 0 || (size_t)n >= outlen - len)
				return;
			len += (size_t)n;
		}
	}
	if (bits & ~known) {
		snprintf(out + len, outlen - len, "%s0x%llx", len ? ", " : "", (unsigned long long)(bits & ~known));
		return;
	}
	if (len == 0)
		snprintf(out, outlen, "none");
}

const char *gpu_compute_mode_name(uint64_t mode)
{
	switch (mode) {
	case COMPUTE_DEFAULT: return "Default";
	case COMPUTE_EXCLUSIVE_THREAD: return "Exclusive_Thread";
	case COMPUTE_PROHIBITED: return "Prohibited";
	case COMPUTE_EXCLUSIVE_PROCESS: return "Exclusive_Process";
	default: return "unknown";
	}
}

void gpu_link_label(const struct gpu_link *l, char *out, size_t outlen)
{
	if (l->kind == LINK_NVLINK)
		snprintf(out, outlen, "NV%u", l->nvlinks);
	else
		snprintf(out, outlen, "%s", gpu_link_kind_name(l->kind));
}

json_t *json_gpu_system(const struct gpu_system *sys)
{
	json_t *o = json_object();
	json_object_set_new(o, "backend", json_string(sys->backend));
	json_object_set_new(o, "server_name", json_string(sys->server_name));
	json_put_strv(o, "hostname", &sys->hostname);
	json_put_strv(o, "driver_version", &sys->driver_version);
	json_put_strv(o, "cuda_driver_version", &sys->cuda_driver_version);
	json_put_strv(o, "nvml_version", &sys->nvml_version);
	json_put_boolv(o, "fabric_manager_running", sys->fabric_manager_running);
	json_object_set_new(o, "gpu_count", json_integer(sys->gpu_count));
	json_unavailable_last(o);
	return o;
}

json_t *json_gpu_static(const struct gpu_static *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer(st->index));
	json_put_strv(o, "name", &st->name);
	json_put_strv(o, "uuid", &st->uuid);
	json_put_strv(o, "pci_bus_id", &st->pci_bus_id);
	json_put_strv(o, "serial", &st->serial);
	json_put_strv(o, "vbios_version", &st->vbios_version);
	json_put_strv(o, "board_part_number", &st->board_part_number);
	json_put_strv(o, "architecture", &st->architecture);
	if (VAL_HAS(st->cc_major) && VAL_HAS(st->cc_minor)) {
		char cc[32];
		snprintf(cc, sizeof(cc), "%llu.%llu", (unsigned long long)st->cc_major.v,
			 (unsigned long long)st->cc_minor.v);
		json_object_set_new(o, "compute_capability", json_string(cc));
	} else {
		put_unavailable(o, "compute_capability", VAL_HAS(st->cc_major) ? st->cc_minor.st : st->cc_major.st);
	}
	json_put_u64v(o, "sm_count", st->sm_count);
	json_put_u64v(o, "cuda_cores", st->cuda_cores);
	json_put_u64v(o, "mem_total_bytes", st->mem_total_bytes);
	json_put_u64v(o, "mem_bus_width_bits", st->mem_bus_width_bits);
	json_put_u64v(o, "max_sm_clock_mhz", st->max_sm_clock_mhz);
	json_put_u64v(o, "max_mem_clock_mhz", st->max_mem_clock_mhz);
	json_put_u64v(o, "power_limit_mw", st->power_limit_mw);
	json_put_u64v(o, "power_default_limit_mw", st->power_default_limit_mw);
	json_put_u64v(o, "power_max_limit_mw", st->power_max_limit_mw);
	json_put_boolv(o, "persistence_mode", st->persistence_mode);
	if (VAL_HAS(st->compute_mode))
		json_object_set_new(o, "compute_mode", json_string(gpu_compute_mode_name(st->compute_mode.v)));
	else
		put_unavailable(o, "compute_mode", st->compute_mode.st);
	json_put_boolv(o, "ecc_mode", st->ecc_mode);
	json_put_boolv(o, "ecc_mode_pending", st->ecc_mode_pending);
	json_put_boolv(o, "mig_mode", st->mig_mode);
	json_put_boolv(o, "mig_mode_pending", st->mig_mode_pending);
	json_put_u64v(o, "pcie_gen_max", st->pcie_gen_max);
	json_put_u64v(o, "pcie_width_max", st->pcie_width_max);
	json_put_u64v(o, "nvlink_count", st->nvlink_count);
	json_put_i64v(o, "numa_node", st->numa_node);
	json_put_strv(o, "cpu_affinity", &st->cpu_affinity);
	json_put_strv(o, "catalog_model", &st->catalog_model);
	json_unavailable_last(o);
	return o;
}

static json_t *json_nvlink(unsigned i, const struct gpu_nvlink *k)
{
	json_t *o = json_object();
	json_object_set_new(o, "link", json_integer(i));
	json_put_boolv(o, "active", k->active);
	json_put_u64v(o, "version", k->version);
	json_put_busidv(o, "remote_pci_bus_id", &k->remote_pci_bus_id);
	json_put_u64v(o, "crc_flit_errors", k->crc_flit_errors);
	json_put_u64v(o, "crc_data_errors", k->crc_data_errors);
	json_put_u64v(o, "replay_errors", k->replay_errors);
	json_put_u64v(o, "recovery_errors", k->recovery_errors);
	json_put_u64v(o, "tx_bytes", k->tx_bytes);
	json_put_u64v(o, "rx_bytes", k->rx_bytes);
	json_unavailable_last(o);
	return o;
}

/* A bit mask as the names of its bits, and the mask. */
static void put_clock_event_reasons(json_t *o, const char *key, u64v v)
{
	if (!VAL_HAS(v)) {
		put_unavailable(o, key, v.st);
		return;
	}
	json_t *a = json_array();
	for (unsigned i = 0; i < clk_evt_count; i++)
		if (v.v & clk_evt_names[i].bit)
			json_array_append_new(a, json_string(clk_evt_names[i].key));
	json_object_set_new(o, key, a);
	json_object_set_new(o, "clock_event_reasons_mask", json_u64(v.v));
}

/* s as "sample": with values false (a GPU that is down) every field is
 * "not read" and there are no NVLinks; with links false no "nvlinks". */
static json_t *sample_object(const struct gpu_sample *s, bool values, bool links)
{
	json_t *o = json_object();
	json_object_set_new(o, "timestamp_ns", json_u64(s->timestamp_ns));
	json_object_set_new(o, "duration_ns", json_u64(s->duration_ns));
	json_object_set_new(o, "lost", json_boolean(s->lost));
	/* every row of the field table under its member's name */
#define SAMPLE_JSON(member, ...) \
	if (!values) \
		put_unavailable(o, #member, VAL_UNKNOWN); \
	else if (offsetof(struct gpu_sample, member) == offsetof(struct gpu_sample, clock_event_reasons)) \
		put_clock_event_reasons(o, #member, s->member); \
	else \
		json_put_u64v(o, #member, s->member);
	GPU_SAMPLE_FIELDS(SAMPLE_JSON)
#undef SAMPLE_JSON
	if (links) {
		json_t *a = json_array();
		for (unsigned i = 0; values && i < s->nvlink_n && i < GPU_MAX_NVLINKS; i++)
			json_array_append_new(a, json_nvlink(i, &s->nvlink[i]));
		json_object_set_new(o, "nvlinks", a);
	}
	json_unavailable_last(o);
	return o;
}

json_t *json_gpu_sample(const struct gpu_sample *s)
{
	return sample_object(s, true, true);
}

json_t *json_gpu_process(const struct gpu_process *p)
{
	json_t *o = json_object();
	char type[2] = { p->type ? p->type : '?', '\0' };
	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "type", json_string(type));
	/* a command name is whatever bytes the process chose: JSON needs UTF-8 */
	char clean[sizeof(p->name) > sizeof(p->user) ? sizeof(p->name) : sizeof(p->user)];
	utf8_clean(clean, sizeof(clean), p->name);
	json_object_set_new(o, "name", json_string(clean));
	if (p->uid != (uint32_t)-1)
		json_object_set_new(o, "uid", json_integer(p->uid));
	else
		json_object_set_new(o, "uid", json_null());
	utf8_clean(clean, sizeof(clean), p->user);
	json_object_set_new(o, "user", json_string(clean));
	json_put_u64v(o, "used_mem_bytes", p->used_mem_bytes);
	if (p->mig_gi >= 0)
		json_object_set_new(o, "mig_gpu_instance", json_integer(p->mig_gi));
	else
		json_object_set_new(o, "mig_gpu_instance", json_null());
	json_unavailable_last(o);
	return o;
}

json_t *json_gpu_mig(const struct gpu_mig *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "gpu_instance", json_integer(m->gi_id));
	json_object_set_new(o, "compute_instance", json_integer(m->ci_id));
	json_object_set_new(o, "profile", json_string(m->profile));
	json_object_set_new(o, "uuid", json_string(m->uuid));
	json_put_u64v(o, "mem_total_bytes", m->mem_total_bytes);
	json_put_u64v(o, "mem_used_bytes", m->mem_used_bytes);
	json_put_u64v(o, "sm_count", m->sm_count);
	/* the instance's profiling figures, under the sample's keys */
#define JSON_MIG_PROF(member) json_put_u64v(o, #member, m->member);
	GPU_MIG_PROF_FIELDS(JSON_MIG_PROF)
#undef JSON_MIG_PROF
	json_unavailable_last(o);
	return o;
}

json_t *json_gpu_link(unsigned a, unsigned b, const struct gpu_link *l)
{
	char label[16];
	json_t *o = json_object();
	gpu_link_label(l, label, sizeof(label));
	json_object_set_new(o, "a", json_integer(a));
	json_object_set_new(o, "b", json_integer(b));
	json_object_set_new(o, "label", json_string(label));
	json_object_set_new(o, "kind", json_string(l->kind == LINK_NVLINK ? "NVLINK" : gpu_link_kind_name(l->kind)));
	json_object_set_new(o, "nvlinks", json_integer(l->nvlinks));
	json_object_set_new(o, "pcie", json_string(gpu_link_kind_name(l->pcie)));
	json_object_set_new(o, "p2p_supported", json_boolean(l->p2p_supported));
	return o;
}

json_t *json_gpu_view(const struct gpu_view *v, unsigned flags)
{
	json_t *g = json_gpu_static(&v->st);
	json_object_set_new(g, "up", json_boolean(v->up));
	json_object_set_new(g, "error", v->last_error[0] ? json_string(v->last_error) : json_null());
	json_object_set_new(g, "sample", sample_object(&v->s, v->up, !(flags & JSON_GPU_NO_NVLINK_LIST)));
	json_t *procs = json_array();
	for (unsigned k = 0; k < v->nproc && k < GPU_MAX_PROCS; k++)
		json_array_append_new(procs, json_gpu_process(&v->procs[k]));
	json_object_set_new(g, "processes", procs);
	json_t *migs = json_array();
	for (unsigned k = 0; k < v->nmig && k < GPU_MAX_MIG; k++)
		json_array_append_new(migs, json_gpu_mig(&v->mig[k]));
	json_object_set_new(g, "mig_instances", migs);
	json_unavailable_last(g);
	return g;
}

int json_write(const json_t *doc, FILE *out)
{
	if (json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_DIGITS) != 0)
		return -1;
	return fputc('\n', out) == EOF ? -1 : 0;
}
