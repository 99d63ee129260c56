/*
 * gpu_fields.h - the field table: every scalar value a sample of a GPU holds,
 * one row each, in struct gpu_sample's order (which is --json's). Each
 * consumer expands the rows it needs: the struct (gpu.h), the sampler's carry
 * of the slow groups, --json's "sample" object (view/json_util.c), the
 * agent's exposition (agent/metrics.c) and API (agent/api.c), and the tests.
 * Adding a value read from NVML is a row here, its read in the nvml backend,
 * its model in the simulator and its line in docs/json.md and docs/metrics.md.
 *
 * X(member, group, unit, api_key, role, metric, type, labels, help, series, nvml_read, nvml_field)
 *   member  the u64v in struct gpu_sample, and its key in --json's "sample"
 *   group   GPU_GRP_<group> reads it; a slow group's values are carried
 *           between the ticks that read them (sampler.c)
 *   unit    GPU_UNIT_<unit>: what the integer counts, which fixes how it
 *           becomes the exposition's and the API's base unit (below)
 *   api_key its key in the agent's /api/v1/gpus, or NULL (deprecated keys:
 *           docs/json.md)
 *   role    FAMILY: the first row of a Prometheus family (metric, type,
 *           labels and help); SERIES: one more series of the family just
 *           above (metric and type repeated, labels and help NULL); NONE: not
 *           exported from here (clock_event_reasons: its own code)
 *   metric  the family's name; type GAUGE or COUNTER
 *   labels  the label keys beyond the per-GPU ones, for the docs ("" if none)
 *   help    the family's HELP text
 *   series  this row's own labels, exactly as written: key="value"[,...]
 *   nvml_read, nvml_field  how the nvml backend reads it: BATCH with an
 *           NVML_FI_* id: in its nvmlDeviceGetFieldValues batch by that id
 *           alone (a driver without the field: "not supported"); CODE, 0:
 *           by its own code (nvml_device.c, nvml_fields.c)
 */
#ifndef GPUCTL_GPU_FIELDS_H
#define GPUCTL_GPU_FIELDS_H

