/* test_nvml_backend.c - the nvml backend's real code driven through a fake
 * NVML (an entry-point table of functions defined here, given to the backend
 * with the nvml_open_with_api test hook): every field of gpu.h filled,
 * "not supported" where NVML says so or lacks the function, a lost GPU,
 * topology and NVLink counting, processes, XID events, and snapshot_take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/nvml_priv.h"
#include "sampler/sampler.h"

/* ---- the fake NVML: two H200s on NVSwitches; GPU 1 has link 3 down ---- */

static bool gpu1_lost;
static nvmlReturn_t init_rc;
static unsigned pcie_throughput_calls;
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
static nvmlReturn_t f_mig(nvmlDevice_t d, unsigned *c, unsigned *p) { CHECK(d); *c = 0; *p = 0; return NVML_SUCCESS; }
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
static unsigned field_calls, field_values_asked;
static bool field_value(nvmlDevice_t d, unsigned id, unsigned scope, unsigned long long *v)
{
	unsigned flit0 = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0, flit6 = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L6;
	*v = 0;
	switch (id) {
	case NVML_FI_DEV_MEMORY_TEMP: *v = 36; return true;
	case NVML_FI_DEV_POWER_AVERAGE: *v = 75123; return scope == 0;
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

/* GPU instance queries, the NVML version and the rest stay NULL: a driver
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
	mem_v2_mismatch = false;
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

/* ---- tests ---- */

static void test_system(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_system sys;
	struct gpu_err err = { "" };
	assert_int_equal(be->gpu_count, 2);
	assert_int_equal(be->ops->system_info(be, &sys, &err), GPU_OK);
	assert_false(sys.simulated);
	assert_string_equal(sys.backend, "nvml");
	assert_string_equal(sys.driver_version.s, "580.159.04");
	assert_string_equal(sys.cuda_driver_version.s, "13.0");
	assert_int_equal(sys.nvml_version.st, VAL_UNSUPPORTED); /* function absent */
	assert_int_equal(sys.fabric_manager_running.st, VAL_OK);
	assert_int_equal(sys.fabric_manager_running.v, 1);
	assert_int_equal(sys.hostname.st, VAL_OK);
}

static void test_static(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_static st;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->static_info(be, 0, &st, &err), GPU_OK);
	assert_string_equal(st.name.s, "NVIDIA H200");
	assert_string_equal(st.uuid.s, "GPU-00000000-1111-2222-3333-444444444444");
	assert_string_equal(st.pci_bus_id.s, "00000000:18:00.0");
	assert_string_equal(st.serial.s, "1654024075727");
	assert_string_equal(st.architecture.s, "Hopper");
	assert_int_equal(st.cc_major.v, 9);
	assert_int_equal(st.sm_count.v, 132);
	assert_int_equal(st.cuda_cores.v, 16896);
	assert_true(st.mem_total_bytes.v == 143771ULL << 20);
	assert_int_equal(st.mem_bus_width_bits.v, 6016);
	assert_int_equal(st.max_sm_clock_mhz.v, 1980);
	assert_int_equal(st.max_mem_clock_mhz.v, 3201);
	assert_int_equal(st.power_limit_mw.v, 700000);
	assert_int_equal(st.power_max_limit_mw.v, 700000);
	assert_int_equal(st.persistence_mode.v, 1);
	assert_int_equal(st.compute_mode.v, COMPUTE_EXCLUSIVE_PROCESS);
	assert_int_equal(st.ecc_mode.v, 1);
	assert_int_equal(st.ecc_mode_pending.v, 0);
	assert_int_equal(st.mig_mode.v, 0);
	assert_int_equal(st.pcie_gen_max.v, 5);
	assert_int_equal(st.pcie_width_max.v, 16);
	assert_int_equal(st.nvlink_count.v, 18);
	assert_int_equal(st.numa_node.v, 0);
	assert_string_equal(st.cpu_affinity.s, "0-31");
	/* every field was read: present, not supported or an error, never "not read" */
	strv *strs[] = { &st.name, &st.uuid, &st.pci_bus_id, &st.serial, &st.vbios_version, &st.board_part_number,
			 &st.architecture, &st.cpu_affinity, &st.catalog_model };
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		assert_int_not_equal(strs[i]->st, VAL_UNKNOWN);
	u64v nums[] = { st.cc_major, st.cc_minor, st.sm_count, st.cuda_cores, st.mem_total_bytes, st.mem_bus_width_bits,
			st.max_sm_clock_mhz, st.max_mem_clock_mhz, st.power_limit_mw, st.power_default_limit_mw,
			st.power_max_limit_mw, st.persistence_mode, st.compute_mode, st.ecc_mode, st.ecc_mode_pending,
			st.mig_mode, st.mig_mode_pending, st.pcie_gen_max, st.pcie_width_max, st.nvlink_count };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		assert_int_equal(nums[i].st, VAL_OK);
	assert_int_equal(st.numa_node.st, VAL_OK);

	/* GPU 1: the serial is not supported, and says so */
	assert_int_equal(be->ops->static_info(be, 1, &st, &err), GPU_OK);
	assert_int_equal(st.serial.st, VAL_UNSUPPORTED);
	assert_int_equal(st.numa_node.v, 1);
	assert_int_equal(be->ops->static_info(be, 2, &st, &err), GPU_ENODEV);
}

static void test_sample_all(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_ALL, &s, &err), GPU_OK);
	assert_false(s.lost);
	assert_int_equal(s.util_gpu_pct.v, 12);
	assert_int_equal(s.util_mem_pct.v, 5);
	/* _v2: used without the driver's reservation, as nvidia-smi shows it */
	assert_int_equal(s.mem_used_bytes.v, 0);
	assert_true(s.mem_free_bytes.v == (143771ULL - 616) << 20);
	assert_int_equal(s.temp_c.v, 34);
	assert_int_equal(s.temp_mem_c.v, 36);
	assert_int_equal(s.temp_slowdown_c.v, 87);
	assert_int_equal(s.temp_shutdown_c.v, 92);
	assert_int_equal(s.fan_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(s.power_mw.v, 75123);
	assert_int_equal(s.power_limit_mw.v, 650000);
	assert_int_equal(s.energy_mj.v, 123456789);
	assert_int_equal(s.sm_clock_mhz.v, 345);
	assert_int_equal(s.pstate.st, VAL_OK);
	assert_int_equal(s.pstate.v, 0);
	assert_true(s.clock_event_reasons.v == CLK_EVT_GPU_IDLE);
	assert_int_equal(s.viol_power_ns.v, 1000);
	assert_int_equal(s.viol_thermal_ns.v, 2000);
	assert_true(s.viol_low_util_ns.v == 5000000000ULL);
	assert_int_equal(s.viol_reliability_ns.v, 6000);
	assert_int_equal(s.ecc_vol_corrected.v, 1);
	assert_int_equal(s.ecc_agg_corrected.v, 10);
	assert_int_equal(s.ecc_dram_uncorrected.v, 2);
	assert_int_equal(s.retired_pages_sbe.st, VAL_UNSUPPORTED);
	assert_int_equal(s.remap_uncorrected.v, 2);
	assert_int_equal(s.remap_pending.v, 1);
	assert_int_equal(s.pcie_gen.v, 4);
	assert_int_equal(s.pcie_width.v, 8);
	assert_int_equal(s.pcie_tx_kbps.v, 1000);
	assert_int_equal(s.pcie_rx_kbps.v, 2000);
	assert_int_equal(s.pcie_replays.v, 3);
	assert_int_equal(s.nvlink_n, 18);
	assert_int_equal(s.nvlink[0].active.v, 1);
	assert_int_equal(s.nvlink[0].version.v, 4); /* NVML's 6 is NVLink 4.0 */
	assert_string_equal(s.nvlink[0].remote_pci_bus_id.s, "00000000:05:00.0");
	assert_int_equal(s.nvlink[17].remote_pci_bus_id.st, VAL_UNSUPPORTED); /* FFFFFFFF:FF:FF.0 */
	assert_int_equal(s.nvlink[7].crc_flit_errors.v, 7);
	assert_int_equal(s.nvlink[7].tx_bytes.st, VAL_UNSUPPORTED);
	/* every metric was read with all groups on */
	u64v all[] = { s.util_gpu_pct, s.util_mem_pct, s.mem_used_bytes, s.mem_free_bytes, s.mem_total_bytes, s.temp_c,
		       s.temp_mem_c, s.temp_slowdown_c, s.temp_shutdown_c, s.fan_pct, s.power_mw, s.power_limit_mw,
		       s.energy_mj, s.sm_clock_mhz, s.mem_clock_mhz, s.pstate, s.clock_event_reasons, s.viol_power_ns,
		       s.viol_thermal_ns, s.viol_sync_boost_ns, s.viol_board_limit_ns, s.viol_low_util_ns,
		       s.viol_reliability_ns, s.ecc_vol_corrected, s.ecc_vol_uncorrected, s.ecc_agg_corrected,
		       s.ecc_agg_uncorrected, s.ecc_sram_uncorrected, s.ecc_dram_uncorrected, s.retired_pages_sbe,
		       s.retired_pages_dbe, s.retired_pages_pending, s.remap_corrected, s.remap_uncorrected,
		       s.remap_pending, s.remap_failure, s.pcie_gen, s.pcie_width, s.pcie_tx_kbps, s.pcie_rx_kbps,
		       s.pcie_replays };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_not_equal(all[i].st, VAL_UNKNOWN);

	/* GPU 1: link 3 is down */
	assert_int_equal(be->ops->sample(be, 1, GPU_GRP_NVLINK, &s, &err), GPU_OK);
	assert_int_equal(s.nvlink[3].active.v, 0);
	assert_int_equal(s.nvlink[4].active.v, 1);
}

