/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_device.c - per-GPU reads of the nvml backend: static facts, samples
 * (by metric group), running processes and MIG instances. Each NVML answer
 * becomes a value, "not supported" (NVML_ERROR_NOT_SUPPORTED or a function
 * this driver lacks) or an error; NVML_ERROR_GPU_IS_LOST marks the GPU lost.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nvml_priv.h"

static void put_str(struct rd *rd, strv *f, nvmlReturn_t r, const char *s, const char *what)
{
	nvml_note(rd, r, what);
	nvml_put_str(f, r, s);
}

/* One value out of an NVML getter. The call is a statement of its own: as a
 * function argument beside v_, v_ could be read before the call fills it. */
#define GET_U32(field, fn, what, ...)                                            \
	do {                                                                     \
		unsigned int v_ = 0;                                             \
		nvmlReturn_t r_ = NVML_CALL(api, fn, __VA_ARGS__, &v_);          \
		nvml_put_u64(rd, &(field), r_, v_, what);                             \
	} while (0)
#define GET_U64(field, fn, what, ...)                                            \
	do {                                                                     \
		unsigned long long v_ = 0;                                       \
		nvmlReturn_t r_ = NVML_CALL(api, fn, __VA_ARGS__, &v_);          \
		nvml_put_u64(rd, &(field), r_, v_, what);                             \
	} while (0)
#define GET_STR(field, fn, what, h, bufsize)                                     \
	do {                                                                     \
		char b_[bufsize] = "";                                           \
		nvmlReturn_t r_ = NVML_CALL(api, fn, h, b_, sizeof(b_));         \
		put_str(rd, &(field), r_, b_, what);                             \
	} while (0)

/* Checks the index and the handle; on failure fills err and returns a GPU_E* code. */
static int gpu_handle(struct gpu_backend *be, unsigned gpu, nvmlDevice_t *h, struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	if (gpu >= p->n) {
		gpu_err_set(err, "no GPU %u (the driver reports %u)", gpu, p->n);
		return GPU_ENODEV;
	}
	if (!p->gpu[gpu].h) {
		nvml_call_error(p, err, gpu, "cannot get its handle", p->gpu[gpu].handle_rc);
		return nvml_errcode(p->gpu[gpu].handle_rc);
	}
	*h = p->gpu[gpu].h;
	return GPU_OK;
}

static int finish(struct nvml_priv *p, unsigned gpu, struct rd *rd, struct gpu_err *err)
{
	if (rd->lost) {
		nvml_call_error(p, err, gpu, "NVML: GPU is lost", NVML_ERROR_GPU_IS_LOST);
		return GPU_ENODEV;
	}
	return GPU_OK;
}

