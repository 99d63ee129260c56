/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_fields.h - the field table: every scalar value a sample of a GPU holds,
 * one row each, in struct gpu_sample's order (which is --json's): what the
 * value is and how it is read, nothing of how it is shown. Each consumer
 * expands the rows it needs: the struct (gpu.h), the sampler's carry of the
 * slow groups, the "sample" object of --json and of the agent's API
 * (view/json_util.c), the agent's exposition (agent/metrics.c), the nvml
 * backend's field-value batch (nvml_priv.h, nvml_fields.c, nvml_device.c),
 * the simulator (device/sim_model.c) and the tests. How a value is shown is
 * the view's, keyed by the member: its dmon/top column in view/moncol.c
 * (FCOL), its `info -q` line in view/info_text.c (INFO_SAMPLE). Adding a
 * value read from NVML is a row here (and its sim_<member> when its sim
 * column is MODEL) and its lines in docs/json.md and docs/metrics.md
 * (docs/hacking.md).
 *
 * X(member, group, unit, api_key, role, metric, type, labels, help, series, nvml_read, nvml_field,
 *   sim)
 *   member  the u64v in struct gpu_sample, and its key in "sample" (--json, API)
 *   group   GPU_GRP_<group> reads it; a slow group's values are carried
 *           between the ticks that read them (sampler.c)
 *   unit    GPU_UNIT_<unit>: what the integer counts, which fixes how it
 *           becomes the exposition's base unit and a deprecated key's (below)
 *   api_key its old key in the agent's /api/v1/gpus, no longer written
 *           (issue 35): named for tests/cli/json_vocab.sh, which fails on
 *           any output that writes one, and docs/json.md's table of removed
 *           keys; NULL for none, and for every new field
 *   role    FAMILY: the first row of a Prometheus family (metric, type,
 *           labels and help); SERIES: one more series of the family just
 *           above (metric and type repeated, labels and help NULL); NONE: not
 *           exported from here (clock_event_reasons: its own code)
 *   metric  the family's name; type GAUGE or COUNTER
 *   labels  the label keys beyond the per-GPU ones, for the docs ("" if none)
 *   help    the family's HELP text
 *   series  this row's own labels, exactly as written: key="value"[,...]
 *   nvml_read, nvml_field  how the nvml backend reads it: BATCH with an
 *           NVML_FI_* id: in its group's nvmlDeviceGetFieldValues batch by
 *           that id; FLAG: the same, read as 1/0; where the driver does not
 *           deliver the field, the field's own call in nvml_fields.c's
 *           slot_call, if it has one (else "not supported"); CODE, 0: by
 *           its own code only (nvml_device.c)
 *   sim     how the simulator makes it (device/sim_model.c): MODEL: by the
 *           function sim_<member> there, of the load, time and faults;
 *           otherwise "not supported" unless struct sim_caps' flag cap is
 *           set, and then ZERO(cap): 0; FAULT_SUM(cap, kind, param): the sum
 *           of p_<param> over the SIM_FAULT_<kind> faults started so far;
 *           FAULT_TIME(cap, kind): the nanoseconds such faults were active;
 *           FAULT_ACTIVE(cap, kind): 1 while one is active, else 0;
 *           GPM(metric): the profiling model of the GPU's workload
 *           (device/sim_gpm.c, SIM_GPM_<metric>), "not supported"
 *           unless struct sim_caps' gpm is set (Hopper and later, MIG off)
 */
#ifndef GPUCTL_GPU_FIELDS_H
#define GPUCTL_GPU_FIELDS_H

/* Units: the factor and decimal places that turn the integer into the
 * exposition's base unit (value * MUL / 10^DEC), and the divisor of the
 * API's deprecated keys. */
