/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_cost.c - what each NVML call that gpuctl makes costs on this machine:
 * wall time and CPU time of the calling thread, median of 20 calls each, for
 * the single-value getters and for nvmlDeviceGetFieldValues batches of the
 * sizes gpuctl's sampler sends; then what every field of the full batch
 * answers (return code, value), and fields next to the single calls they
 * stand for (violation times, power, the NVLink CRC counters of links 12 on)
 * to check units and meanings on real hardware.
 *
 * Standalone: libnvidia-ml.so.1 is dlopen'ed, the declarations are gpuctl's
 * own (src/device/nvml_api.h), no NVIDIA header or library at build time.
 *   gcc -std=c11 -O2 -Wall -Wextra -Werror -o nvml_cost bench/nvml_cost.c -ldl
 *   ./nvml_cost [GPU index ...]      (default: every GPU)
 *   ./nvml_cost --tick GPU           top's per-second calls in their order, 15 s
 *   ./nvml_cost --spaced GPU         each call once a second (as a 1 s sampler
 *                                    makes it), 4 times, one kind after the
 *                                    other: back-to-back medians can hide a
 *                                    cost the driver pays once per period
 * Reads only. Exit: 0, or 69 when NVML cannot be loaded or initialised.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/device/nvml_api.h"

#define REPS 20

static void *lib;
static void *sym(const char *name)
{
	return dlsym(lib, name);
}