static void match_catalog(struct nvml_priv *p, struct gpu_static *out)
{
	if (!VAL_HAS(out->name) || !VAL_HAS(out->mem_total_bytes)) {
		out->catalog_model.st = VAL_ERROR;
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (!p->cat_tried) {
		char msg[256];
		p->cat_tried = true;
		p->cat_ok = catalog_load_dir(&p->cat, p->data_dir[0] ? p->data_dir : NULL, msg, sizeof(msg)) == 0;
	}
	const struct cat_gpu *c = p->cat_ok ? catalog_match(&p->cat, out->name.s, out->mem_total_bytes.v) : NULL;
	if (!p->cat_ok)
		out->catalog_model.st = VAL_ERROR;
	else if (!c)
		out->catalog_model.st = VAL_UNSUPPORTED; /* a GPU the catalog does not list */
	else {
		snprintf(out->catalog_model.s, sizeof(out->catalog_model.s), "%s", c->key);
		out->catalog_model.st = VAL_OK;
	}
	pthread_mutex_unlock(&p->lock);
}

int nvml_static_info(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	struct nvml_api *api = &p->api;
	struct rd rdv = { 0 }, *rd = &rdv;
	nvmlDevice_t h = NULL;
	memset(out, 0, sizeof(*out));
	out->index = gpu;
	int rc = gpu_handle(be, gpu, &h, err);
	if (rc != GPU_OK)
		return rc;

	GET_STR(out->name, DeviceGetName, "name", h, NVML_NAME_BUF);
	GET_STR(out->uuid, DeviceGetUUID, "UUID", h, NVML_UUID_BUF);
	if (p->gpu[gpu].busid[0])
		put_str(rd, &out->pci_bus_id, NVML_SUCCESS, p->gpu[gpu].busid, "PCI info");
	else
		out->pci_bus_id.st = VAL_ERROR;
	GET_STR(out->serial, DeviceGetSerial, "serial", h, NVML_SERIAL_BUF);
	GET_STR(out->vbios_version, DeviceGetVbiosVersion, "VBIOS", h, NVML_VBIOS_BUF);
	GET_STR(out->board_part_number, DeviceGetBoardPartNumber, "part number", h, NVML_PART_BUF);

	unsigned int arch = 0;
	nvmlReturn_t r = NVML_CALL(api, DeviceGetArchitecture, h, &arch);
	const char *an = nvml_arch_name(arch);
	char unknown_arch[32];
	snprintf(unknown_arch, sizeof(unknown_arch), "unknown (%u)", arch);
	put_str(rd, &out->architecture, r, an ? an : unknown_arch, "architecture");

	int ccmaj = 0, ccmin = 0;
	r = NVML_CALL(api, DeviceGetCudaComputeCapability, h, &ccmaj, &ccmin);
	nvml_put_u64(rd, &out->cc_major, r, (uint64_t)ccmaj, "compute capability");
	nvml_put_u64(rd, &out->cc_minor, r, (uint64_t)ccmin, "compute capability");
	GET_U32(out->cuda_cores, DeviceGetNumGpuCores, "CUDA cores", h);
	/* NVML has no SM count for a whole GPU: cores / cores per SM of its architecture. */
	unsigned per_sm = VAL_HAS(out->cc_major) ? nvml_cores_per_sm(ccmaj, ccmin) : 0;
	if (VAL_HAS(out->cuda_cores) && per_sm)
		VAL_SET(out->sm_count, out->cuda_cores.v / per_sm);
	else
		out->sm_count.st = VAL_HAS(out->cuda_cores) ? VAL_UNSUPPORTED : out->cuda_cores.st;

	nvmlMemory_t mem;
	memset(&mem, 0, sizeof(mem));
	r = NVML_CALL(api, DeviceGetMemoryInfo, h, &mem);
	nvml_put_u64(rd, &out->mem_total_bytes, r, mem.total, "memory");
	GET_U32(out->mem_bus_width_bits, DeviceGetMemoryBusWidth, "bus width", h);
	GET_U32(out->max_sm_clock_mhz, DeviceGetMaxClockInfo, "max clocks", h, NVML_CLOCK_SM);
	GET_U32(out->max_mem_clock_mhz, DeviceGetMaxClockInfo, "max clocks", h, NVML_CLOCK_MEM);
	GET_U32(out->power_limit_mw, DeviceGetPowerManagementLimit, "power limit", h);
	GET_U32(out->power_default_limit_mw, DeviceGetPowerManagementDefaultLimit, "power limit", h);
	unsigned int pmin = 0, pmax = 0;
	r = NVML_CALL(api, DeviceGetPowerManagementLimitConstraints, h, &pmin, &pmax);
	nvml_put_u64(rd, &out->power_max_limit_mw, r, pmax, "power limit");

	int mode = 0, pending = 0;
	r = NVML_CALL(api, DeviceGetPersistenceMode, h, &mode);
	nvml_put_u64(rd, &out->persistence_mode, r, mode ? 1 : 0, "persistence mode");
	r = NVML_CALL(api, DeviceGetComputeMode, h, &mode);
	nvml_put_u64(rd, &out->compute_mode, r, (uint64_t)mode, "compute mode");
	r = NVML_CALL(api, DeviceGetEccMode, h, &mode, &pending);
	nvml_put_u64(rd, &out->ecc_mode, r, mode ? 1 : 0, "ECC mode");
	nvml_put_u64(rd, &out->ecc_mode_pending, r, pending ? 1 : 0, "ECC mode");
	unsigned int mig = 0, migp = 0;
	r = NVML_CALL(api, DeviceGetMigMode, h, &mig, &migp);
	nvml_put_u64(rd, &out->mig_mode, r, mig ? 1 : 0, "MIG mode");
	nvml_put_u64(rd, &out->mig_mode_pending, r, migp ? 1 : 0, "MIG mode");

	/* what the device supports; older drivers only know the device+host maximum */
	if (api->DeviceGetGpuMaxPcieLinkGeneration)
		GET_U32(out->pcie_gen_max, DeviceGetGpuMaxPcieLinkGeneration, "PCIe", h);
	else
		GET_U32(out->pcie_gen_max, DeviceGetMaxPcieLinkGeneration, "PCIe", h);
	GET_U32(out->pcie_width_max, DeviceGetMaxPcieLinkWidth, "PCIe", h);

	nvml_links_ensure(p, gpu);
	if (api->DeviceGetNvLinkState)
		VAL_SET(out->nvlink_count, p->gpu[gpu].nlinks);
	else
		out->nvlink_count.st = VAL_UNSUPPORTED;
	nvml_affinity(p, gpu, out);
	match_catalog(p, out);
	return finish(p, gpu, rd, err);
}

/* Memory as nvidia-smi shows it: "used" without what the driver reserves
 * (nvmlDeviceGetMemoryInfo_v2; on an H200 615 MiB). Older drivers: v1. */
static nvmlReturn_t read_memory(struct nvml_api *api, nvmlDevice_t h, nvmlMemory_t *out)
{
	nvmlMemory_v2_t m2;
	memset(&m2, 0, sizeof(m2));
	m2.version = NVML_MEMORY_V2_VERSION;
	nvmlReturn_t r = NVML_CALL(api, DeviceGetMemoryInfoV2, h, &m2);
	if (r == NVML_SUCCESS) {
		out->total = m2.total;
		out->free = m2.free;
		out->used = m2.used;
		return r;
	}
	if (r == NVML_ERROR_GPU_IS_LOST)
		return r;
	return NVML_CALL(api, DeviceGetMemoryInfo, h, out);
}

static void sample_basic(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_sample *s, struct rd *rd)
{
	struct nvml_api *api = &p->api;
	struct nvml_gpu *g = &p->gpu[gpu];
	nvmlUtilization_t u = { 0, 0 };
	nvmlReturn_t r = NVML_CALL(api, DeviceGetUtilizationRates, h, &u);
	nvml_put_u64(rd, &s->util_gpu_pct, r, u.gpu, "utilization");
	nvml_put_u64(rd, &s->util_mem_pct, r, u.memory, "utilization");
	nvmlMemory_t mem = { 0, 0, 0 };
	r = read_memory(api, h, &mem);
	nvml_put_u64(rd, &s->mem_used_bytes, r, mem.used, "memory");
	nvml_put_u64(rd, &s->mem_free_bytes, r, mem.free, "memory");
	nvml_put_u64(rd, &s->mem_total_bytes, r, mem.total, "memory");
	if (rd->lost)
		return; /* every other call would say the same */
	GET_U32(s->temp_c, DeviceGetTemperature, "temperature", h, NVML_TEMPERATURE_GPU);
	if (!g->thresholds_read) {
		struct rd ignore = { 0 };
		unsigned int t = 0;
		r = NVML_CALL(api, DeviceGetTemperatureThreshold, h, NVML_TEMP_THRESHOLD_SLOWDOWN, &t);
		nvml_put_u64(&ignore, &g->temp_slowdown_c, r, t, "thresholds");
		t = 0;
		r = NVML_CALL(api, DeviceGetTemperatureThreshold, h, NVML_TEMP_THRESHOLD_SHUTDOWN, &t);
		nvml_put_u64(&ignore, &g->temp_shutdown_c, r, t, "thresholds");
		g->thresholds_read = !ignore.lost;
	}
	s->temp_slowdown_c = g->temp_slowdown_c;
	s->temp_shutdown_c = g->temp_shutdown_c;
	if (g->fan_unsupported) {
		s->fan_pct.st = VAL_UNSUPPORTED;
	} else {
		GET_U32(s->fan_pct, DeviceGetFanSpeed, "fan", h);
		g->fan_unsupported = s->fan_pct.st == VAL_UNSUPPORTED; /* stays so while the driver is loaded */
	}
	GET_U32(s->power_limit_mw, DeviceGetEnforcedPowerLimit, "power limit", h);
	GET_U32(s->sm_clock_mhz, DeviceGetClockInfo, "clocks", h, NVML_CLOCK_SM);
	GET_U32(s->mem_clock_mhz, DeviceGetClockInfo, "clocks", h, NVML_CLOCK_MEM);
	int ps = 32;
	r = NVML_CALL(api, DeviceGetPerformanceState, h, &ps);
	if (r == NVML_SUCCESS && (ps < 0 || ps > 15))
		r = NVML_ERROR_NOT_SUPPORTED; /* NVML_PSTATE_UNKNOWN */
	nvml_put_u64(rd, &s->pstate, r, (uint64_t)ps, "P-state");
	GET_U64(s->clock_event_reasons, DeviceGetCurrentClocksEventReasons, "clock events", h);
}

/* SRAM errors have no field id: their own call. */
static void sample_ecc_sram(struct nvml_priv *p, nvmlDevice_t h, struct gpu_sample *s, struct rd *rd)
{
	struct nvml_api *api = &p->api;
	GET_U64(s->ecc_sram_uncorrected, DeviceGetMemoryErrorCounter, "ECC", h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
		NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_SRAM);
}

static void sample_pcie(struct nvml_priv *p, nvmlDevice_t h, struct gpu_sample *s, struct rd *rd)
{
	struct nvml_api *api = &p->api;
	GET_U32(s->pcie_gen, DeviceGetCurrPcieLinkGeneration, "PCIe", h);
	GET_U32(s->pcie_width, DeviceGetCurrPcieLinkWidth, "PCIe", h);
	/* each of these samples the link for 20 ms */
	GET_U32(s->pcie_tx_kbps, DeviceGetPcieThroughput, "PCIe throughput", h, NVML_PCIE_UTIL_TX_BYTES);
	GET_U32(s->pcie_rx_kbps, DeviceGetPcieThroughput, "PCIe throughput", h, NVML_PCIE_UTIL_RX_BYTES);
}

/* Per-link state and error counters go into the batch; the link facts that
 * do not change (version, remote end) come from the cache. */
static unsigned want_nvlink(struct nvml_priv *p, unsigned gpu, bool errors, struct gpu_sample *s,
			    struct nvml_fv_want *w)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	unsigned n = 0;
	nvml_links_ensure(p, gpu);
	s->nvlink_n = g->nlinks;
	for (unsigned l = 0; l < g->nlinks; l++) {
		struct gpu_nvlink *k = &s->nvlink[l];
		unsigned base = FVS_NVL_BASE + l * NVL_KINDS;
		w[n++] = (struct nvml_fv_want){ base + NVL_STATE, &k->active };
		if (errors) { /* else left unread (GPU_GRP_NVLINK_ERR) */
			w[n++] = (struct nvml_fv_want){ base + NVL_REPLAY, &k->replay_errors };
			w[n++] = (struct nvml_fv_want){ base + NVL_RECOVERY, &k->recovery_errors };
			w[n++] = (struct nvml_fv_want){ base + NVL_CRC_FLIT, &k->crc_flit_errors };
			w[n++] = (struct nvml_fv_want){ base + NVL_CRC_DATA, &k->crc_data_errors };
		}
		k->version = g->link_version[l];
		if (g->links[l].remote_busid[0]) {
			snprintf(k->remote_pci_bus_id.s, sizeof(k->remote_pci_bus_id.s), "%s", g->links[l].remote_busid);
			k->remote_pci_bus_id.st = VAL_OK;
		} else {
			k->remote_pci_bus_id.st = VAL_UNSUPPORTED;
		}
		/* NVML's per-link byte counters (nvmlDeviceGetNvLinkUtilizationCounter) are
		 * deprecated and answer "not supported" on Hopper. */
		k->tx_bytes.st = VAL_UNSUPPORTED;
		k->rx_bytes.st = VAL_UNSUPPORTED;
	}
	return n;
}

