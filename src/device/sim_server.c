/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_server.c - from a parsed server description to a runnable model:
 * catalog lookup, generated identities (UUID, serial, bus id) for what the
 * file leaves out, replication to N GPUs, the per-GPU capability table
 * (what NVML would call "not supported" on the modelled GPU), NVLink wiring,
 * and the check that a fault can show on the GPU it names.
 */
#include "sim_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* splitmix64 over four words: deterministic, well mixed, no state. */
uint64_t sim_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t x = a * 0x9E3779B97F4A7C15ull ^ b;
	uint64_t words[3] = { c, d, 0x632BE59BD9B4E019ull };
	for (int i = 0; i < 4; i++) {
		x += 0x9E3779B97F4A7C15ull;
		uint64_t z = x;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		x = z ^ (z >> 31);
		if (i < 3)
			x ^= words[i];
	}
	return x;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Fills in identities the file did not give, deterministically from the
 * server name and the GPU index, in the formats NVML uses. */
static void fill_identity(struct sim_server *srv, unsigned i)
{
	struct sim_gpu_desc *g = &srv->gpu[i];
	uint64_t h = sim_hash(name_hash(srv->name), i, 0x5155, 0);
	uint64_t h2 = sim_hash(h, i, 0x7777, 1);
	if (!g->uuid[0])
		snprintf(g->uuid, sizeof(g->uuid), "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(h >> 32),
			 (unsigned)(h >> 16) & 0xffff, 0x4000 | ((unsigned)h & 0x0fff), 0x8000 | ((unsigned)(h2 >> 48) & 0x3fff),
			 (unsigned long long)(h2 & 0xffffffffffffull));
	if (!g->serial[0])
		snprintf(g->serial, sizeof(g->serial), "165%010llu", (unsigned long long)(h2 % 10000000000ull));
	if (!g->bus_id[0])
		snprintf(g->bus_id, sizeof(g->bus_id), "%08X:%02X:00.0", i / 8, 0x18 + (i % 8) * 0x10);
	for (unsigned m = 0; m < g->nmig; m++)
		if (!g->mig_inst[m].uuid[0]) {
			uint64_t mh = sim_hash(h, m, g->mig_inst[m].gi_id, 2);
			snprintf(g->mig_inst[m].uuid, sizeof(g->mig_inst[m].uuid), "MIG-%08x-%04x-%04x-%04x-%012llx",
				 (unsigned)(mh >> 32), (unsigned)(mh >> 16) & 0xffff, 0x5000 | ((unsigned)mh & 0x0fff),
				 0x8000 | ((unsigned)(mh >> 8) & 0x3fff), (unsigned long long)(sim_hash(mh, 3, 3, 3) & 0xffffffffffffull));
		}
}

int sim_server_replicate(struct sim_server *srv, unsigned n, struct gpu_err *err)
{
	if (n < 1 || n > GPU_MAX_GPUS) {
		gpu_err_set(err, "sim option gpus=%u: expected 1 to %d", n, GPU_MAX_GPUS);
		return GPU_EINVAL;
	}
	unsigned base = srv->ngpu;
	for (unsigned i = base; i < n; i++) {
		unsigned src = i % base, copy = i / base;
		srv->gpu[i] = srv->gpu[src];
		struct sim_gpu_desc *g = &srv->gpu[i];
		/* new identities, same model and settings; the bus id keeps the
		 * original's bus number in a new PCI domain, as multi-segment hosts do */
		char bus[32];
		snprintf(bus, sizeof(bus), "%s", g->bus_id[0] ? g->bus_id : "00000000:18:00.0");
		snprintf(g->bus_id, sizeof(g->bus_id), "%08X%s", copy, strchr(bus, ':') ? strchr(bus, ':') : ":18:00.0");
		g->uuid[0] = g->serial[0] = '\0';
		for (unsigned m = 0; m < g->nmig; m++)
			g->mig_inst[m].uuid[0] = '\0';
		for (unsigned k = 0; k < g->nproc; k++)
			g->procs[k].pid += copy * 1000;
	}
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++) {
			bool same_block = a / base == b / base;
			if (a < base && b < base)
				continue;
			srv->nvlinks[a][b] = same_block ? srv->nvlinks[a % base][b % base] : 0;
			srv->pcie[a][b] = a == b ? LINK_SELF : same_block ? srv->pcie[a % base][b % base] : LINK_SYS;
		}
	if (n < base)
		for (unsigned k = 0; k < srv->nfault; k++)
			if (srv->faults[k].gpu >= n) {
				gpu_err_set(err, "sim option gpus=%u: the server's fault %u names GPU %u", n, k,
					    srv->faults[k].gpu);
				return GPU_EINVAL;
			}
	srv->ngpu = n;
	return 0;
}

static bool numa_known(const struct sim_server *srv, int node)
{
	for (unsigned i = 0; i < srv->nnuma; i++)
		if (srv->numa[i].id == node)
			return true;
	return false;
}