/* The entry points measured, resolved by name (versioned names first). */
static nvmlReturn_t (*Init)(void);
static nvmlReturn_t (*DeviceGetCount)(unsigned *);
static nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned, nvmlDevice_t *);
static nvmlReturn_t (*GetUtil)(nvmlDevice_t, nvmlUtilization_t *);
static nvmlReturn_t (*GetMem)(nvmlDevice_t, nvmlMemory_t *);
static nvmlReturn_t (*GetMemV2)(nvmlDevice_t, nvmlMemory_v2_t *);
static nvmlReturn_t (*GetTemp)(nvmlDevice_t, int, unsigned *);
static nvmlReturn_t (*GetU32)(nvmlDevice_t, unsigned *); /* set per measurement */
static nvmlReturn_t (*GetFan)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetPower)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetPowerLimit)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetEnergy)(nvmlDevice_t, unsigned long long *);
static nvmlReturn_t (*GetClock)(nvmlDevice_t, int, unsigned *);
static nvmlReturn_t (*GetPstate)(nvmlDevice_t, int *);
static nvmlReturn_t (*GetEvents)(nvmlDevice_t, unsigned long long *);
static nvmlReturn_t (*GetEccTotal)(nvmlDevice_t, int, int, unsigned long long *);
static nvmlReturn_t (*GetMemErr)(nvmlDevice_t, int, int, int, unsigned long long *);
static nvmlReturn_t (*GetRetired)(nvmlDevice_t, int, unsigned *, unsigned long long *);
static nvmlReturn_t (*GetRetiredPending)(nvmlDevice_t, int *);
static nvmlReturn_t (*GetRemapped)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
static nvmlReturn_t (*GetPcieGen)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetPcieWidth)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetPcieReplay)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*GetPcieThroughput)(nvmlDevice_t, int, unsigned *);
static nvmlReturn_t (*GetNvlState)(nvmlDevice_t, unsigned, int *);
static nvmlReturn_t (*GetNvlErr)(nvmlDevice_t, unsigned, int, unsigned long long *);
static nvmlReturn_t (*GetViolation)(nvmlDevice_t, int, nvmlViolationTime_t *);
static nvmlReturn_t (*GetProcs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
static nvmlReturn_t (*GetGfxProcs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
static nvmlReturn_t (*GetFields)(nvmlDevice_t, int, nvmlFieldValue_t *);

/* One measured call: the arguments are in the globals below. */
static nvmlDevice_t dev;
static int arg_i, arg_j;
static unsigned arg_link;
static nvmlFieldValue_t batch[128];
static int batch_n;

static uint64_t ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

typedef nvmlReturn_t (*call_fn)(void);

/* Medians of the last measurement (0 when the function is absent), and sums
 * of them: what one gpuctl sample costs, call by call. */
struct cost { uint64_t wall, cpu; };
static struct cost last;
static void add(struct cost *c, unsigned times)
{
	c->wall += times * last.wall;
	c->cpu += times * last.cpu;
}

/* Runs fn REPS times; prints the medians of wall and thread CPU time. */
static void measure(const char *name, call_fn fn, int present)
{
	uint64_t wall[REPS], cpu[REPS];
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	last.wall = last.cpu = 0;
	if (!present) {
		printf("  %-52s %10s %10s  rc=%d (function absent)\n", name, "-", "-", r);
		return;
	}
	for (int i = 0; i < REPS; i++) {
		uint64_t w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID);
		r = fn();
		cpu[i] = ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall[i] = ns(CLOCK_MONOTONIC) - w0;
	}
	qsort(wall, REPS, sizeof(wall[0]), cmp_u64);
	qsort(cpu, REPS, sizeof(cpu[0]), cmp_u64);
	last.wall = wall[REPS / 2];
	last.cpu = cpu[REPS / 2];
	printf("  %-52s %10.1f %10.1f  rc=%d\n", name, wall[REPS / 2] / 1e3, cpu[REPS / 2] / 1e3, r);
}

static nvmlReturn_t c_util(void) { nvmlUtilization_t u; return GetUtil(dev, &u); }
static nvmlReturn_t c_mem(void) { nvmlMemory_t m; return GetMem(dev, &m); }
static nvmlReturn_t c_mem_v2(void)
{
	nvmlMemory_v2_t m;
	memset(&m, 0, sizeof(m));
	m.version = NVML_MEMORY_V2_VERSION;
	return GetMemV2(dev, &m);
}
static nvmlReturn_t c_temp(void) { unsigned v; return GetTemp(dev, NVML_TEMPERATURE_GPU, &v); }
static nvmlReturn_t c_u32(void) { unsigned v; return GetU32(dev, &v); }
static nvmlReturn_t c_energy(void) { unsigned long long v; return GetEnergy(dev, &v); }
static nvmlReturn_t c_clock(void) { unsigned v; return GetClock(dev, arg_i, &v); }
static nvmlReturn_t c_pstate(void) { int v; return GetPstate(dev, &v); }
static nvmlReturn_t c_events(void) { unsigned long long v; return GetEvents(dev, &v); }
static nvmlReturn_t c_ecc(void) { unsigned long long v; return GetEccTotal(dev, arg_i, arg_j, &v); }
static nvmlReturn_t c_memerr(void)
{
	unsigned long long v;
	return GetMemErr(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, arg_i, &v);
}
static nvmlReturn_t c_retired(void) { unsigned n = 0; return GetRetired(dev, NVML_PAGE_RETIREMENT_CAUSE_SBE, &n, NULL); }
static nvmlReturn_t c_retired_pending(void) { int v; return GetRetiredPending(dev, &v); }
static nvmlReturn_t c_remapped(void) { unsigned a, b, c, d; return GetRemapped(dev, &a, &b, &c, &d); }
static nvmlReturn_t c_throughput(void) { unsigned v; return GetPcieThroughput(dev, NVML_PCIE_UTIL_TX_BYTES, &v); }
static nvmlReturn_t c_nvl_state(void) { int v; return GetNvlState(dev, arg_link, &v); }
static nvmlReturn_t c_nvl_err(void) { unsigned long long v; return GetNvlErr(dev, arg_link, arg_i, &v); }
static nvmlReturn_t c_viol(void) { nvmlViolationTime_t v; return GetViolation(dev, arg_i, &v); }
static nvmlReturn_t c_procs(void)
{
	nvmlProcessInfo_t p[64];
	unsigned n = 64;
	return GetProcs(dev, &n, p);
}
static nvmlReturn_t c_gfx_procs(void)
{
	nvmlProcessInfo_t p[64];
	unsigned n = 64;
	return GetGfxProcs(dev, &n, p);
}
static nvmlReturn_t c_fields(void)
{
	for (int i = 0; i < batch_n; i++) {
		unsigned id = batch[i].fieldId, scope = batch[i].scopeId;
		memset(&batch[i], 0, sizeof(batch[i]));
		batch[i].fieldId = id;
		batch[i].scopeId = scope;
	}
	return GetFields(dev, batch_n, batch);
}

static void add_field(unsigned id, unsigned scope)
{
	if (batch_n < (int)(sizeof(batch) / sizeof(batch[0]))) {
		memset(&batch[batch_n], 0, sizeof(batch[0]));
		batch[batch_n].fieldId = id;
		batch[batch_n].scopeId = scope;
		batch_n++;
	}
}

/* The per-link ids gpuctl sends (src/device/nvml_fields.c): state, replay and
 * recovery scoped (scopeId = link) for every link; both CRC counters of links
 * 0-11 by their own ids (an H200 answers these "not supported": gpuctl then
 * reads them with their own calls, once a minute). */
static void add_nvlink_fields(unsigned links)
{
	for (unsigned l = 0; l < links; l++) {
		add_field(NVML_FI_DEV_NVLINK_GET_STATE, l);
		add_field(NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, l);
		add_field(NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY, l);
		if (l < 12) {
			unsigned off = l < 6 ? l : l - 6;
			add_field((l < 6 ? NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0 : NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L6) + off, 0);
			add_field((l < 6 ? NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0 : NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6) + off, 0);
		}
	}
}

static void add_basic_fields(void)
{
	add_field(NVML_FI_DEV_MEMORY_TEMP, 0);
	add_field(NVML_FI_DEV_POWER_AVERAGE, 0);
	add_field(NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, 0);
}

static void add_ecc_fields(void)
{
	const unsigned ids[] = { NVML_FI_DEV_ECC_SBE_VOL_TOTAL, NVML_FI_DEV_ECC_DBE_VOL_TOTAL,
				 NVML_FI_DEV_ECC_SBE_AGG_TOTAL, NVML_FI_DEV_ECC_DBE_AGG_TOTAL,
				 NVML_FI_DEV_ECC_DBE_AGG_DEV, NVML_FI_DEV_RETIRED_SBE, NVML_FI_DEV_RETIRED_DBE,
				 NVML_FI_DEV_RETIRED_PENDING, NVML_FI_DEV_REMAPPED_COR, NVML_FI_DEV_REMAPPED_UNC,
				 NVML_FI_DEV_REMAPPED_PENDING, NVML_FI_DEV_REMAPPED_FAILURE };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		add_field(ids[i], 0);
}

/* PCIe byte counters: a candidate for the 20 ms throughput calls (not used by gpuctl yet). */
#define NVML_FI_DEV_PCIE_COUNT_TX_BYTES 197
#define NVML_FI_DEV_PCIE_COUNT_RX_BYTES 198

static void print_field(const nvmlFieldValue_t *f)
{
	printf("    field %3u scope %2u: rc=%d", f->fieldId, f->scopeId, f->nvmlReturn);
	if (f->nvmlReturn != NVML_SUCCESS) {
		printf("\n");
		return;
	}
	switch (f->valueType) {
	case NVML_VALUE_TYPE_DOUBLE: printf(" double %g\n", f->value.dVal); break;
	case NVML_VALUE_TYPE_UNSIGNED_INT: printf(" uint %u\n", f->value.uiVal); break;
	case NVML_VALUE_TYPE_UNSIGNED_LONG: printf(" ulong %lu\n", f->value.ulVal); break;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: printf(" ull %llu\n", f->value.ullVal); break;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG: printf(" sll %lld\n", f->value.sllVal); break;
	case NVML_VALUE_TYPE_SIGNED_INT: printf(" int %d\n", f->value.siVal); break;
	default: printf(" type %d\n", f->valueType); break;
	}
}

/* Fields whose meaning nvml.h leaves open, next to the single calls they may
 * stand for (equal values on a healthy GPU prove little: counters are 0). */
static void open_questions(unsigned links)
{
	printf("  open questions (field vs single call):\n");
	unsigned long long ull = 0;
	unsigned u = 0;
	nvmlReturn_t r;
	batch_n = 0;
	add_field(NVML_FI_DEV_POWER_AVERAGE, 0);
	add_field(NVML_FI_DEV_POWER_INSTANT, 0);
	add_field(NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0);
	add_field(NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0);
	for (unsigned k = 0; k < 6; k++)
		add_field(NVML_FI_DEV_PERF_POLICY_POWER + k, 0);
	for (unsigned l = 0; l < links; l += (links > 12 ? 12 : 1)) {
		add_field(NVML_FI_DEV_NVLINK_ERROR_DL_CRC, l);
		add_field(NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, l);
	}
	c_fields();
	for (int i = 0; i < batch_n; i++)
		print_field(&batch[i]);
	if (GetPower) {
		r = GetPower(dev, &u);
		printf("    nvmlDeviceGetPowerUsage: rc=%d %u mW\n", r, u);
	}
	for (int k = 0; GetViolation && k < 6; k++) {
		nvmlViolationTime_t vt = { 0, 0 };
		r = GetViolation(dev, k, &vt);
		printf("    nvmlDeviceGetViolationStatus(policy %d): rc=%d violationTime %llu ns, ref %llu\n", k, r,
		       vt.violationTime, vt.referenceTime);
	}
	for (unsigned l = 0; GetNvlErr && l < links; l += (links > 12 ? 12 : 1)) {
		for (int c = NVML_NVLINK_ERROR_DL_REPLAY; c <= NVML_NVLINK_ERROR_DL_CRC_DATA; c++) {
			ull = 0;
			r = GetNvlErr(dev, l, c, &ull);
			printf("    nvmlDeviceGetNvLinkErrorCounter(link %u, counter %d): rc=%d %llu\n", l, c, r, ull);
		}
	}
}

/* Measures nvmlDeviceGetFieldValues with the fields now in batch[]. */
static void measure_batch(const char *what)
{
	char name[160];
	snprintf(name, sizeof(name), "nvmlDeviceGetFieldValues(%s, %d fields)", what, batch_n);
	measure(name, c_fields, GetFields != NULL);
}

/* Sets dev to GPU g and counts its NVLinks (those that answer a state). -1 without a handle. */
static int open_gpu(unsigned g, unsigned *links)
{
	if (DeviceGetHandleByIndex(g, &dev) != NVML_SUCCESS) {
		printf("GPU %u: no handle\n", g);
		return -1;
	}
	*links = 0;
	for (unsigned l = 0; GetNvlState && l < 18; l++) {
		int st;
		nvmlReturn_t r = GetNvlState(dev, l, &st);
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
			break;
		*links = l + 1;
	}
	return 0;
}

static void one_gpu(unsigned g)
{
	unsigned links;
	if (open_gpu(g, &links))
		return;
	struct cost basic = { 0, 0 }, slow = { 0, 0 }; /* own calls of gpuctl's sample, by group */
	printf("GPU %u (%u NVLinks): median of %d calls, microseconds\n", g, links, REPS);
	printf("  %-52s %10s %10s\n", "call", "wall_us", "cpu_us");
	measure("nvmlDeviceGetUtilizationRates", c_util, GetUtil != NULL);
	add(&basic, 1);
	measure("nvmlDeviceGetMemoryInfo_v2", c_mem_v2, GetMemV2 != NULL);
	add(&basic, 1);
	measure("nvmlDeviceGetMemoryInfo", c_mem, GetMem != NULL);
	measure("nvmlDeviceGetTemperature", c_temp, GetTemp != NULL);
	add(&basic, 1);
	GetU32 = GetFan;
	measure("nvmlDeviceGetFanSpeed", c_u32, GetFan != NULL);
	GetU32 = GetPower;
	measure("nvmlDeviceGetPowerUsage", c_u32, GetPower != NULL);
	GetU32 = GetPowerLimit;
	measure("nvmlDeviceGetEnforcedPowerLimit", c_u32, GetPowerLimit != NULL);
	add(&basic, 1);
	measure("nvmlDeviceGetTotalEnergyConsumption", c_energy, GetEnergy != NULL);
	arg_i = NVML_CLOCK_SM;
	measure("nvmlDeviceGetClockInfo(SM)", c_clock, GetClock != NULL);
	add(&basic, 1);
	arg_i = NVML_CLOCK_MEM;
	measure("nvmlDeviceGetClockInfo(MEM)", c_clock, GetClock != NULL);
	add(&basic, 1);
	measure("nvmlDeviceGetPerformanceState", c_pstate, GetPstate != NULL);
	add(&basic, 1);
	measure("nvmlDeviceGetCurrentClocksEventReasons", c_events, GetEvents != NULL);
	add(&basic, 1);
	arg_i = NVML_MEMORY_ERROR_TYPE_CORRECTED;
	arg_j = NVML_VOLATILE_ECC;
	measure("nvmlDeviceGetTotalEccErrors(corrected, volatile)", c_ecc, GetEccTotal != NULL);
	arg_i = NVML_MEMORY_LOCATION_SRAM;
	measure("nvmlDeviceGetMemoryErrorCounter(SRAM)", c_memerr, GetMemErr != NULL);
	add(&slow, 1);
	arg_i = NVML_MEMORY_LOCATION_DRAM;
	measure("nvmlDeviceGetMemoryErrorCounter(DRAM)", c_memerr, GetMemErr != NULL);
	measure("nvmlDeviceGetRetiredPages(SBE, count)", c_retired, GetRetired != NULL);
	measure("nvmlDeviceGetRetiredPagesPendingStatus", c_retired_pending, GetRetiredPending != NULL);
	measure("nvmlDeviceGetRemappedRows", c_remapped, GetRemapped != NULL);
	GetU32 = GetPcieGen;
	measure("nvmlDeviceGetCurrPcieLinkGeneration", c_u32, GetPcieGen != NULL);
	add(&slow, 1);
	GetU32 = GetPcieWidth;
	measure("nvmlDeviceGetCurrPcieLinkWidth", c_u32, GetPcieWidth != NULL);
	add(&slow, 1);
	GetU32 = GetPcieReplay;
	measure("nvmlDeviceGetPcieReplayCounter", c_u32, GetPcieReplay != NULL);
	measure("nvmlDeviceGetPcieThroughput(TX)", c_throughput, GetPcieThroughput != NULL);
	add(&slow, 2); /* TX and RX */
	arg_link = 0;
	measure("nvmlDeviceGetNvLinkState(link 0)", c_nvl_state, GetNvlState != NULL);
	const char *cname[4] = { "replay", "recovery", "CRC flit", "CRC data" };
	char name[80];
	for (unsigned l = 0; l < links; l += (links > 12 ? 12 : 1)) {
		for (int c = 0; c < 4; c++) {
			arg_link = l;
			arg_i = c;
			snprintf(name, sizeof(name), "nvmlDeviceGetNvLinkErrorCounter(link %u, %s)", l, cname[c]);
			measure(name, c_nvl_err, GetNvlErr != NULL);
			if (l >= 12 && c >= 2)
				add(&slow, links - 12); /* CRC counters of links 12 on: own calls */
		}
		if (links <= 12)
			break;
	}
	arg_i = NVML_PERF_POLICY_POWER;
	measure("nvmlDeviceGetViolationStatus(power)", c_viol, GetViolation != NULL);
	arg_i = NVML_PERF_POLICY_LOW_UTILIZATION;
	measure("nvmlDeviceGetViolationStatus(low utilization)", c_viol, GetViolation != NULL);
	measure("nvmlDeviceGetComputeRunningProcesses", c_procs, GetProcs != NULL);
	struct cost procs = last;

	/* the batches gpuctl sends */
	batch_n = 0;
	add_field(NVML_FI_DEV_MEMORY_TEMP, 0);
	measure_batch("memory temperature");
	batch_n = 0;
	add_basic_fields();
	measure_batch("basic");
	struct cost basic_batch = last;
	batch_n = 0;
	add_ecc_fields();
	measure_batch("ECC");
	batch_n = 0;
	add_nvlink_fields(links);
	measure_batch("NVLink");
	batch_n = 0;
	add_basic_fields();
	add_ecc_fields();
	add_field(NVML_FI_DEV_PCIE_REPLAY_COUNTER, 0);
	for (unsigned k = 0; k < 6; k++)
		add_field(NVML_FI_DEV_PERF_POLICY_POWER + k, 0); /* violation counters */
	add_nvlink_fields(links);
	measure_batch("all groups");
	struct cost all = basic, basic_only = basic;
	add(&all, 1);
	all.wall += slow.wall;
	all.cpu += slow.cpu;
	basic_only.wall += basic_batch.wall;
	basic_only.cpu += basic_batch.cpu;
	printf("  gpuctl sample, basic group:  wall %8.1f us, cpu %8.1f us (+ process list: cpu %.1f us)\n",
	       basic_only.wall / 1e3, basic_only.cpu / 1e3, procs.cpu / 1e3);
	printf("  gpuctl sample, all groups:   wall %8.1f us, cpu %8.1f us\n", all.wall / 1e3, all.cpu / 1e3);
	printf("  at 1 s: basic every tick = %.2f %% of a core per GPU; all groups every tick = %.2f %%;"
	       " all groups every 5th tick (top) = %.2f %%\n",
	       (basic_only.cpu + procs.cpu) / 1e7, all.cpu / 1e7,
	       (4 * (basic_only.cpu + procs.cpu) + all.cpu + procs.cpu) / 5 / 1e7);
	/* what each field costs alone: a batch costs about its slowest fields */
	static const unsigned single[][2] = {
		{ NVML_FI_DEV_MEMORY_TEMP, 0 }, { NVML_FI_DEV_POWER_AVERAGE, 0 }, { NVML_FI_DEV_POWER_INSTANT, 0 },
		{ NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, 0 }, { NVML_FI_DEV_ECC_SBE_VOL_TOTAL, 0 },
		{ NVML_FI_DEV_ECC_DBE_AGG_TOTAL, 0 }, { NVML_FI_DEV_ECC_DBE_AGG_DEV, 0 }, { NVML_FI_DEV_RETIRED_SBE, 0 },
		{ NVML_FI_DEV_RETIRED_PENDING, 0 }, { NVML_FI_DEV_REMAPPED_COR, 0 }, { NVML_FI_DEV_REMAPPED_PENDING, 0 },
		{ NVML_FI_DEV_PCIE_REPLAY_COUNTER, 0 }, { NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0 },
		{ NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0 }, { NVML_FI_DEV_PERF_POLICY_POWER, 0 },
		{ NVML_FI_DEV_PERF_POLICY_POWER + 4, 0 }, { NVML_FI_DEV_NVLINK_GET_STATE, 0 },
		{ NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L0, 0 }, { NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0, 0 },
		{ NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0, 0 }, { NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, 12 },
		{ NVML_FI_DEV_NVLINK_ERROR_DL_CRC, 12 },
	};
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		batch_n = 0;
		add_field(single[i][0], single[i][1]);
		char what[40];
		snprintf(what, sizeof(what), "field %u scope %u", single[i][0], single[i][1]);
		measure_batch(what);
	}
	if (GetFields) {
		batch_n = 0;
		add_basic_fields();
		add_ecc_fields();
		add_field(NVML_FI_DEV_PCIE_REPLAY_COUNTER, 0);
		for (unsigned k = 0; k < 6; k++)
			add_field(NVML_FI_DEV_PERF_POLICY_POWER + k, 0);
		add_nvlink_fields(links);
		printf("  what the all-groups batch answered:\n");
		c_fields();
		for (int i = 0; i < batch_n; i++)
			print_field(&batch[i]);
		open_questions(links);
	}
}