static void test_memory_v1_fallback(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	mem_v2_mismatch = true; /* a driver that does not know the v2 struct */
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_true(s.mem_used_bytes.v == 615ULL << 20);
	assert_true(s.mem_total_bytes.v == 143771ULL << 20);
}

static void test_sample_groups(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_int_equal(s.temp_c.st, VAL_OK);
	/* skipped groups are "not read", and the slow PCIe throughput call was not made */
	assert_int_equal(s.ecc_vol_corrected.st, VAL_UNKNOWN);
	assert_int_equal(s.pcie_tx_kbps.st, VAL_UNKNOWN);
	assert_int_equal(s.nvlink_n, 0);
	assert_int_equal(pcie_throughput_calls, 0);
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_PCIE, &s, &err), GPU_OK);
	assert_int_equal(pcie_throughput_calls, 2);
	assert_int_equal(s.temp_c.st, VAL_UNKNOWN);
}

static void test_links(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_link l;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->link(be, 0, 0, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_SELF);
	assert_int_equal(be->ops->link(be, 0, 1, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_NVLINK);
	assert_int_equal(l.nvlinks, 17); /* 18 switch links, the peer has 17 up */
	assert_int_equal(l.pcie, LINK_PHB);
	assert_true(l.p2p_supported);
	assert_int_equal(be->ops->link(be, 0, 5, &l, &err), GPU_ENODEV);
}

static void test_processes(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_process p[4];
	unsigned n = 99;
	struct gpu_err err = { "" };
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_int_equal(be->ops->processes(be, 0, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, (unsigned)getpid());
	assert_int_equal(p[0].type, 'C');
	assert_string_equal(p[0].name, comm);
	assert_int_equal(p[0].uid, getuid());
	assert_int_equal(p[0].mig_gi, -1);
	assert_true(p[0].used_mem_bytes.v == 1ULL << 30);
	assert_int_equal(be->ops->processes(be, 1, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	/* MIG disabled: no instances */
	struct gpu_mig m[2];
	assert_int_equal(be->ops->mig_instances(be, 0, m, 2, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
}

static void test_lost_gpu(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_static st;
	struct gpu_err err = { "" };
	gpu1_lost = true;
	assert_int_equal(be->ops->sample(be, 1, GPU_GRP_ALL, &s, &err), GPU_ENODEV);
	assert_true(s.lost);
	assert_int_equal(s.temp_c.st, VAL_UNKNOWN); /* nothing after the first failed call */
	assert_int_equal(s.mem_used_bytes.st, VAL_ERROR);
	assert_non_null(strstr(err.msg, "GPU 1 has fallen off the bus"));
	assert_int_equal(be->ops->static_info(be, 1, &st, &err), GPU_ENODEV);
	assert_int_equal(st.name.st, VAL_ERROR);
	/* the other GPU is unaffected */
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_false(s.lost);

	struct snapshot *snap = malloc(sizeof(*snap));
	assert_non_null(snap);
	assert_int_equal(snapshot_take(be, GPU_GRP_ALL, snap, &err), GPU_OK);
	assert_int_equal(snap->n, 2);
	assert_true(snap->gpu[0].up);
	assert_int_equal(snap->gpu[0].st.sm_count.v, 132);
	assert_int_equal(snap->gpu[0].nproc, 1);
	assert_false(snap->gpu[1].up);
	assert_non_null(strstr(snap->gpu[1].last_error, "fallen off the bus"));
	assert_int_equal(snap->link[0][0].kind, LINK_SELF);
	assert_int_equal(snap->link[0][1].kind, LINK_UNKNOWN); /* the peer is lost */
	free(snap);
}

static void test_snapshot(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_err err = { "" };
	struct snapshot *snap = malloc(sizeof(*snap));
	assert_non_null(snap);
	assert_int_equal(snapshot_take(be, GPU_GRP_BASIC, snap, &err), GPU_OK);
	assert_string_equal(snap->sys.backend, "nvml");
	for (unsigned i = 0; i < 2; i++) {
		assert_true(snap->gpu[i].up);
		assert_int_equal(snap->gpu[i].st.index, i);
		assert_int_equal(snap->gpu[i].s.temp_c.v, 34);
		assert_int_equal(snap->link[i][1 - i].kind, LINK_NVLINK);
	}
	assert_string_equal(snap->gpu[1].st.pci_bus_id.s, "00000000:2A:00.0");
	free(snap);
}

static void test_events(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_event ev[4];
	unsigned n = 99;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->poll_events(be, 0, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	events_left = 2;
	assert_int_equal(be->ops->poll_events(be, 10, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].kind, EVT_XID);
	assert_int_equal(ev[0].xid, 79);
	assert_int_equal(ev[0].gpu, 1);
	assert_string_equal(ev[0].detail, "XID 79");
}

static void test_init_failure(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_err err = { "" };
	struct nvml_api api = fake();
	memset(&be, 0, sizeof(be));
	init_rc = NVML_ERROR_DRIVER_NOT_LOADED;
	assert_int_equal(nvml_open_with_api(&be, &api, &err), GPU_ENODRIVER);
	assert_string_equal(err.msg, "NVML initialisation failed: Driver Not Loaded");
	assert_null(be.ops);
	init_rc = NVML_SUCCESS;
}

/* ---- NVML calls per sample: nvmlDeviceGetFieldValues batches the counters ---- */

/* Samples GPU 0 with the groups; returns the NVML calls the backend counted. */
static unsigned long calls_for(struct gpu_backend *be, unsigned groups, struct gpu_sample *s)
{
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, groups, s, &err), GPU_OK);
	return nvml_last_sample_calls(be, 0);
}

static void assert_nvlink_values(const struct gpu_sample *s)
{
	assert_int_equal(s->nvlink_n, 18);
	for (unsigned l = 0; l < 18; l++) {
		assert_int_equal(s->nvlink[l].active.st, VAL_OK);
		assert_int_equal(s->nvlink[l].active.v, 1);
		assert_int_equal(s->nvlink[l].crc_flit_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].crc_flit_errors.v, l);
		assert_int_equal(s->nvlink[l].crc_data_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].replay_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].recovery_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].recovery_errors.v, 0);
	}
}

static void test_calls_per_group(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	calls_for(be, GPU_GRP_ALL, &s); /* the first sample learns the link facts and what the batch delivers */

	/* basic: util, memory, temperature, power limit, 2 clocks, P-state, clock
	 * events, and one batch for memory temperature, power and energy; the
	 * fan ("not supported" on the first sample) is not asked again */
	field_calls = 0;
	assert_int_equal(calls_for(be, GPU_GRP_BASIC, &s), 9);
	assert_int_equal(s.fan_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(field_calls, 1);
	assert_int_equal(s.power_mw.v, 75123);
	assert_int_equal(s.energy_mj.v, 123456789);
	assert_int_equal(s.temp_mem_c.v, 36);

	/* ECC: one batch and the SRAM counter; retired pages (not supported
	 * either way on this GPU) cost nothing after the first sample */
	assert_int_equal(calls_for(be, GPU_GRP_ECC, &s), 2);
	assert_int_equal(s.retired_pages_sbe.st, VAL_UNSUPPORTED);
	assert_int_equal(s.retired_pages_pending.st, VAL_UNSUPPORTED);
	assert_int_equal(s.ecc_vol_corrected.v, 1);
	assert_int_equal(s.ecc_agg_corrected.v, 10);
	assert_int_equal(s.ecc_agg_uncorrected.st, VAL_OK);
	assert_int_equal(s.ecc_dram_uncorrected.v, 2);
	assert_int_equal(s.remap_corrected.v, 1);
	assert_int_equal(s.remap_uncorrected.v, 2);
	assert_int_equal(s.remap_pending.v, 1);
	assert_int_equal(s.remap_failure.st, VAL_OK);
	assert_int_equal(s.remap_failure.v, 0);

	/* PCIe: gen, width, two throughput calls and the batch (replays) */
	assert_int_equal(calls_for(be, GPU_GRP_PCIE, &s), 5);
	assert_int_equal(s.pcie_replays.v, 3);

	/* NVLink, 18 links: was 90 calls. One batch for state, replay and
	 * recovery of all links and both CRC counters of links 0-11; the CRC
	 * counters of links 12-17 have no field id whose meaning nvml.h states. */
	field_calls = field_values_asked = 0;
	assert_int_equal(calls_for(be, GPU_GRP_NVLINK, &s), 1 + 6 * 2);
	assert_int_equal(field_calls, 1);
	assert_int_equal(field_values_asked, 18 * 3 + 12 * 2);
	assert_nvlink_values(&s);

	/* violation counters: was 6 calls, now in the batch */
	assert_int_equal(calls_for(be, GPU_GRP_VIOL, &s), 1);
	assert_int_equal(s.viol_sync_boost_ns.v, 3000);
	assert_int_equal(s.viol_board_limit_ns.v, 4000);

	/* everything at once: still one batch (was 123 calls) */
	field_calls = 0;
	assert_int_equal(calls_for(be, GPU_GRP_ALL, &s), 9 + 2 + 5 + 13 + 1 - 4);
	assert_int_equal(field_calls, 1);
}

/* A driver that answers the CRC counters of links 12-17 "not supported":
 * after the first sample the NVLink group is one call. */
static nvmlReturn_t f_nvl_err_low_links_only(nvmlDevice_t d, unsigned l, int c, unsigned long long *v)
{
	CHECK(d);
	if (l >= 12)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = c == NVML_NVLINK_ERROR_DL_CRC_FLIT ? l : 0;
	return NVML_SUCCESS;
}

static void open_fake(struct gpu_backend *be, const struct nvml_api *api)
{
	struct gpu_err err = { "" };
	memset(be, 0, sizeof(*be));
	assert_int_equal(nvml_open_with_api(be, api, &err), GPU_OK);
}

static void test_nvlink_one_call(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_sample s;
	struct nvml_api api = fake();
	api.DeviceGetNvLinkErrorCounter = f_nvl_err_low_links_only;
	open_fake(&be, &api);
	calls_for(&be, GPU_GRP_NVLINK, &s);
	assert_int_equal(calls_for(&be, GPU_GRP_NVLINK, &s), 1);
	assert_int_equal(s.nvlink[12].crc_flit_errors.st, VAL_UNSUPPORTED);
	assert_int_equal(s.nvlink[12].replay_errors.st, VAL_OK);
	assert_int_equal(s.nvlink[11].crc_flit_errors.v, 11);
	gpu_backend_close(&be);
}

/* Each field's own return code decides its value's status. */
static void test_field_status(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	field_rc[NVML_FI_DEV_REMAPPED_UNC] = NVML_ERROR_UNKNOWN;          /* failed: an error */
	field_rc[NVML_FI_DEV_ECC_DBE_VOL_TOTAL] = NVML_ERROR_NO_PERMISSION; /* failed: an error */
	field_rc[NVML_FI_DEV_NVLINK_GET_STATE] = NVML_ERROR_NOT_SUPPORTED; /* not here: its own call */
	field_rc[NVML_FI_DEV_MEMORY_TEMP] = NVML_ERROR_NOT_SUPPORTED;      /* no call of its own: not supported */
	calls_for(be, GPU_GRP_ALL, &s);
	assert_int_equal(s.remap_uncorrected.st, VAL_ERROR);
	assert_int_equal(s.ecc_vol_uncorrected.st, VAL_ERROR);
	assert_int_equal(s.remap_corrected.st, VAL_OK); /* the same call's other fields are fine */
	assert_int_equal(s.remap_corrected.v, 1);
	assert_int_equal(s.temp_mem_c.st, VAL_UNSUPPORTED);
	assert_nvlink_values(&s); /* states through nvmlDeviceGetNvLinkState */

	/* from now on: 18 state calls beside the batch, the memory temperature not asked */
	field_values_asked = 0;
	assert_int_equal(calls_for(be, GPU_GRP_NVLINK, &s), 1 + 12 + 18);
	assert_int_equal(field_values_asked, 18 * 2 + 12 * 2);
	assert_nvlink_values(&s);
	field_values_asked = 0;
	calls_for(be, GPU_GRP_BASIC, &s);
	assert_int_equal(field_values_asked, 2);
	assert_int_equal(s.temp_mem_c.st, VAL_UNSUPPORTED);

	/* a lost GPU answering inside the batch marks the sample lost */
	field_rc[NVML_FI_DEV_PCIE_REPLAY_COUNTER] = NVML_ERROR_GPU_IS_LOST;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_PCIE, &s, &err), GPU_ENODEV);
	assert_true(s.lost);
	assert_int_equal(s.pcie_replays.st, VAL_ERROR);
}