int nvml_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out, struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	struct rd rd = { 0 };
	nvmlDevice_t h = NULL;
	memset(out, 0, sizeof(*out));
	out->timestamp_ns = gpu_backend_now_ns(be);
	int rc = gpu_handle(be, gpu, &h, err);
	if (rc != GPU_OK) {
		out->lost = rc == GPU_ENODEV;
		return rc;
	}
	unsigned long calls0 = nvml_thread_calls;
	/* everything of the asked groups that has a field id: one batch */
	struct nvml_fv_want want[FVS_COUNT];
	unsigned nw = 0;
	/* the field table's BATCH and FLAG rows of the asked groups */
#define WANT_TABLE(member, group, unit, api_key, role, metric, type, labels, help, series, read, field, ...) \
	WANT_TABLE_##read(member, group)
#define WANT_TABLE_BATCH(member, group) \
	if (groups & GPU_GRP_##group) \
		want[nw++] = (struct nvml_fv_want){ FVS_F_##member, &out->member };
#define WANT_TABLE_FLAG WANT_TABLE_BATCH
#define WANT_TABLE_CODE(member, group)
	GPU_SAMPLE_FIELDS(WANT_TABLE)
	if (groups & GPU_GRP_BASIC)
		sample_basic(p, gpu, h, out, &rd);
	if ((groups & GPU_GRP_NVLINK) && !rd.lost)
		nw += want_nvlink(p, gpu, (groups & GPU_GRP_NVLINK_ERR) != 0, out, want + nw);
	if (nw && !rd.lost)
		out->nvlink_err_read_ns = nvml_fields_read(p, gpu, h, out->timestamp_ns, want, nw, &rd);
	if ((groups & GPU_GRP_ECC) && !rd.lost)
		sample_ecc_sram(p, h, out, &rd);
	if ((groups & GPU_GRP_PCIE) && !rd.lost)
		sample_pcie(p, h, out, &rd);
	if ((groups & GPU_GRP_GPM) && !rd.lost)
		nvml_gpm_sample(p, gpu, h, out);
	out->lost = rd.lost;
	p->gpu[gpu].last_sample_calls = nvml_thread_calls - calls0;
	out->duration_ns = gpu_backend_now_ns(be) - out->timestamp_ns;
	return finish(p, gpu, &rd, err);
}

/* Name and owner of a process from /proc (absent in another PID namespace). */
static void describe_process(struct gpu_process *gp)
{
	char path[64];
	gp->uid = (uint32_t)-1;
	snprintf(path, sizeof(path), "/proc/%u/comm", gp->pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(gp->name, sizeof(gp->name), f))
			gp->name[strcspn(gp->name, "\n")] = '\0';
		fclose(f);
	}
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%u", gp->pid);
	if (stat(path, &st) == 0) {
		gp->uid = st.st_uid;
		struct passwd pw, *res = NULL;
		char buf[1024];
		if (getpwuid_r(st.st_uid, &pw, buf, sizeof(buf), &res) == 0 && res)
			snprintf(gp->user, sizeof(gp->user), "%s", res->pw_name);
	}
}

