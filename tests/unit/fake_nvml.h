/* SPDX-License-Identifier: Apache-2.0 */
/* fake_nvml.h - a fake NVML for the nvml backend's unit tests
 * (test_nvml_backend.c, test_nvml_fields.c): an entry-point table of
 * functions defined here, given to the real backend code with the
 * nvml_open_with_api test hook; setup/teardown open and close it. Static
 * definitions: include it in one test file each. */
#ifndef GPUCTL_TEST_FAKE_NVML_H
#define GPUCTL_TEST_FAKE_NVML_H

#include "device/nvml_priv.h"
/* ---- the fake NVML: two H200s on NVSwitches; GPU 1 has link 3 down ---- */

static bool gpu1_lost;
static nvmlReturn_t init_rc;
static _Atomic unsigned pcie_throughput_calls; /* atomic: snapshot_take samples from threads */
static unsigned events_left;

static int gpu_of(nvmlDevice_t d) { return (int)(intptr_t)d - 1; }
#define CHECK(d) do { if (gpu_of(d) == 1 && gpu1_lost) return NVML_ERROR_GPU_IS_LOST; } while (0)

static nvmlReturn_t f_init(void) { return init_rc; }
static nvmlReturn_t f_shutdown(void) { return NVML_SUCCESS; }
static const char *f_error_string(nvmlReturn_t r)
{
	return r == NVML_ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : r == NVML_ERROR_GPU_IS_LOST ? "GPU is lost" : "Unknown Error";
}
static nvmlReturn_t f_driver(char *b, unsigned n) { snprintf(b, n, "580.159.04"); return NVML_SUCCESS; }
static nvmlReturn_t f_cuda(int *v) { *v = 13000; return NVML_SUCCESS; }
static nvmlReturn_t f_count(unsigned *n) { *n = 2; return NVML_SUCCESS; }
static nvmlReturn_t f_handle(unsigned i, nvmlDevice_t *d) { *d = (nvmlDevice_t)(intptr_t)(i + 1); return NVML_SUCCESS; }
static nvmlReturn_t f_name(nvmlDevice_t d, char *b, unsigned n) { CHECK(d); snprintf(b, n, "NVIDIA H200"); return NVML_SUCCESS; }
static nvmlReturn_t f_uuid(nvmlDevice_t d, char *b, unsigned n)
{
	CHECK(d);
	snprintf(b, n, "GPU-0000000%d-1111-2222-3333-444444444444", gpu_of(d));
	return NVML_SUCCESS;
}
static nvmlReturn_t f_pci(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	CHECK(d);
	memset(p, 0, sizeof(*p));
	snprintf(p->busId, sizeof(p->busId), gpu_of(d) ? "00000000:2A:00.0" : "00000000:18:00.0");
	return NVML_SUCCESS;
}
static nvmlReturn_t f_serial(nvmlDevice_t d, char *b, unsigned n)
{
	CHECK(d);
	if (gpu_of(d) == 1)
		return NVML_ERROR_NOT_SUPPORTED;
	snprintf(b, n, "1654024075727");
	return NVML_SUCCESS;
}
static nvmlReturn_t f_vbios(nvmlDevice_t d, char *b, unsigned n) { CHECK(d); snprintf(b, n, "96.00.A5.00.1A"); return NVML_SUCCESS; }
static nvmlReturn_t f_part(nvmlDevice_t d, char *b, unsigned n) { CHECK(d); snprintf(b, n, "692-2G520-0282-000"); return NVML_SUCCESS; }
static nvmlReturn_t f_arch(nvmlDevice_t d, unsigned *a) { CHECK(d); *a = 9; return NVML_SUCCESS; }
static nvmlReturn_t f_cc(nvmlDevice_t d, int *ma, int *mi) { CHECK(d); *ma = 9; *mi = 0; return NVML_SUCCESS; }
static nvmlReturn_t f_cores(nvmlDevice_t d, unsigned *c) { CHECK(d); *c = 16896; return NVML_SUCCESS; }
static nvmlReturn_t f_mem(nvmlDevice_t d, nvmlMemory_t *m)
{
	CHECK(d);
	m->total = 143771ULL << 20;
	m->used = 615ULL << 20;
	m->free = m->total - m->used;
	return NVML_SUCCESS;
}
static bool mem_v2_mismatch;
static nvmlReturn_t f_mem_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	CHECK(d);
	/* NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24 = 0x02000028 on x86-64 */
	if (mem_v2_mismatch || m->version != 0x02000028u)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->total = 143771ULL << 20;
	m->reserved = 616ULL << 20;
	m->used = 0;
	m->free = m->total - m->reserved;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_buswidth(nvmlDevice_t d, unsigned *w) { CHECK(d); *w = 6016; return NVML_SUCCESS; }