/* Compares the batched values with those read one call each. */
static void assert_same_values(const struct gpu_sample *a, const struct gpu_sample *b)
{
	const u64v *x[] = { &a->power_mw, &a->energy_mj, &a->ecc_vol_corrected, &a->ecc_vol_uncorrected,
			    &a->ecc_agg_corrected, &a->ecc_agg_uncorrected, &a->ecc_dram_uncorrected,
			    &a->ecc_sram_uncorrected, &a->retired_pages_sbe, &a->retired_pages_dbe,
			    &a->retired_pages_pending, &a->remap_corrected, &a->remap_uncorrected, &a->remap_pending,
			    &a->remap_failure, &a->pcie_replays, &a->viol_power_ns, &a->viol_thermal_ns,
			    &a->viol_sync_boost_ns, &a->viol_board_limit_ns, &a->viol_low_util_ns, &a->viol_reliability_ns };
	const u64v *y[] = { &b->power_mw, &b->energy_mj, &b->ecc_vol_corrected, &b->ecc_vol_uncorrected,
			    &b->ecc_agg_corrected, &b->ecc_agg_uncorrected, &b->ecc_dram_uncorrected,
			    &b->ecc_sram_uncorrected, &b->retired_pages_sbe, &b->retired_pages_dbe,
			    &b->retired_pages_pending, &b->remap_corrected, &b->remap_uncorrected, &b->remap_pending,
			    &b->remap_failure, &b->pcie_replays, &b->viol_power_ns, &b->viol_thermal_ns,
			    &b->viol_sync_boost_ns, &b->viol_board_limit_ns, &b->viol_low_util_ns, &b->viol_reliability_ns };
	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) {
		assert_int_equal(x[i]->st, y[i]->st);
		assert_true(x[i]->v == y[i]->v || x[i]->st != VAL_OK);
	}
	for (unsigned l = 0; l < 18; l++) {
		assert_int_equal(a->nvlink[l].active.v, b->nvlink[l].active.v);
		assert_int_equal(a->nvlink[l].crc_flit_errors.v, b->nvlink[l].crc_flit_errors.v);
	}
}