int nvml_processes(struct gpu_backend *be, unsigned gpu, struct gpu_process *out, unsigned max, unsigned *n,
		   struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	struct nvml_api *api = &p->api;
	nvmlDevice_t h = NULL;
	*n = 0;
	int rc = gpu_handle(be, gpu, &h, err);
	if (rc != GPU_OK)
		return rc;
	nvmlProcessInfo_t info[GPU_MAX_PROCS];
	const char types[2] = { 'C', 'G' };
	for (int t = 0; t < 2; t++) {
		unsigned int count = GPU_MAX_PROCS;
		memset(info, 0, sizeof(info));
		nvmlReturn_t r = t == 0 ? NVML_CALL(api, DeviceGetComputeRunningProcesses, h, &count, info)
				        : NVML_CALL(api, DeviceGetGraphicsRunningProcesses, h, &count, info);
		if (r == NVML_ERROR_INSUFFICIENT_SIZE)
			count = GPU_MAX_PROCS; /* more than we keep: the first ones were filled */
		else if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
			continue;
		else if (r != NVML_SUCCESS) {
			nvml_call_error(p, err, gpu, "cannot list processes", r);
			return nvml_errcode(r);
		}
		for (unsigned i = 0; i < count && i < GPU_MAX_PROCS && *n < max; i++) {
			struct gpu_process *gp = &out[*n];
			memset(gp, 0, sizeof(*gp));
			gp->pid = info[i].pid;
			gp->type = types[t];
			/* NVML says "not available" with all ones (NVML_VALUE_NOT_AVAILABLE) */
			if (info[i].usedGpuMemory == ~0ULL)
				gp->used_mem_bytes.st = VAL_UNSUPPORTED;
			else
				VAL_SET(gp->used_mem_bytes, info[i].usedGpuMemory);
			gp->mig_gi = info[i].gpuInstanceId == 0xFFFFFFFFu ? -1 : (int)info[i].gpuInstanceId;
			describe_process(gp);
			(*n)++;
		}
	}
	return GPU_OK;
}