/* --spaced: each kind called once a second, SPACED_N times, kinds one after
 * the other; the thread CPU of each call (median, max). */
#define SPACED_N 4
static void spaced_one(const char *name, call_fn fn, int present)
{
	uint64_t cpu[SPACED_N], wall[SPACED_N];
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (!present) {
		printf("  %-52s absent\n", name);
		return;
	}
	for (int i = 0; i < SPACED_N; i++) {
		struct timespec one = { 1, 0 };
		nanosleep(&one, NULL);
		uint64_t w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID);
		r = fn();
		cpu[i] = ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall[i] = ns(CLOCK_MONOTONIC) - w0;
	}
	qsort(wall, SPACED_N, sizeof(wall[0]), cmp_u64);
	qsort(cpu, SPACED_N, sizeof(cpu[0]), cmp_u64);
	printf("  %-52s wall %9.1f us  cpu median %9.1f us  max %9.1f us  rc=%d\n", name, wall[SPACED_N / 2] / 1e3,
	       cpu[SPACED_N / 2] / 1e3, cpu[SPACED_N - 1] / 1e3, r);
	fflush(stdout);
}

static void spaced_batch(const char *what)
{
	char name[160];
	snprintf(name, sizeof(name), "nvmlDeviceGetFieldValues(%s, %d fields)", what, batch_n);
	spaced_one(name, c_fields, GetFields != NULL);
}