static nvmlReturn_t f_maxclock(nvmlDevice_t d, int t, unsigned *v) { CHECK(d); *v = t == NVML_CLOCK_SM ? 1980 : 3201; return NVML_SUCCESS; }
static nvmlReturn_t f_clock(nvmlDevice_t d, int t, unsigned *v) { CHECK(d); *v = t == NVML_CLOCK_SM ? 345 : 3201; return NVML_SUCCESS; }
static nvmlReturn_t f_plimit(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 700000; return NVML_SUCCESS; }
static nvmlReturn_t f_pdefault(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 700000; return NVML_SUCCESS; }
static nvmlReturn_t f_pconstraints(nvmlDevice_t d, unsigned *lo, unsigned *hi) { CHECK(d); *lo = 200000; *hi = 700000; return NVML_SUCCESS; }
static nvmlReturn_t f_penforced(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 650000; return NVML_SUCCESS; }
static nvmlReturn_t f_persist(nvmlDevice_t d, int *v) { CHECK(d); *v = 1; return NVML_SUCCESS; }
static nvmlReturn_t f_compute(nvmlDevice_t d, int *v) { CHECK(d); *v = 3; return NVML_SUCCESS; }
static nvmlReturn_t f_ecc(nvmlDevice_t d, int *c, int *p) { CHECK(d); *c = 1; *p = 0; return NVML_SUCCESS; }
/* MIG: off, unless fake_mig_on: then GPU 0 has fake_mig_n (two, or one)
 * instances, GPU instance ids 3 and 5, whose handles are 100 + index. */