int sim_server_resolve(struct sim_server *srv, const struct catalog *cat, const char *origin, struct gpu_err *err)
{
	for (unsigned i = 0; i < srv->ngpu; i++) {
		struct sim_gpu_desc *g = &srv->gpu[i];
		const struct cat_gpu *c = catalog_find(cat, g->model);
		if (!c) {
			gpu_err_set(err, "sim file '%s': gpus[%u].model: unknown GPU model '%s' (not in the catalog)",
				    origin, i, g->model);
			return GPU_EDATA;
		}
		/* a GPU's node must be one of the server's, where its CPU list comes from */
		if (g->numa_node >= 0 && !numa_known(srv, g->numa_node)) {
			gpu_err_set(err, "sim file '%s': gpus[%u].numa_node: node %d is not in numa_nodes%s", origin, i,
				    g->numa_node, srv->nnuma ? "" : " (the file has none)");
			return GPU_EDATA;
		}
		if (g->workload && g->nload == 0) { /* the workload's own load */
			g->nload = 1;
			g->load[0] = (struct sim_load_step){ 0, sim_workload_default_load(g->workload) };
		}
		if (g->mig == SIM_YES && c->mig_n == 0) {
			gpu_err_set(err, "sim file '%s': gpus[%u].mig: the %s does not support MIG", origin, i, c->key);
			return GPU_EDATA;
		}
		if (g->nmig && g->mig != SIM_YES) {
			gpu_err_set(err, "sim file '%s': gpus[%u].mig_instances: MIG instances need \"mig\": true",
				    origin, i);
			return GPU_EDATA;
		}
		unsigned slices = 0;
		for (unsigned m = 0; m < g->nmig; m++) {
			const struct cat_mig_profile *prof = NULL;
			for (unsigned k = 0; k < c->mig_n && !prof; k++)
				if (!strcmp(c->mig[k].name, g->mig_inst[m].profile))
					prof = &c->mig[k];
			if (!prof) {
				gpu_err_set(err, "sim file '%s': gpus[%u].mig_instances[%u].profile: the %s has no MIG profile '%s'",
					    origin, i, m, c->key, g->mig_inst[m].profile);
				return GPU_EDATA;
			}
			slices += prof->slices;
		}
		if (slices > 7) {
			gpu_err_set(err, "sim file '%s': gpus[%u].mig_instances: %u compute slices do not fit in 7",
				    origin, i, slices);
			return GPU_EDATA;
		}
		for (unsigned k = 0; k < g->nproc; k++) {
			int gi = g->procs[k].mig_gi;
			bool found = gi < 0;
			for (unsigned m = 0; m < g->nmig && !found; m++)
				found = (int)g->mig_inst[m].gi_id == gi;
			if (!found) {
				gpu_err_set(err, "sim file '%s': gpus[%u].processes[%u].mig_gi: no MIG instance %d",
					    origin, i, k, gi);
				return GPU_EDATA;
			}
		}
		uint64_t proc_mem = 0;
		for (unsigned k = 0; k < g->nproc; k++)
			proc_mem += g->procs[k].mem_bytes;
		if (proc_mem > c->mem_bytes) {
			gpu_err_set(err, "sim file '%s': gpus[%u].processes: %llu MiB is more than the %s's %llu MiB",
				    origin, i, (unsigned long long)(proc_mem >> 20), c->key,
				    (unsigned long long)(c->mem_bytes >> 20));
			return GPU_EDATA;
		}
		unsigned total = 0;
		for (unsigned b = 0; b < srv->ngpu; b++)
			total += srv->nvlinks[i][b];
		if (total > c->nvlink_links && !srv->nswitch) {
			gpu_err_set(err, "sim file '%s': topology: GPU %u has %u NVLinks to its peers, the %s has %u",
				    origin, i, total, c->key, c->nvlink_links);
			return GPU_EDATA;
		}
		fill_identity(srv, i);
	}
	return 0;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void derive_caps(const struct sim_server *srv, unsigned i, const struct cat_gpu *c, struct sim_caps *caps)
{
	const struct sim_gpu_desc *g = &srv->gpu[i];
	bool workstation = starts_with(c->key, "RTX");
	bool old_arch = !strcmp(c->architecture, "Volta") || !strcmp(c->architecture, "Turing") ||
			!strcmp(c->architecture, "Pascal");
	caps->geforce = workstation && isdigit((unsigned char)c->key[4]);
	caps->fan = g->fan == SIM_DEFAULT ? workstation : g->fan == SIM_YES;
	caps->ecc_supported = !caps->geforce;
	/* workstation boards ship with ECC off; datacenter boards with it on */
	caps->ecc_on = caps->ecc_supported && (g->ecc == SIM_DEFAULT ? !workstation : g->ecc == SIM_YES);
	caps->hbm = starts_with(c->mem_type, "HBM");
	caps->remap = caps->ecc_supported && !old_arch;
	caps->retired_pages = caps->ecc_supported && old_arch;
	caps->mig_capable = c->mig_n > 0;
	caps->mig_on = caps->mig_capable && g->mig == SIM_YES;
	caps->viol = !caps->geforce;
	caps->gpm = c->cc_major >= 9 && !caps->mig_on; /* GPM: Hopper and later, per GPU without MIG */
	caps->gpm_mig = c->cc_major >= 9 && caps->mig_on; /* and per instance with MIG */
	unsigned peers = 0;
	for (unsigned b = 0; b < srv->ngpu; b++)
		peers += srv->nvlinks[i][b];
	/* behind NVSwitch every link of the GPU is in use; otherwise only the
	 * links the topology wires to peers (a PCIe card without a bridge: none) */
	caps->nvlinks = c->nvlink_links && (srv->nswitch || peers) ? c->nvlink_links : 0;
	if (caps->nvlinks > GPU_MAX_NVLINKS)
		caps->nvlinks = GPU_MAX_NVLINKS;
}

int sim_state_build(struct sim_state *st, struct gpu_err *err)
{
	struct sim_server *srv = st->srv;
	st->ngpu = srv->ngpu;
	for (unsigned i = 0; i < srv->ngpu; i++) {
		struct sim_gpu *sg = &st->gpu[i];
		const struct sim_gpu_desc *g = &srv->gpu[i];
		sg->d = g;
		sg->cat = catalog_find(&st->cat, g->model);
		if (!sg->cat) {
			gpu_err_set(err, "sim file '%s': gpus[%u].model: unknown GPU model '%s'", st->origin, i, g->model);
			return GPU_EDATA;
		}
		const struct cat_gpu *c = sg->cat;
		derive_caps(srv, i, c, &sg->caps);
		double tdp = c->tdp_w > 0 ? c->tdp_w : 300;
		sg->power_limit_mw = (uint64_t)((g->power_limit_w > 0 ? g->power_limit_w : tdp) * 1000.0 + 0.5);
		sg->idle_w = g->idle_power_w > 0 ? g->idle_power_w : (sg->caps.geforce ? 0.05 : 0.11) * tdp;
		bool sxm = !strcmp(c->form_factor, "SXM");
		sg->idle_temp_c = g->idle_temp_c > 0 ? g->idle_temp_c : sxm ? 29 : 34;
		sg->load_temp_c = g->load_temp_c > 0 ? g->load_temp_c : sxm ? 66 : sg->caps.geforce ? 72 : 76;
		sg->slowdown_c = g->temp_slowdown_c ? g->temp_slowdown_c : sg->caps.hbm ? 87 : 93;
		sg->shutdown_c = g->temp_shutdown_c ? g->temp_shutdown_c : sg->slowdown_c + 5;
		/* wiring: direct links go to peers in index order; the rest (or all,
		 * behind NVSwitch) go round-robin to the switches */
		unsigned k = 0;
		for (unsigned b = 0; b < srv->ngpu && !srv->nswitch; b++)
			for (unsigned n = 0; n < srv->nvlinks[i][b] && k < sg->caps.nvlinks; n++, k++) {
				sg->link_peer[k] = (int)b;
				sg->link_switch[k] = -1;
			}
		for (unsigned j = k; j < GPU_MAX_NVLINKS; j++) {
			sg->link_peer[j] = -1;
			sg->link_switch[j] = srv->nswitch ? (int)(j % srv->nswitch) : -1;
		}
	}
	return 0;
}

int sim_fault_check(const struct sim_state *st, const struct sim_fault *f, struct gpu_err *err)
{
	if (f->kind <= SIM_FAULT_NONE || f->kind >= SIM_FAULT_KIND_COUNT) {
		gpu_err_set(err, "unknown fault kind %d", (int)f->kind);
		return GPU_EINVAL;
	}
	if (f->gpu >= st->ngpu) {
		gpu_err_set(err, "fault %s: GPU %u does not exist (the server has %u)", sim_fault_kind_name(f->kind),
			    f->gpu, st->ngpu);
		return GPU_EINVAL;
	}
	const struct sim_gpu *g = &st->gpu[f->gpu];
	const char *why = NULL;
	switch (f->kind) {
	case SIM_FAULT_ECC_UNCORRECTABLE:
	case SIM_FAULT_ECC_CORRECTED:
		if (!g->caps.ecc_on)
			why = g->caps.ecc_supported ? "has ECC disabled" : "has no ECC";
		break;
	case SIM_FAULT_NVLINK_DOWN:
	case SIM_FAULT_NVLINK_ERRORS:
		if (!g->caps.nvlinks)
			why = "has no NVLink";
		else if (f->link >= (int)g->caps.nvlinks)
			why = "has fewer links than that";
		break;
	case SIM_FAULT_REMAP_PENDING:
	case SIM_FAULT_REMAP_FAILURE:
		if (!g->caps.remap)
			why = "does not remap rows";
		break;
	case SIM_FAULT_RETIRED_PAGES:
		if (!g->caps.retired_pages)
			why = g->caps.remap ? "remaps rows instead of retiring pages" : "does not retire pages";
		break;
	case SIM_FAULT_POWER:
	case SIM_FAULT_THERMAL:
	default:
		break;
	}
	if (f->kind == SIM_FAULT_XID && f->xid == 0)
		why = "needs an XID code";
	if (why) {
		gpu_err_set(err, "fault %s: GPU %u (%s) %s", sim_fault_kind_name(f->kind), f->gpu, g->cat->key, why);
		return GPU_EUNSUPPORTED;
	}
	return 0;
}