/* Units: the factor and decimal places that turn the integer into the
 * exposition's base unit (value * MUL / 10^DEC), and the API's divisor. */
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
	  "Fraction of the last sample period a kernel was running (0-1).", "", CODE, 0) \
	X(util_mem_pct, BASIC, PCT, "utilization_memory_percent", FAMILY, "gpuctl_gpu_memory_utilization_ratio", GAUGE, "", \
	  "Fraction of the last sample period device memory was read or written (0-1).", "", CODE, 0) \
	X(mem_used_bytes, BASIC, BYTES, "memory_used_bytes", FAMILY, "gpuctl_gpu_memory_used_bytes", GAUGE, "", \
	  "Device memory in use.", "", CODE, 0) \
	X(mem_free_bytes, BASIC, BYTES, "memory_free_bytes", FAMILY, "gpuctl_gpu_memory_free_bytes", GAUGE, "", \
	  "Device memory free.", "", CODE, 0) \
	X(mem_total_bytes, BASIC, BYTES, "memory_total_bytes", FAMILY, "gpuctl_gpu_memory_total_bytes", GAUGE, "", \
	  "Device memory in total, as the driver reports it.", "", CODE, 0) \
	X(temp_c, BASIC, CELSIUS, "temperature_celsius", FAMILY, "gpuctl_gpu_temperature_celsius", GAUGE, "", \
	  "GPU core temperature.", "", CODE, 0) \
	X(temp_mem_c, BASIC, CELSIUS, "memory_temperature_celsius", FAMILY, "gpuctl_gpu_memory_temperature_celsius", GAUGE, "", \
	  "Device memory (HBM) temperature.", "", CODE, 0) \
	X(temp_slowdown_c, BASIC, CELSIUS, NULL, FAMILY, "gpuctl_gpu_slowdown_temperature_celsius", GAUGE, "", \
	  "Temperature at which the GPU slows its clocks.", "", CODE, 0) \
	X(temp_shutdown_c, BASIC, CELSIUS, NULL, FAMILY, "gpuctl_gpu_shutdown_temperature_celsius", GAUGE, "", \
	  "Temperature at which the GPU shuts down.", "", CODE, 0) \
	X(fan_pct, BASIC, PCT, "fan_percent", FAMILY, "gpuctl_gpu_fan_speed_ratio", GAUGE, "", \
	  "Fan speed as a fraction of its maximum (0-1).", "", CODE, 0) \
	X(power_mw, BASIC, MW, "power_watts", FAMILY, "gpuctl_gpu_power_watts", GAUGE, "", "Power draw.", "", CODE, 0) \
	/* nvmlDeviceGetPowerUsage (power_mw) averages over 1 s on Ampere and later */ \
	X(power_instant_mw, BASIC, MW, NULL, FAMILY, "gpuctl_gpu_power_instant_watts", GAUGE, "", \
	  "Instantaneous power draw (gpuctl_gpu_power_watts is averaged over a second on Ampere and later).", "", \
	  BATCH, NVML_FI_DEV_POWER_INSTANT) \
	X(power_limit_mw, BASIC, MW, "power_limit_watts", FAMILY, "gpuctl_gpu_power_limit_watts", GAUGE, "", \
	  "Power limit in force.", "", CODE, 0) \
	/* cumulative since the driver loaded */ \
	X(energy_mj, ENERGY, MJ, "energy_joules", FAMILY, "gpuctl_gpu_energy_joules_total", COUNTER, "", \
	  "Energy consumed since the driver was loaded.", "", CODE, 0) \
	X(sm_clock_mhz, BASIC, MHZ, "sm_clock_mhz", FAMILY, "gpuctl_gpu_sm_clock_hertz", GAUGE, "", "SM clock.", "", CODE, 0) \
	X(mem_clock_mhz, BASIC, MHZ, "memory_clock_mhz", FAMILY, "gpuctl_gpu_memory_clock_hertz", GAUGE, "", \
	  "Memory clock.", "", CODE, 0) \
	/* 0..15 */ \
	X(pstate, BASIC, COUNT, "pstate", FAMILY, "gpuctl_gpu_performance_state", GAUGE, "", \
	  "Performance state (0 = P0, fastest, to 15).", "", CODE, 0) \
	/* CLK_EVT_* bits: a name per bit in --json, a series per reason (metrics.c) */ \
	X(clock_event_reasons, BASIC, COUNT, "clock_event_reasons", NONE, NULL, GAUGE, NULL, NULL, "", CODE, 0) \
	/* cumulative time spent throttled (nvmlDeviceGetViolationStatus) */ \
	X(viol_power_ns, VIOL, NS, NULL, FAMILY, "gpuctl_gpu_clock_event_seconds_total", COUNTER, "reason", \
	  "Time the clocks were held down for this reason, since the driver was loaded.", "reason=\"power\"", CODE, 0) \
	X(viol_thermal_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"thermal\"", CODE, 0) \
	X(viol_sync_boost_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"sync_boost\"", CODE, 0) \
	X(viol_board_limit_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"board_limit\"", CODE, 0) \
	X(viol_low_util_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"low_utilization\"", CODE, 0) \
	X(viol_reliability_ns, VIOL, NS, NULL, SERIES, "gpuctl_gpu_clock_event_seconds_total", COUNTER, NULL, NULL, \
	  "reason=\"reliability\"", CODE, 0) \
	/* ECC: volatile = since the driver loaded, aggregate = over the GPU's life */ \
	X(ecc_vol_corrected, ECC, COUNT, "ecc_volatile_corrected", FAMILY, "gpuctl_gpu_ecc_volatile_errors_total", COUNTER, \
	  "type", "ECC errors in all locations since the driver was loaded.", "type=\"corrected\"", CODE, 0) \
	X(ecc_vol_uncorrected, ECC, COUNT, "ecc_volatile_uncorrected", SERIES, "gpuctl_gpu_ecc_volatile_errors_total", \
	  COUNTER, NULL, NULL, "type=\"uncorrected\"", CODE, 0) \
	X(ecc_agg_corrected, ECC, COUNT, "ecc_aggregate_corrected", FAMILY, "gpuctl_gpu_ecc_aggregate_errors_total", \
	  COUNTER, "type", "ECC errors in all locations over the GPU's life.", "type=\"corrected\"", CODE, 0) \
	X(ecc_agg_uncorrected, ECC, COUNT, "ecc_aggregate_uncorrected", SERIES, "gpuctl_gpu_ecc_aggregate_errors_total", \
	  COUNTER, NULL, NULL, "type=\"uncorrected\"", CODE, 0) \
	/* aggregate, by location */ \
	X(ecc_sram_uncorrected, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_ecc_errors_total", COUNTER, "type, location", \
	  "ECC errors over the GPU's life, by memory location (sram, dram).", "type=\"uncorrected\",location=\"sram\"", CODE, 0) \
	X(ecc_dram_uncorrected, ECC, COUNT, NULL, SERIES, "gpuctl_gpu_ecc_errors_total", COUNTER, NULL, NULL, \
	  "type=\"uncorrected\",location=\"dram\"", CODE, 0) \
	X(retired_pages_sbe, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_retired_pages", GAUGE, "cause", \
	  "Memory pages retired, by cause (sbe, dbe).", "cause=\"sbe\"", CODE, 0) \
	X(retired_pages_dbe, ECC, COUNT, NULL, SERIES, "gpuctl_gpu_retired_pages", GAUGE, NULL, NULL, "cause=\"dbe\"", CODE, 0) \
	X(retired_pages_pending, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_retired_pages_pending", GAUGE, "", \
	  "1 if a page retirement waits for the next driver reload.", "", CODE, 0) \
	X(remap_corrected, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_remapped_rows", GAUGE, "type", \
	  "Memory rows remapped, by the error type that caused it.", "type=\"corrected\"", CODE, 0) \
	X(remap_uncorrected, ECC, COUNT, "remapped_rows_uncorrected", SERIES, "gpuctl_gpu_remapped_rows", GAUGE, NULL, NULL, \
	  "type=\"uncorrected\"", CODE, 0) \
	X(remap_pending, ECC, COUNT, "remap_pending", FAMILY, "gpuctl_gpu_row_remap_pending", GAUGE, "", \
	  "1 if a row remap waits for a GPU reset.", "", CODE, 0) \
	X(remap_failure, ECC, COUNT, NULL, FAMILY, "gpuctl_gpu_row_remap_failure", GAUGE, "", \
	  "1 if a row remap failed (the GPU needs service).", "", CODE, 0) \
	X(pcie_gen, PCIE, COUNT, "pcie_link_generation", FAMILY, "gpuctl_gpu_pcie_link_generation", GAUGE, "", \
	  "Current PCIe link generation.", "", CODE, 0) \
	X(pcie_width, PCIE, COUNT, "pcie_link_width", FAMILY, "gpuctl_gpu_pcie_link_width", GAUGE, "", \
	  "Current PCIe link width (lanes).", "", CODE, 0) \
	X(pcie_tx_kbps, PCIE, KIBPS, NULL, FAMILY, "gpuctl_gpu_pcie_transmit_bytes_per_second", GAUGE, "", \
	  "PCIe transmit throughput over the driver's last sampling window.", "", CODE, 0) \
	X(pcie_rx_kbps, PCIE, KIBPS, NULL, FAMILY, "gpuctl_gpu_pcie_receive_bytes_per_second", GAUGE, "", \
	  "PCIe receive throughput over the driver's last sampling window.", "", CODE, 0) \
	X(pcie_replays, PCIE, COUNT, "pcie_replays", FAMILY, "gpuctl_gpu_pcie_replays_total", COUNTER, "", \
	  "PCIe replay events (link retransmissions).", "", CODE, 0)

#endif