/* Without nvmlDeviceGetFieldValues, or when it refuses a batch as a whole,
 * every value still comes, one call each. */
static void test_no_field_values(void **state)
{
	struct gpu_backend *be = *state, old;
	struct gpu_sample batched, single;
	struct nvml_api api = fake();
	calls_for(be, GPU_GRP_ALL, &batched);
	api.DeviceGetFieldValues = NULL;
	open_fake(&old, &api);
	calls_for(&old, GPU_GRP_ALL, &single);
	assert_same_values(&batched, &single);
	assert_nvlink_values(&single);
	assert_int_equal(single.temp_mem_c.st, VAL_UNSUPPORTED); /* a field only */
	assert_true(calls_for(&old, GPU_GRP_ALL, &single) > 90);
	gpu_backend_close(&old);
}

static nvmlReturn_t f_fields_refused(nvmlDevice_t d, int n, nvmlFieldValue_t *fv)
{
	(void)d; (void)n; (void)fv;
	field_calls++;
	return NVML_ERROR_INVALID_ARGUMENT;
}

static void test_field_values_refused(void **state)
{
	struct gpu_backend *be = *state, other;
	struct gpu_sample batched, single;
	struct nvml_api api = fake();
	calls_for(be, GPU_GRP_ALL, &batched);
	api.DeviceGetFieldValues = f_fields_refused;
	open_fake(&other, &api);
	field_calls = 0;
	calls_for(&other, GPU_GRP_ALL, &single);
	assert_same_values(&batched, &single);
	assert_nvlink_values(&single);
	calls_for(&other, GPU_GRP_ALL, &single);
	assert_int_equal(field_calls, 1); /* not asked again */
	gpu_backend_close(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_system, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_v1_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test(test_init_failure),
		cmocka_unit_test_setup_teardown(test_calls_per_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_one_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_field_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_values_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