int nvml_mig_instances(struct gpu_backend *be, unsigned gpu, struct gpu_mig *out, unsigned max, unsigned *n,
		       struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	struct nvml_api *api = &p->api;
	nvmlDevice_t h = NULL;
	*n = 0;
	int rc = gpu_handle(be, gpu, &h, err);
	if (rc != GPU_OK)
		return rc;
	unsigned int cur = 0, pend = 0, count = 0;
	nvmlReturn_t r = NVML_CALL(api, DeviceGetMigMode, h, &cur, &pend);
	if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND || (r == NVML_SUCCESS && !cur))
		return GPU_OK; /* no MIG: no instances */
	if (r == NVML_SUCCESS)
		r = NVML_CALL(api, DeviceGetMaxMigDeviceCount, h, &count);
	if (r != NVML_SUCCESS) {
		nvml_call_error(p, err, gpu, "cannot read MIG devices", r);
		return nvml_errcode(r);
	}
	for (unsigned i = 0; i < count && *n < max; i++) {
		nvmlDevice_t m;
		r = NVML_CALL(api, DeviceGetMigDeviceHandleByIndex, h, i, &m);
		if (r == NVML_ERROR_NOT_FOUND || r == NVML_ERROR_INVALID_ARGUMENT)
			continue; /* an empty slot */
		if (r != NVML_SUCCESS) {
			nvml_call_error(p, err, gpu, "cannot read MIG device", r);
			return nvml_errcode(r);
		}
		struct gpu_mig *g = &out[*n];
		struct rd rdv = { 0 }, *rd = &rdv;
		memset(g, 0, sizeof(*g));
		unsigned int id = 0;
		if (NVML_CALL(api, DeviceGetGpuInstanceId, m, &id) == NVML_SUCCESS)
			g->gi_id = id;
		if (NVML_CALL(api, DeviceGetComputeInstanceId, m, &id) == NVML_SUCCESS)
			g->ci_id = id;
		char name[NVML_NAME_BUF] = "";
		if (NVML_CALL(api, DeviceGetName, m, name, sizeof(name)) != NVML_SUCCESS ||
		    nvml_mig_profile_from_name(name, g->profile, sizeof(g->profile)) != 0)
			snprintf(g->profile, sizeof(g->profile), "unknown");
		if (NVML_CALL(api, DeviceGetUUID, m, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
			g->uuid[0] = '\0';
		nvmlMemory_t mem = { 0, 0, 0 };
		r = NVML_CALL(api, DeviceGetMemoryInfo, m, &mem);
		nvml_put_u64(rd, &g->mem_total_bytes, r, mem.total, "MIG memory");
		nvml_put_u64(rd, &g->mem_used_bytes, r, mem.used, "MIG memory");
		nvmlDeviceAttributes_t at;
		memset(&at, 0, sizeof(at));
		r = NVML_CALL(api, DeviceGetAttributes, m, &at);
		nvml_put_u64(rd, &g->sm_count, r, at.multiprocessorCount, "MIG attributes");
		nvml_gpm_mig_sample(p, gpu, h, out, *n);
		(*n)++;
	}
	if (*n < max) /* every instance listed */
		nvml_gpm_mig_prune(p, gpu, out, *n);
	return GPU_OK;
}