static bool fake_mig_on;
static unsigned fake_mig_n;
static nvmlReturn_t f_mig(nvmlDevice_t d, unsigned *c, unsigned *p)
{
	CHECK(d);
	*c = *p = fake_mig_on && gpu_of(d) == 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_mig_count(nvmlDevice_t d, unsigned *n) { CHECK(d); *n = gpu_of(d) == 0 ? 7 : 0; return NVML_SUCCESS; }
static nvmlReturn_t f_mig_handle(nvmlDevice_t d, unsigned i, nvmlDevice_t *m)
{
	CHECK(d);
	if (gpu_of(d) != 0 || i >= fake_mig_n)
		return NVML_ERROR_NOT_FOUND; /* an empty slot */
	*m = (nvmlDevice_t)(intptr_t)(100 + i);
	return NVML_SUCCESS;
}
static nvmlReturn_t f_mig_gi(nvmlDevice_t m, unsigned *id) { *id = (intptr_t)m == 100 ? 3 : 5; return NVML_SUCCESS; }
static nvmlReturn_t f_mig_ci(nvmlDevice_t m, unsigned *id) { (void)m; *id = 0; return NVML_SUCCESS; }
static nvmlReturn_t f_gen_max(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 5; return NVML_SUCCESS; }
static nvmlReturn_t f_width_max(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 16; return NVML_SUCCESS; }
static nvmlReturn_t f_gen(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 4; return NVML_SUCCESS; }
static nvmlReturn_t f_width(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 8; return NVML_SUCCESS; }
static nvmlReturn_t f_throughput(nvmlDevice_t d, int c, unsigned *v)
{
	CHECK(d);
	pcie_throughput_calls++;
	*v = c == NVML_PCIE_UTIL_TX_BYTES ? 1000 : 2000;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_replay(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 3; return NVML_SUCCESS; }
static nvmlReturn_t f_util(nvmlDevice_t d, nvmlUtilization_t *u) { CHECK(d); u->gpu = 12; u->memory = 5; return NVML_SUCCESS; }
static nvmlReturn_t f_temp(nvmlDevice_t d, int s, unsigned *v) { CHECK(d); (void)s; *v = 34; return NVML_SUCCESS; }
static nvmlReturn_t f_threshold(nvmlDevice_t d, int t, unsigned *v)
{
	CHECK(d);
	*v = t == NVML_TEMP_THRESHOLD_SLOWDOWN ? 87 : 92;
	return NVML_SUCCESS;
}
/* nvmlDeviceGetFieldValues: answers what the single-value fakes answer, so
 * a sample reads the same values through the batch and without it.
 * field_rc[id] (when not 0) is the answer of field id, whatever its scope. */
static nvmlReturn_t field_rc[256];
/* atomic: snapshot_take reads the GPUs from threads of its own */
static _Atomic unsigned field_calls, field_values_asked;
static bool legacy_link_ids_unsupported;
static bool field_value(nvmlDevice_t d, unsigned id, unsigned scope, unsigned long long *v)
{
	unsigned flit0 = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0, flit6 = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L6;
	*v = 0;
	switch (id) {
	case NVML_FI_DEV_MEMORY_TEMP: *v = 36; return true;
	case NVML_FI_DEV_POWER_AVERAGE: *v = 75123; return scope == 0;
	case NVML_FI_DEV_POWER_INSTANT: *v = 80321; return scope == 0;
	case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION: *v = 123456789; return true;
	case NVML_FI_DEV_ECC_SBE_VOL_TOTAL: *v = 1; return true;
	case NVML_FI_DEV_ECC_SBE_AGG_TOTAL: *v = 10; return true;
	case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
	case NVML_FI_DEV_ECC_DBE_AGG_TOTAL: return true;
	case NVML_FI_DEV_ECC_DBE_AGG_DEV: *v = 2; return true;
	case NVML_FI_DEV_REMAPPED_COR: *v = 1; return true;
	case NVML_FI_DEV_REMAPPED_UNC: *v = 2; return true;
	case NVML_FI_DEV_REMAPPED_PENDING: *v = 1; return true;
	case NVML_FI_DEV_REMAPPED_FAILURE: return true;
	case NVML_FI_DEV_PCIE_REPLAY_COUNTER: *v = 3; return true;
	case NVML_FI_DEV_PCIE_L0_TO_RECOVERY_COUNTER: *v = 4; return scope == 0;
	case NVML_FI_DEV_PERF_POLICY_POWER: *v = 1000; return true; /* as f_violation */
	case NVML_FI_DEV_PERF_POLICY_POWER + 1: *v = 2000; return true;
	case NVML_FI_DEV_PERF_POLICY_POWER + 2: *v = 3000; return true;
	case NVML_FI_DEV_PERF_POLICY_POWER + 3: *v = 4000; return true;
	case NVML_FI_DEV_PERF_POLICY_POWER + 4: *v = 5000000000ULL; return true; /* over 32 bits */
	case NVML_FI_DEV_PERF_POLICY_POWER + 5: *v = 6000; return true;
	case NVML_FI_DEV_NVLINK_GET_STATE: *v = !(gpu_of(d) == 1 && scope == 3); return scope < 18;
	case NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY:
	case NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY: return scope < 18;
	default: break;
	}
	/* an H200 answers the per-link ids of links 0-11 "not supported" */
	if (legacy_link_ids_unsupported &&
	    ((id >= flit0 && id < flit0 + 6) || (id >= flit6 && id < flit6 + 6) ||
	     (id >= NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0 && id < NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0 + 6) ||
	     (id >= NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6 && id < NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6 + 6)))
		return false;
	if (id >= flit0 && id < flit0 + 6) { *v = id - flit0; return true; }        /* CRC flit of link l is l */
	if (id >= flit6 && id < flit6 + 6) { *v = id - flit6 + 6; return true; }
	const unsigned zero_from[] = { NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0, NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L0,
				       NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L0, NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6,
				       NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L6, NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L6 };
	for (size_t k = 0; k < sizeof(zero_from) / sizeof(zero_from[0]); k++)
		if (id >= zero_from[k] && id < zero_from[k] + 6)
			return true; /* data CRC, replay, recovery of links 0-11: 0 */
	return false; /* retired pages (Hopper remaps rows) and anything else */
}
static nvmlReturn_t f_fields(nvmlDevice_t d, int n, nvmlFieldValue_t *fv)
{
	CHECK(d);
	field_calls++;
	for (int i = 0; i < n; i++) {
		unsigned long long v = 0;
		field_values_asked++;
		bool ok = field_value(d, fv[i].fieldId, fv[i].scopeId, &v);
		fv[i].nvmlReturn = ok ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
		if (fv[i].fieldId < 256 && field_rc[fv[i].fieldId])
			fv[i].nvmlReturn = field_rc[fv[i].fieldId];
		/* the types a real driver uses vary: exercise two of them */
		if (v > 0xffffffffULL || fv[i].fieldId == NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION) {
			fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
			fv[i].value.ullVal = v;
		} else {
			fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
			fv[i].value.uiVal = (unsigned)v;
		}
	}
	return NVML_SUCCESS;
}
static nvmlReturn_t f_violation(nvmlDevice_t d, int policy, nvmlViolationTime_t *vt)
{
	CHECK(d);
	vt->referenceTime = 1;
	vt->violationTime = policy == NVML_PERF_POLICY_LOW_UTILIZATION ? 5000000000ULL : (unsigned long long)(policy + 1) * 1000;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_fan(nvmlDevice_t d, unsigned *v) { CHECK(d); (void)v; return NVML_ERROR_NOT_SUPPORTED; }
static nvmlReturn_t f_power(nvmlDevice_t d, unsigned *v) { CHECK(d); *v = 75123; return NVML_SUCCESS; }
static nvmlReturn_t f_energy(nvmlDevice_t d, unsigned long long *v) { CHECK(d); *v = 123456789; return NVML_SUCCESS; }
static nvmlReturn_t f_pstate(nvmlDevice_t d, int *v) { CHECK(d); *v = 0; return NVML_SUCCESS; }
static nvmlReturn_t f_events_reasons(nvmlDevice_t d, unsigned long long *v) { CHECK(d); *v = CLK_EVT_GPU_IDLE; return NVML_SUCCESS; }
static nvmlReturn_t f_ecc_total(nvmlDevice_t d, int type, int counter, unsigned long long *v)
{
	CHECK(d);
	*v = type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? (counter == NVML_VOLATILE_ECC ? 1 : 10) : 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_ecc_loc(nvmlDevice_t d, int type, int counter, int loc, unsigned long long *v)
{
	CHECK(d);
	(void)type; (void)counter;
	*v = loc == NVML_MEMORY_LOCATION_DRAM ? 2 : 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_retired(nvmlDevice_t d, int c, unsigned *n, unsigned long long *a)
{
	CHECK(d);
	(void)c; (void)n; (void)a;
	return NVML_ERROR_NOT_SUPPORTED; /* Hopper remaps rows instead */
}
static nvmlReturn_t f_remapped(nvmlDevice_t d, unsigned *c, unsigned *u, unsigned *p, unsigned *f)
{
	CHECK(d);
	*c = 1; *u = 2; *p = 1; *f = 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_nvl_state(nvmlDevice_t d, unsigned l, int *s)
{
	CHECK(d);
	if (l >= 18)
		return NVML_ERROR_INVALID_ARGUMENT;
	*s = !(gpu_of(d) == 1 && l == 3);
	return NVML_SUCCESS;
}
static nvmlReturn_t f_nvl_version(nvmlDevice_t d, unsigned l, unsigned *v) { CHECK(d); (void)l; *v = 6; return NVML_SUCCESS; }
static nvmlReturn_t f_nvl_remote(nvmlDevice_t d, unsigned l, nvmlPciInfo_t *p)
{
	CHECK(d);
	memset(p, 0, sizeof(*p));
	/* links 0-15 show the switch; 16, 17 the all-ones id a VM answers */
	snprintf(p->busId, sizeof(p->busId), l < 16 ? "00000000:05:00.0" : "FFFFFFFF:FF:FF.0");
	return NVML_SUCCESS;
}
static nvmlReturn_t f_nvl_type(nvmlDevice_t d, unsigned l, int *t) { CHECK(d); (void)l; *t = NVML_NVLINK_DEVICE_TYPE_SWITCH; return NVML_SUCCESS; }
static nvmlReturn_t f_nvl_err(nvmlDevice_t d, unsigned l, int c, unsigned long long *v)
{
	CHECK(d);
	*v = c == NVML_NVLINK_ERROR_DL_CRC_FLIT ? l : 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_common_ancestor(nvmlDevice_t a, nvmlDevice_t b, int *lvl)
{
	CHECK(a);
	CHECK(b);
	*lvl = NVML_TOPOLOGY_HOSTBRIDGE;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_p2p(nvmlDevice_t a, nvmlDevice_t b, int idx, int *st)
{
	CHECK(a);
	CHECK(b);
	*st = idx == NVML_P2P_CAPS_INDEX_NVLINK ? NVML_P2P_STATUS_OK : 5;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_cpu_aff(nvmlDevice_t d, unsigned n, unsigned long *m, unsigned scope)
{
	CHECK(d);
	(void)scope;
	memset(m, 0, n * sizeof(*m));
	m[0] = 0xffffffffUL; /* 0-31 */
	return NVML_SUCCESS;
}
static nvmlReturn_t f_mem_aff(nvmlDevice_t d, unsigned n, unsigned long *m, unsigned scope)
{
	CHECK(d);
	(void)scope;
	memset(m, 0, n * sizeof(*m));
	m[0] = 1UL << gpu_of(d); /* GPU 0 on node 0, GPU 1 on node 1 */
	return NVML_SUCCESS;
}
static nvmlReturn_t f_procs(nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *p)
{
	CHECK(d);
	if (gpu_of(d) == 1) {
		*n = 0;
		return NVML_SUCCESS;
	}
	p[0].pid = (unsigned)getpid();
	p[0].usedGpuMemory = 1ULL << 30;
	p[0].gpuInstanceId = 0xFFFFFFFFu;
	p[0].computeInstanceId = 0xFFFFFFFFu;
	*n = 1;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_fabric(nvmlDevice_t d, nvmlGpuFabricInfo_t *fi)
{
	CHECK(d);
	memset(fi, 0, sizeof(*fi));
	fi->state = NVML_GPU_FABRIC_STATE_COMPLETED;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_evset_create(nvmlEventSet_t *s) { *s = (nvmlEventSet_t)(intptr_t)0x5e7; return NVML_SUCCESS; }
static nvmlReturn_t f_register(nvmlDevice_t d, unsigned long long t, nvmlEventSet_t s) { (void)d; (void)t; (void)s; return NVML_SUCCESS; }
static nvmlReturn_t f_wait(nvmlEventSet_t s, nvmlEventData_t *e, unsigned ms)
{
	(void)s; (void)ms;
	if (!events_left)
		return NVML_ERROR_TIMEOUT;
	events_left--;
	e->device = (nvmlDevice_t)(intptr_t)2;
	e->eventType = NVML_EVENT_XID;
	e->eventData = 79;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_evset_free(nvmlEventSet_t s) { (void)s; return NVML_SUCCESS; }

/* GPM: GPU 0 has it, GPU 1 does not. A sample holds its GPU and a
 * sequence number; the metrics between two samples say which metric they
 * are (SM activity 93.4 %, ...), and the NVLink ones are "not supported". */
struct nvmlGpmSample_st { int gpu; unsigned seq; };
static unsigned gpm_seq, gpm_live, gpm_metrics_calls;
static nvmlReturn_t gpm_get_rc;
static nvmlReturn_t f_gpm_support(nvmlDevice_t d, nvmlGpmSupport_t *s)
{
	CHECK(d);
	if (s->version != 1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	s->isSupportedDevice = gpu_of(d) == 0;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_gpm_alloc(nvmlGpmSample_t *s)
{
	*s = calloc(1, sizeof(**s));
	gpm_live++;
	return *s ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}
static nvmlReturn_t f_gpm_free(nvmlGpmSample_t s) { free(s); gpm_live--; return NVML_SUCCESS; }
static nvmlReturn_t f_gpm_get(nvmlDevice_t d, nvmlGpmSample_t s)
{
	CHECK(d);
	if (gpm_get_rc)
		return gpm_get_rc;
	s->gpu = gpu_of(d);
	s->seq = ++gpm_seq;
	return NVML_SUCCESS;
}
/* A MIG instance's sample: its GPU and instance in .gpu (GPU * 100 + gi), so
 * that the metrics refuse two samples of different instances. */
static unsigned gpm_mig_gets;
static nvmlReturn_t f_gpm_mig_get(nvmlDevice_t d, unsigned gi, nvmlGpmSample_t s)
{
	CHECK(d);
	gpm_mig_gets++;
	if (gpm_get_rc)
		return gpm_get_rc;
	s->gpu = gpu_of(d) * 100 + (int)gi;
	s->seq = ++gpm_seq;
	return NVML_SUCCESS;
}
static nvmlReturn_t f_gpm_metrics(nvmlGpmMetricsGet_t *m)
{
	gpm_metrics_calls++;
	if (m->version != 1 || !m->sample1 || !m->sample2 || m->sample1->seq >= m->sample2->seq ||
	    m->sample1->gpu != m->sample2->gpu || m->numMetrics > NVML_GPM_METRICS_LEN)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < m->numMetrics; i++) {
		nvmlGpmMetric_t *x = &m->metrics[i];
		x->nvmlReturn = NVML_SUCCESS;
		switch (x->metricId) {
		case NVML_GPM_METRIC_SM_UTIL: x->value = 93.4; break;
		case NVML_GPM_METRIC_SM_OCCUPANCY: x->value = 15.2; break;
		case NVML_GPM_METRIC_ANY_TENSOR_UTIL: x->value = 88.6; break;
		case NVML_GPM_METRIC_DRAM_BW_UTIL: x->value = 16.5; break;
		case NVML_GPM_METRIC_FP64_UTIL: x->value = 0; break;
		case NVML_GPM_METRIC_FP32_UTIL: x->value = 3.2; break;
		case NVML_GPM_METRIC_FP16_UTIL: x->value = 1; break;
		case NVML_GPM_METRIC_PCIE_TX_PER_SEC: x->value = 10; break;    /* MiB/s */
		case NVML_GPM_METRIC_PCIE_RX_PER_SEC: x->value = 20.5; break;
		default: x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; break;
		}
	}
	return NVML_SUCCESS;
}

/* The GPU instance profile queries, the NVML version and the rest stay NULL: a driver
 * without them, whose values must read "not supported". */
static struct nvml_api fake(void)
{
	struct nvml_api a;
	memset(&a, 0, sizeof(a));
	a.Init = f_init; a.Shutdown = f_shutdown; a.ErrorString = f_error_string;
	a.SystemGetDriverVersion = f_driver; a.SystemGetCudaDriverVersion = f_cuda;
	a.DeviceGetCount = f_count; a.DeviceGetHandleByIndex = f_handle;
	a.DeviceGetName = f_name; a.DeviceGetUUID = f_uuid; a.DeviceGetPciInfo = f_pci;
	a.DeviceGetSerial = f_serial; a.DeviceGetVbiosVersion = f_vbios; a.DeviceGetBoardPartNumber = f_part;
	a.DeviceGetArchitecture = f_arch; a.DeviceGetCudaComputeCapability = f_cc; a.DeviceGetNumGpuCores = f_cores;
	a.DeviceGetMemoryInfo = f_mem; a.DeviceGetMemoryInfoV2 = f_mem_v2; a.DeviceGetMemoryBusWidth = f_buswidth;
	a.DeviceGetMaxClockInfo = f_maxclock; a.DeviceGetClockInfo = f_clock;
	a.DeviceGetPowerManagementLimit = f_plimit; a.DeviceGetPowerManagementDefaultLimit = f_pdefault;
	a.DeviceGetPowerManagementLimitConstraints = f_pconstraints; a.DeviceGetEnforcedPowerLimit = f_penforced;
	a.DeviceGetPersistenceMode = f_persist; a.DeviceGetComputeMode = f_compute;
	a.DeviceGetEccMode = f_ecc; a.DeviceGetMigMode = f_mig;
	a.DeviceGetGpuMaxPcieLinkGeneration = f_gen_max; a.DeviceGetMaxPcieLinkWidth = f_width_max;
	a.DeviceGetCurrPcieLinkGeneration = f_gen; a.DeviceGetCurrPcieLinkWidth = f_width;
	a.DeviceGetPcieThroughput = f_throughput; a.DeviceGetPcieReplayCounter = f_replay;
	a.DeviceGetUtilizationRates = f_util; a.DeviceGetTemperature = f_temp;
	a.DeviceGetTemperatureThreshold = f_threshold; a.DeviceGetFieldValues = f_fields;
	a.DeviceGetFanSpeed = f_fan; a.DeviceGetPowerUsage = f_power; a.DeviceGetTotalEnergyConsumption = f_energy;
	a.DeviceGetPerformanceState = f_pstate; a.DeviceGetCurrentClocksEventReasons = f_events_reasons;
	a.DeviceGetViolationStatus = f_violation;
	a.DeviceGetTotalEccErrors = f_ecc_total; a.DeviceGetMemoryErrorCounter = f_ecc_loc;
	a.DeviceGetRetiredPages = f_retired; a.DeviceGetRemappedRows = f_remapped;
	a.DeviceGetNvLinkState = f_nvl_state; a.DeviceGetNvLinkVersion = f_nvl_version;
	a.DeviceGetNvLinkRemotePciInfo = f_nvl_remote; a.DeviceGetNvLinkRemoteDeviceType = f_nvl_type;
	a.DeviceGetNvLinkErrorCounter = f_nvl_err;
	a.DeviceGetTopologyCommonAncestor = f_common_ancestor; a.DeviceGetP2PStatus = f_p2p;
	a.DeviceGetCpuAffinityWithinScope = f_cpu_aff; a.DeviceGetMemoryAffinity = f_mem_aff;
	a.DeviceGetComputeRunningProcesses = f_procs; a.DeviceGetGpuFabricInfo = f_fabric;
	a.EventSetCreate = f_evset_create; a.DeviceRegisterEvents = f_register;
	a.EventSetWait = f_wait; a.EventSetFree = f_evset_free;
	a.GpmQueryDeviceSupport = f_gpm_support; a.GpmSampleAlloc = f_gpm_alloc; a.GpmSampleFree = f_gpm_free;
	a.GpmSampleGet = f_gpm_get; a.GpmMetricsGet = f_gpm_metrics; a.GpmMigSampleGet = f_gpm_mig_get;
	a.DeviceGetMaxMigDeviceCount = f_mig_count; a.DeviceGetMigDeviceHandleByIndex = f_mig_handle;
	a.DeviceGetGpuInstanceId = f_mig_gi; a.DeviceGetComputeInstanceId = f_mig_ci;
	return a;
}

static int setup(void **state)
{
	static struct gpu_backend be;
	struct gpu_err err = { "" };
	struct nvml_api api = fake();
	gpu1_lost = false;
	init_rc = NVML_SUCCESS;
	pcie_throughput_calls = 0;
	events_left = 0;
	memset(field_rc, 0, sizeof(field_rc));
	field_calls = field_values_asked = 0;
	legacy_link_ids_unsupported = false;
	mem_v2_mismatch = false;
	gpm_seq = gpm_live = gpm_metrics_calls = gpm_mig_gets = 0;
	fake_mig_on = false;
	fake_mig_n = 2;
	gpm_get_rc = NVML_SUCCESS;
	memset(&be, 0, sizeof(be));
	if (nvml_open_with_api(&be, &api, &err) != GPU_OK)
		return -1;
	*state = &be;
	return 0;
}

static int teardown(void **state)
{
	gpu_backend_close(*state);
	return 0;
}

#endif