static void spaced(unsigned g)
{
	unsigned links;
	if (open_gpu(g, &links))
		return;
	printf("GPU %u (%u NVLinks): each call once a second, %d times\n", g, links, SPACED_N);
	batch_n = 0;
	add_nvlink_fields(links);
	spaced_batch("NVLink as gpuctl asks");
	arg_link = 0;
	spaced_one("nvmlDeviceGetNvLinkState(link 0)", c_nvl_state, GetNvlState != NULL);
	arg_i = NVML_NVLINK_ERROR_DL_REPLAY;
	spaced_one("nvmlDeviceGetNvLinkErrorCounter(link 0, replay)", c_nvl_err, GetNvlErr != NULL);
	arg_link = 12;
	arg_i = NVML_NVLINK_ERROR_DL_CRC_FLIT;
	spaced_one("nvmlDeviceGetNvLinkErrorCounter(link 12, CRC flit)", c_nvl_err, GetNvlErr != NULL);
	batch_n = 0;
	add_field(NVML_FI_DEV_NVLINK_GET_STATE, 0);
	spaced_batch("NVLink state link 0");
	batch_n = 0;
	add_field(NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L0, 0);
	spaced_batch("NVLink replay link 0");
	batch_n = 0;
	for (unsigned l = 0; l < links; l++)
		add_field(NVML_FI_DEV_NVLINK_GET_STATE, l);
	spaced_batch("NVLink state, every link");
	batch_n = 0;
	add_basic_fields();
	spaced_batch("basic");
	spaced_one("nvmlDeviceGetTotalEnergyConsumption", c_energy, GetEnergy != NULL);
	batch_n = 0;
	add_ecc_fields();
	spaced_batch("ECC");
	arg_i = 0;
	spaced_one("nvmlDeviceGetViolationStatus(power)", c_viol, GetViolation != NULL);
	spaced_one("nvmlDeviceGetPcieThroughput(TX)", c_throughput, GetPcieThroughput != NULL);
	/* the basic group's own calls (what top pays every second) */
	spaced_one("nvmlDeviceGetUtilizationRates", c_util, GetUtil != NULL);
	spaced_one("nvmlDeviceGetMemoryInfo_v2", c_mem_v2, GetMemV2 != NULL);
	spaced_one("nvmlDeviceGetTemperature", c_temp, GetTemp != NULL);
	GetU32 = GetPowerLimit;
	spaced_one("nvmlDeviceGetEnforcedPowerLimit", c_u32, GetPowerLimit != NULL);
	arg_i = NVML_CLOCK_SM;
	spaced_one("nvmlDeviceGetClockInfo(SM)", c_clock, GetClock != NULL);
	arg_i = NVML_CLOCK_MEM;
	spaced_one("nvmlDeviceGetClockInfo(memory)", c_clock, GetClock != NULL);
	spaced_one("nvmlDeviceGetPerformanceState", c_pstate, GetPstate != NULL);
	spaced_one("nvmlDeviceGetCurrentClocksEventReasons", c_events, GetEvents != NULL);
	spaced_one("nvmlDeviceGetComputeRunningProcesses_v3", c_procs, GetProcs != NULL);
	spaced_one("nvmlDeviceGetGraphicsRunningProcesses_v3", c_gfx_procs, GetGfxProcs != NULL);
	batch_n = 0;
	add_field(NVML_FI_DEV_MEMORY_TEMP, 0);
	add_field(NVML_FI_DEV_POWER_AVERAGE, 0);
	spaced_batch("memory temperature, power");
}