#define GPU_UNIT_PCT_MUL 1       /* percent -> ratio */
#define GPU_UNIT_PCT_DEC 2
#define GPU_UNIT_PCT_API 1
#define GPU_UNIT_BYTES_MUL 1
#define GPU_UNIT_BYTES_DEC 0
#define GPU_UNIT_BYTES_API 1
#define GPU_UNIT_CELSIUS_MUL 1
#define GPU_UNIT_CELSIUS_DEC 0
#define GPU_UNIT_CELSIUS_API 1
#define GPU_UNIT_MW_MUL 1        /* milliwatts -> watts */
#define GPU_UNIT_MW_DEC 3
#define GPU_UNIT_MW_API 1000
#define GPU_UNIT_MJ_MUL 1        /* millijoules -> joules */
#define GPU_UNIT_MJ_DEC 3
#define GPU_UNIT_MJ_API 1000
#define GPU_UNIT_MHZ_MUL 1000000 /* MHz -> hertz (the API keeps MHz) */
#define GPU_UNIT_MHZ_DEC 0
#define GPU_UNIT_MHZ_API 1
#define GPU_UNIT_NS_MUL 1        /* nanoseconds -> seconds */
#define GPU_UNIT_NS_DEC 9
#define GPU_UNIT_NS_API 1
#define GPU_UNIT_KIBPS_MUL 1024  /* KiB/s -> bytes per second */
#define GPU_UNIT_KIBPS_DEC 0
#define GPU_UNIT_KIBPS_API 1
#define GPU_UNIT_COUNT_MUL 1     /* a count, a state number, a 1/0 flag, a bit mask */
#define GPU_UNIT_COUNT_DEC 0
#define GPU_UNIT_COUNT_API 1