/* --tick: what top's sampler asks of one GPU every second, in its order
 * (the basic group's calls, its batch, the two process lists), TICK_N
 * seconds; each call's thread CPU in that sequence (median, max) and the
 * tick's total. Calls measured alone (--spaced) may cost less. */
#define TICK_N 15
#define TICK_CALLS 11
static void tick(unsigned g)
{
	unsigned links;
	if (open_gpu(g, &links))
		return;
	static const char *names[TICK_CALLS] = { "UtilizationRates", "MemoryInfo_v2", "Temperature",
		"EnforcedPowerLimit", "ClockInfo(SM)", "ClockInfo(memory)", "PerformanceState",
		"CurrentClocksEventReasons", "FieldValues(memory temperature, power)",
		"ComputeRunningProcesses_v3", "GraphicsRunningProcesses_v3" };
	uint64_t cpu[TICK_CALLS][TICK_N], total[TICK_N];
	batch_n = 0;
	add_field(NVML_FI_DEV_MEMORY_TEMP, 0);
	add_field(NVML_FI_DEV_POWER_AVERAGE, 0);
	for (int t = 0; t < TICK_N; t++) {
		struct timespec one = { 1, 0 };
		nanosleep(&one, NULL);
		uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);
		for (int c = 0; c < TICK_CALLS; c++) {
			uint64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID);
			switch (c) {
			case 0: c_util(); break;
			case 1: c_mem_v2(); break;
			case 2: c_temp(); break;
			case 3: GetU32 = GetPowerLimit; c_u32(); break;
			case 4: arg_i = NVML_CLOCK_SM; c_clock(); break;
			case 5: arg_i = NVML_CLOCK_MEM; c_clock(); break;
			case 6: c_pstate(); break;
			case 7: c_events(); break;
			case 8: c_fields(); break;
			case 9: c_procs(); break;
			default: c_gfx_procs(); break;
			}
			cpu[c][t] = ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		}
		total[t] = ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	/* and what top asks every 5th second: the NVLink state of every link (one
	 * batch), ECC (a batch and the SRAM call), PCIe (gen, width, two throughputs) */
	uint64_t slow[4][3];
	int bad_state = 0;
	for (int t = 0; t < 3; t++) {
		struct timespec one = { 1, 0 };
		nanosleep(&one, NULL);
		uint64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID);
		batch_n = 0;
		for (unsigned l = 0; l < links; l++)
			add_field(NVML_FI_DEV_NVLINK_GET_STATE, l);
		c_fields();
		for (int i = 0; i < batch_n; i++)
			bad_state += batch[i].nvmlReturn != NVML_SUCCESS;
		uint64_t c1 = ns(CLOCK_THREAD_CPUTIME_ID);
		batch_n = 0;
		add_ecc_fields();
		c_fields();
		arg_i = NVML_MEMORY_LOCATION_SRAM;
		c_memerr();
		uint64_t c2 = ns(CLOCK_THREAD_CPUTIME_ID);
		unsigned v;
		if (GetPcieGen)
			GetPcieGen(dev, &v);
		if (GetPcieWidth)
			GetPcieWidth(dev, &v);
		c_throughput();
		c_throughput();
		uint64_t c3 = ns(CLOCK_THREAD_CPUTIME_ID);
		slow[0][t] = c1 - c0;
		slow[1][t] = c2 - c1;
		slow[2][t] = c3 - c2;
		slow[3][t] = c3 - c0;
	}
	printf("GPU %u: top's per-second calls in sequence, %d ticks (thread CPU, us)\n", g, TICK_N);
	for (int c = 0; c < TICK_CALLS; c++) {
		qsort(cpu[c], TICK_N, sizeof(cpu[c][0]), cmp_u64);
		printf("  nvmlDevice%-44s median %9.1f  max %9.1f\n", names[c], cpu[c][TICK_N / 2] / 1e3,
		       cpu[c][TICK_N - 1] / 1e3);
	}
	qsort(total, TICK_N, sizeof(total[0]), cmp_u64);
	printf("  %-54s median %9.1f  max %9.1f\n", "the whole tick", total[TICK_N / 2] / 1e3, total[TICK_N - 1] / 1e3);
	static const char *slow_names[4] = { "every 5th: NVLink state batch", "every 5th: ECC batch + SRAM",
		"every 5th: PCIe gen, width, 2 throughputs", "every 5th: all three" };
	for (int k = 0; k < 4; k++) {
		qsort(slow[k], 3, sizeof(slow[k][0]), cmp_u64);
		printf("  %-54s median %9.1f  max %9.1f\n", slow_names[k], slow[k][1] / 1e3, slow[k][2] / 1e3);
	}
	printf("  NVLink state fields not answered by the batch: %d of %u (3 reads)\n", bad_state, 3 * links);
}