#define GPU_SAMPLE_FIELDS(X) \
	X(util_gpu_pct, BASIC, PCT, "utilization_gpu_percent", FAMILY, "gpuctl_gpu_utilization_ratio", GAUGE, "", \
	  "Fraction of the last sample period a kernel was running (0-1).", "", CODE, 0, \
	  MODEL) \
	X(util_mem_pct, BASIC, PCT, "utilization_memory_percent", FAMILY, "gpuctl_gpu_memory_utilization_ratio", GAUGE, "", \
	  "Fraction of the last sample period device memory was read or written (0-1).", "", CODE, 0, \
	  MODEL) \
	X(mem_used_bytes, BASIC, BYTES, "memory_used_bytes", FAMILY, "gpuctl_gpu_memory_used_bytes", GAUGE, "", \
	  "Device memory in use.", "", CODE, 0, \
	  MODEL) \
	X(mem_free_bytes, BASIC, BYTES, "memory_free_bytes", FAMILY, "gpuctl_gpu_memory_free_bytes", GAUGE, "", \
	  "Device memory free.", "", CODE, 0, \
	  MODEL) \
	X(mem_total_bytes, BASIC, BYTES, "memory_total_bytes", FAMILY, "gpuctl_gpu_memory_total_bytes", GAUGE, "", \
	  "Device memory in total, as the driver reports it.", "", CODE, 0, \
	  MODEL) \
	X(temp_c, BASIC, CELSIUS, "temperature_celsius", FAMILY, "gpuctl_gpu_temperature_celsius", GAUGE, "", \
	  "GPU core temperature.", "", CODE, 0, \
	  MODEL) \
	X(temp_mem_c, BASIC, CELSIUS, "memory_temperature_celsius", FAMILY, "gpuctl_gpu_memory_temperature_celsius", GAUGE, "", \
	  "Device memory (HBM) temperature.", "", BATCH, NVML_FI_DEV_MEMORY_TEMP, \
	  MODEL) \
	X(temp_slowdown_c, BASIC, CELSIUS, NULL, FAMILY, "gpuctl_gpu_slowdown_temperature_celsius", GAUGE, "", \
	  "Temperature at which the GPU slows its clocks.", "", CODE, 0, \
	  MODEL) \
	X(temp_shutdown_c, BASIC, CELSIUS, NULL, FAMILY, "gpuctl_gpu_shutdown_temperature_celsius", GAUGE, "", \
	  "Temperature at which the GPU shuts down.", "", CODE, 0, \
	  MODEL) \
	X(fan_pct, BASIC, PCT, "fan_percent", FAMILY, "gpuctl_gpu_fan_speed_ratio", GAUGE, "", \
	  "Fan speed as a fraction of its maximum (0-1).", "", CODE, 0, \
	  MODEL) \
	X(power_mw, BASIC, MW, "power_watts", FAMILY, "gpuctl_gpu_power_watts", GAUGE, "", "Power draw.", "", BATCH, NVML_FI_DEV_POWER_AVERAGE, \
	  MODEL) \
	/* nvmlDeviceGetPowerUsage (power_mw) averages over 1 s on Ampere and later */ \
	X(power_instant_mw, BASIC, MW, NULL, FAMILY, "gpuctl_gpu_power_instant_watts", GAUGE, "", \
	  "Instantaneous power draw (gpuctl_gpu_power_watts is averaged over a second on Ampere and later).", "", \
	  BATCH, NVML_FI_DEV_POWER_INSTANT, \
	  MODEL) \
	X(power_limit_mw, BASIC, MW, "power_limit_watts", FAMILY, "gpuctl_gpu_power_limit_watts", GAUGE, "", \
	  "Power limit in force.", "", CODE, 0, \
	  MODEL) \
	/* cumulative since the driver loaded */ \
	X(energy_mj, ENERGY, MJ, "energy_joules", FAMILY, "gpuctl_gpu_energy_joules_total", COUNTER, "", \
	  "Energy consumed since the driver was loaded.", "", BATCH, NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, \
	  MODEL) \
	X(sm_clock_mhz, BASIC, MHZ, "sm_clock_mhz", FAMILY, "gpuctl_gpu_sm_clock_hertz", GAUGE, "", "SM clock.", "", CODE, 0, \
	  MODEL) \
	X(mem_clock_mhz, BASIC, MHZ, "memory_clock_mhz", FAMILY, "gpuctl_gpu_memory_clock_hertz", GAUGE, "", \
	  "Memory clock.", "", CODE, 0, \
	  MODEL) \
	/* 0..15 */ \
	X(pstate, BASIC, COUNT, "pstate", FAMILY, "gpuctl_gpu_performance_state", GAUGE, "", \
	  "Performance state (0 = P0, fastest, to 15).", "", CODE, 0, \
	  MODEL) \
	/* CLK_EVT_* bits: a name per bit in --json, a series per reason (metrics.c) */ \
	X(clock_event_reasons, BASIC, COUNT, "clock_event_reasons", NONE, NULL, GAUGE, NULL, NULL, "", CODE, 0, \
	  MODEL) \
	/* cumulative time spent throttled (nvmlDeviceGetViolationStatus) */ \
	X(viol_power_ns, VIOL, NS, NULL, FAMILY, "gpuctl_gpu_clock_event_seconds_total", COUNTER, "reason", \
	  "Time the clocks were held down for this reason, since the driver was loaded.", "reason=\"power\"", BATCH, NVML_FI_DEV_PERF_POLICY_POWER, \
	  FAULT_TIME(viol, POWER)) \
	X(viol_thermal_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"thermal\"", BATCH, NVML_FI_DEV_PERF_POLICY_THERMAL, \
	  FAULT_TIME(viol, THERMAL)) \
	X(viol_sync_boost_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"sync_boost\"", BATCH, NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, \
	  ZERO(viol)) \
	X(viol_board_limit_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"board_limit\"", BATCH, NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT, \
	  ZERO(viol)) \
	X(viol_low_util_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"low_utilization\"", BATCH, NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, \
	  MODEL) \
	X(viol_reliability_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"reliability\"", BATCH, NVML_FI_DEV_PERF_POLICY_RELIABILITY, \
	  ZERO(viol)) \
	/* ECC: volatile = since the driver loaded, aggregate = over the GPU's life */ \
	X(ecc_vol_corrected, ECC, COUNT, "ecc_volatile_corrected", FAMILY, "gpuctl_gpu_ecc_volatile_errors_total", COUNTER, \
	  "type", "ECC errors in all locations since the driver was loaded.", "type=\"corrected\"", BATCH, NVML_FI_DEV_ECC_SBE_VOL_TOTAL, \
	  FAULT_SUM(ecc_on, ECC_CORRECTED, count)) \
	X(ecc_vol_uncorrected, ECC, COUNT, "ecc_volatile_uncorrected", SERIES, "gpuctl_gpu_ecc_volatile_errors_total", \
	  COUNTER, NULL, NULL, "type=\"uncorrected\"", BATCH, NVML_FI_DEV_ECC_DBE_VOL_TOTAL, \
	  FAULT_SUM(ecc_on, ECC_UNCORRECTABLE, count)) \
	X(ecc_agg_corrected, ECC, COUNT, "ecc_aggregate_corrected", FAMILY, "gpuctl_gpu_ecc_aggregate_errors_total", \
	  COUNTER, "type", "ECC errors in all locations over the GPU's life.", "type=\"corrected\"", BATCH, NVML_FI_DEV_ECC_SBE_AGG_TOTAL, \
	  FAULT_SUM(ecc_on, ECC_CORRECTED, count)) \
	X(ecc_agg_uncorrected, ECC, COUNT, "ecc_aggregate_uncorrected", SERIES, "gpuctl_gpu_ecc_aggregate_errors_total", \
	  COUNTER, NULL, NULL, "type=\"uncorrected\"", BATCH, NVML_FI_DEV_ECC_DBE_AGG_TOTAL, \
	  FAULT_SUM(ecc_on, ECC_UNCORRECTABLE, count)) \
	/* aggregate, by location */ \
	X(ecc_sram_uncorrected, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_ecc_errors_total", COUNTER, "type, location", \
	  "ECC errors over the GPU's life, by memory location (sram, dram).", "type=\"uncorrected\",location=\"sram\"", CODE, 0, \
	  FAULT_SUM(ecc_on, ECC_UNCORRECTABLE, sram)) \
	X(ecc_dram_uncorrected, ECC, COUNT, NULL, SERIES, "gpuctl_gpu_ecc_errors_total", COUNTER, NULL, NULL, \
	  "type=\"uncorrected\",location=\"dram\"", BATCH, NVML_FI_DEV_ECC_DBE_AGG_DEV, \
	  FAULT_SUM(ecc_on, ECC_UNCORRECTABLE, dram)) \
	X(retired_pages_sbe, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_retired_pages", GAUGE, "cause", \
	  "Memory pages retired, by cause (sbe, dbe).", "cause=\"sbe\"", BATCH, NVML_FI_DEV_RETIRED_SBE, \
	  FAULT_SUM(retired_pages, RETIRED_PAGES, sbe)) \
	X(retired_pages_dbe, ECC, COUNT, NULL, SERIES, "gpuctl_gpu_retired_pages", GAUGE, NULL, NULL, "cause=\"dbe\"", BATCH, NVML_FI_DEV_RETIRED_DBE, \
	  FAULT_SUM(retired_pages, RETIRED_PAGES, dbe)) \
	X(retired_pages_pending, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_retired_pages_pending", GAUGE, "", \
	  "1 if a page retirement waits for the next driver reload.", "", FLAG, NVML_FI_DEV_RETIRED_PENDING, \
	  FAULT_ACTIVE(retired_pages, RETIRED_PAGES)) \
	X(remap_corrected, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_remapped_rows", GAUGE, "type", \
	  "Memory rows remapped, by the error type that caused it.", "type=\"corrected\"", BATCH, NVML_FI_DEV_REMAPPED_COR, \
	  ZERO(remap)) \
	X(remap_uncorrected, ECC, COUNT, "remapped_rows_uncorrected", SERIES, "gpuctl_gpu_remapped_rows", GAUGE, NULL, NULL, \
	  "type=\"uncorrected\"", BATCH, NVML_FI_DEV_REMAPPED_UNC, \
	  FAULT_SUM(remap, REMAP_PENDING, count)) \
	X(remap_pending, ECC, COUNT, "remap_pending", FAMILY, "gpuctl_gpu_row_remap_pending", GAUGE, "", \
	  "1 if a row remap waits for a GPU reset.", "", FLAG, NVML_FI_DEV_REMAPPED_PENDING, \
	  FAULT_ACTIVE(remap, REMAP_PENDING)) \
	X(remap_failure, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_row_remap_failure", GAUGE, "", \
	  "1 if a row remap failed (the GPU needs service).", "", FLAG, NVML_FI_DEV_REMAPPED_FAILURE, \
	  FAULT_ACTIVE(remap, REMAP_FAILURE)) \
	X(pcie_gen, PCIE, COUNT, "pcie_link_generation", FAMILY, "gpuctl_gpu_pcie_link_generation", GAUGE, "", \
	  "Current PCIe link generation.", "", CODE, 0, \
	  MODEL) \
	X(pcie_width, PCIE, COUNT, "pcie_link_width", FAMILY, "gpuctl_gpu_pcie_link_width", GAUGE, "", \
	  "Current PCIe link width (lanes).", "", CODE, 0, \
	  MODEL) \
	X(pcie_tx_kbps, PCIE, KIBPS, NULL, FAMILY, "gpuctl_gpu_pcie_transmit_bytes_per_second", GAUGE, "", \
	  "PCIe transmit throughput over the driver's last sampling window.", "", CODE, 0, \
	  MODEL) \
	X(pcie_rx_kbps, PCIE, KIBPS, NULL, FAMILY, "gpuctl_gpu_pcie_receive_bytes_per_second", GAUGE, "", \
	  "PCIe receive throughput over the driver's last sampling window.", "", CODE, 0, \
	  MODEL) \
	X(pcie_replays, PCIE, COUNT, "pcie_replays", FAMILY, "gpuctl_gpu_pcie_replays_total", COUNTER, "", \
	  "PCIe replay events (link retransmissions).", "", BATCH, NVML_FI_DEV_PCIE_REPLAY_COUNTER, \
	  MODEL) \
	/* since the driver loaded; a link that keeps retraining is failing */ \
	X(pcie_l0_recoveries, PCIE, COUNT, NULL, FAMILY, "gpuctl_gpu_pcie_link_recoveries_total", COUNTER, "", \
	  "PCIe link recoveries: times the link left L0 to retrain.", "", BATCH, NVML_FI_DEV_PCIE_L0_TO_RECOVERY_COUNTER, \
	  MODEL) \
	/* profiling metrics from NVML GPM (Hopper and later; docs/metrics.md: their DCGM_FI_PROF_* \
	 * equivalents), each between this sample and the previous one: n/a until there are two */ \
	X(prof_sm_active_pct, GPM, PCT, NULL, FAMILY, "gpuctl_gpu_sm_active_ratio", GAUGE, "", \
	  "Fraction of the time an SM had a warp resident, averaged over all SMs (0-1; DCGM_FI_PROF_SM_ACTIVE).", "", CODE, 0, \
	  GPM(SM_ACTIVE)) \
	X(prof_sm_occupancy_pct, GPM, PCT, NULL, FAMILY, "gpuctl_gpu_sm_occupancy_ratio", GAUGE, "", \
	  "Resident warps over the most an SM can hold, averaged over time and SMs (0-1; DCGM_FI_PROF_SM_OCCUPANCY).", "", CODE, 0, \
	  GPM(SM_OCCUPANCY)) \
	X(prof_tensor_active_pct, GPM, PCT, NULL, FAMILY, "gpuctl_gpu_tensor_active_ratio", GAUGE, "", \
	  "Fraction of the time the tensor pipes (any type) were busy (0-1; DCGM_FI_PROF_PIPE_TENSOR_ACTIVE).", "", CODE, 0, \
	  GPM(TENSOR)) \
	X(prof_dram_active_pct, GPM, PCT, NULL, FAMILY, "gpuctl_gpu_dram_active_ratio", GAUGE, "", \
	  "Device memory bandwidth used over its peak (0-1; DCGM_FI_PROF_DRAM_ACTIVE).", "", CODE, 0, \
	  GPM(DRAM)) \
	X(prof_fp64_active_pct, GPM, PCT, NULL, FAMILY, "gpuctl_gpu_pipe_active_ratio", GAUGE, "pipe", \
	  "Fraction of the time a non-tensor pipe was busy, by pipe (fp64, fp32, fp16; 0-1; DCGM_FI_PROF_PIPE_FP64/FP32/FP16_ACTIVE).", "pipe=\"fp64\"", CODE, 0, \
	  GPM(FP64)) \
	X(prof_fp32_active_pct, GPM, PCT, NULL, SERIES, "gpuctl_gpu_pipe_active_ratio", GAUGE, NULL, \
	  NULL, "pipe=\"fp32\"", CODE, 0, \
	  GPM(FP32)) \
	X(prof_fp16_active_pct, GPM, PCT, NULL, SERIES, "gpuctl_gpu_pipe_active_ratio", GAUGE, NULL, \
	  NULL, "pipe=\"fp16\"", CODE, 0, \
	  GPM(FP16)) \
	X(prof_pcie_tx_kbps, GPM, KIBPS, NULL, FAMILY, "gpuctl_gpu_prof_pcie_bytes_per_second", GAUGE, "direction", \
	  "PCIe throughput by direction (tx, rx), GPM (DCGM_FI_PROF_PCIE_TX_BYTES, _RX_BYTES).", "direction=\"tx\"", CODE, 0, \
	  GPM(PCIE_TX)) \
	X(prof_pcie_rx_kbps, GPM, KIBPS, NULL, SERIES, "gpuctl_gpu_prof_pcie_bytes_per_second", GAUGE, NULL, \
	  NULL, "direction=\"rx\"", CODE, 0, \
	  GPM(PCIE_RX)) \
	X(prof_nvlink_tx_kbps, GPM, KIBPS, NULL, FAMILY, "gpuctl_gpu_prof_nvlink_bytes_per_second", GAUGE, "direction", \
	  "NVLink throughput of all links by direction (tx, rx), GPM (DCGM_FI_PROF_NVLINK_TX_BYTES, _RX_BYTES).", "direction=\"tx\"", CODE, 0, \
	  GPM(NVLINK_TX)) \
	X(prof_nvlink_rx_kbps, GPM, KIBPS, NULL, SERIES, "gpuctl_gpu_prof_nvlink_bytes_per_second", GAUGE, NULL, \
	  NULL, "direction=\"rx\"", CODE, 0, \
	  GPM(NVLINK_RX))

#endif