/* A GPU index argument: 0, or -1 with the message printed. */
static int gpu_arg(const char *s, unsigned n, unsigned *g)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v >= n) {
		fprintf(stderr, "nvml_cost: no GPU '%s' (the driver reports %u)\n", s, n);
		return -1;
	}
	*g = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nvml_cost: cannot load libnvidia-ml.so.1: NVIDIA driver not found\n");
		return 69;
	}
	*(void **)&Init = sym("nvmlInit_v2");
	*(void **)&DeviceGetCount = sym("nvmlDeviceGetCount_v2");
	*(void **)&DeviceGetHandleByIndex = sym("nvmlDeviceGetHandleByIndex_v2");
	*(void **)&GetUtil = sym("nvmlDeviceGetUtilizationRates");
	*(void **)&GetMem = sym("nvmlDeviceGetMemoryInfo");
	*(void **)&GetMemV2 = sym("nvmlDeviceGetMemoryInfo_v2");
	*(void **)&GetTemp = sym("nvmlDeviceGetTemperature");
	*(void **)&GetFan = sym("nvmlDeviceGetFanSpeed");
	*(void **)&GetPower = sym("nvmlDeviceGetPowerUsage");
	*(void **)&GetPowerLimit = sym("nvmlDeviceGetEnforcedPowerLimit");
	*(void **)&GetEnergy = sym("nvmlDeviceGetTotalEnergyConsumption");
	*(void **)&GetClock = sym("nvmlDeviceGetClockInfo");
	*(void **)&GetPstate = sym("nvmlDeviceGetPerformanceState");
	*(void **)&GetEvents = sym("nvmlDeviceGetCurrentClocksEventReasons");
	if (!GetEvents)
		*(void **)&GetEvents = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&GetEccTotal = sym("nvmlDeviceGetTotalEccErrors");
	*(void **)&GetMemErr = sym("nvmlDeviceGetMemoryErrorCounter");
	*(void **)&GetRetired = sym("nvmlDeviceGetRetiredPages");
	*(void **)&GetRetiredPending = sym("nvmlDeviceGetRetiredPagesPendingStatus");
	*(void **)&GetRemapped = sym("nvmlDeviceGetRemappedRows");
	*(void **)&GetPcieGen = sym("nvmlDeviceGetCurrPcieLinkGeneration");
	*(void **)&GetPcieWidth = sym("nvmlDeviceGetCurrPcieLinkWidth");
	*(void **)&GetPcieReplay = sym("nvmlDeviceGetPcieReplayCounter");
	*(void **)&GetPcieThroughput = sym("nvmlDeviceGetPcieThroughput");
	*(void **)&GetNvlState = sym("nvmlDeviceGetNvLinkState");
	*(void **)&GetNvlErr = sym("nvmlDeviceGetNvLinkErrorCounter");
	*(void **)&GetViolation = sym("nvmlDeviceGetViolationStatus");
	*(void **)&GetProcs = sym("nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&GetGfxProcs = sym("nvmlDeviceGetGraphicsRunningProcesses_v3");
	*(void **)&GetFields = sym("nvmlDeviceGetFieldValues");
	if (!Init || !DeviceGetCount || !DeviceGetHandleByIndex) {
		fprintf(stderr, "nvml_cost: libnvidia-ml.so.1 is not a usable NVML library\n");
		return 69;
	}
	uint64_t t0 = ns(CLOCK_MONOTONIC);
	nvmlReturn_t r = Init();
	if (r != NVML_SUCCESS) {
		fprintf(stderr, "nvml_cost: NVML initialisation failed (rc %d)\n", r);
		return 69;
	}
	printf("nvmlInit: %.1f ms\n", (ns(CLOCK_MONOTONIC) - t0) / 1e6);
	unsigned n = 0;
	DeviceGetCount(&n);
	unsigned g;
	int is_spaced = argc == 3 && strcmp(argv[1], "--spaced") == 0;
	if (is_spaced || (argc == 3 && strcmp(argv[1], "--tick") == 0)) {
		if (gpu_arg(argv[2], n, &g))
			return 2;
		if (is_spaced)
			spaced(g);
		else
			tick(g);
		return 0;
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			if (gpu_arg(argv[i], n, &g))
				return 2;
			one_gpu(g);
		}
	} else {
		for (unsigned g = 0; g < n; g++)
			one_gpu(g);
	}
	return 0;
}
