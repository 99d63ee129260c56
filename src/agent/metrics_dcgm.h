/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics_dcgm.h - the agent's dcgm-exporter compatibility (config
 * `dcgm_compat = on`, docs/agent.md): the same GPUs' values served a second
 * time under dcgm-exporter's metric names, units and labels, so that a
 * dashboard or alert written for dcgm-exporter works unchanged.
 *
 * One table, DCGM_COMPAT_TABLE: a row per DCGM field gpuctl also has, each
 * the member of a row of the field table (device/gpu_fields.h; a name that
 * is no field's member does not compile) and the conversion from the field's
 * unit to DCGM's: value = field * mul / div, written with dec decimals.
 *   X(name, type, member, mul, div, dec, help)
 * type is GAUGE or COUNTER, as dcgm-exporter's counters file declares it
 * (tests/data/dcgm-exporter/default-counters.csv; its DCP file for the
 * DCGM_FI_PROF_* rows). DCGM_FI_DEV_XID_ERRORS is not a field: its own code
 * (the last XID code seen, 0 for none, as dcgm-exporter writes).
 * docs/metrics.md lists the same rows (test_metrics_dcgm checks both ways).
 */
#ifndef GPUCTL_METRICS_DCGM_H
#define GPUCTL_METRICS_DCGM_H

#include <stddef.h>

#include "metrics.h"

#define DCGM_COMPAT_TABLE(X) \
	X(DCGM_FI_DEV_SM_CLOCK, GAUGE, sm_clock_mhz, 1, 1, 0, "SM clock frequency (in MHz).") \
	X(DCGM_FI_DEV_MEM_CLOCK, GAUGE, mem_clock_mhz, 1, 1, 0, "Memory clock frequency (in MHz).") \
	X(DCGM_FI_DEV_MEMORY_TEMP, GAUGE, temp_mem_c, 1, 1, 0, "Memory temperature (in C).") \
	X(DCGM_FI_DEV_GPU_TEMP, GAUGE, temp_c, 1, 1, 0, "GPU temperature (in C).") \
	X(DCGM_FI_DEV_SLOWDOWN_TEMP, GAUGE, temp_slowdown_c, 1, 1, 0, "Slowdown temperature (in C).") \
	X(DCGM_FI_DEV_SHUTDOWN_TEMP, GAUGE, temp_shutdown_c, 1, 1, 0, "Shutdown temperature (in C).") \
	X(DCGM_FI_DEV_FAN_SPEED, GAUGE, fan_pct, 1, 1, 0, "Fan speed (in %).") \
	X(DCGM_FI_DEV_POWER_USAGE, GAUGE, power_mw, 1, 1, 3, "Power draw (in W).") \
	X(DCGM_FI_DEV_POWER_MGMT_LIMIT, GAUGE, power_limit_mw, 1, 1, 3, "Power management limit (in W).") \
	X(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, COUNTER, energy_mj, 1, 1, 0, \
	  "Total energy consumption since boot (in mJ).") \
	X(DCGM_FI_DEV_PSTATE, GAUGE, pstate, 1, 1, 0, "Performance state (P-State) 0-15, 0 highest.") \
	X(DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, GAUGE, clock_event_reasons, 1, 1, 0, \
	  "Current clock throttle reasons (bit mask, NVML's).") \
	X(DCGM_FI_DEV_PCIE_TX_THROUGHPUT, COUNTER, pcie_tx_kbps, 1, 1, 0, "PCIe transmit throughput (in KB/s) via NVML.") \
	X(DCGM_FI_DEV_PCIE_RX_THROUGHPUT, COUNTER, pcie_rx_kbps, 1, 1, 0, "PCIe receive throughput (in KB/s) via NVML.") \
	X(DCGM_FI_DEV_PCIE_REPLAY_COUNTER, COUNTER, pcie_replays, 1, 1, 0, "Total number of PCIe retries.") \
	X(DCGM_FI_DEV_PCIE_LINK_GEN, GAUGE, pcie_gen, 1, 1, 0, "PCIe link generation.") \
	X(DCGM_FI_DEV_PCIE_LINK_WIDTH, GAUGE, pcie_width, 1, 1, 0, "PCIe link width (lanes).") \
	X(DCGM_FI_DEV_GPU_UTIL, GAUGE, util_gpu_pct, 1, 1, 0, "GPU utilization (in %).") \
	X(DCGM_FI_DEV_MEM_COPY_UTIL, GAUGE, util_mem_pct, 1, 1, 0, "Memory utilization (in %).") \
	X(DCGM_FI_DEV_POWER_VIOLATION, COUNTER, viol_power_ns, 1, 1000, 0, \
	  "Throttling duration due to power constraints (in us).") \
	X(DCGM_FI_DEV_THERMAL_VIOLATION, COUNTER, viol_thermal_ns, 1, 1000, 0, \
	  "Throttling duration due to thermal constraints (in us).") \
	X(DCGM_FI_DEV_SYNC_BOOST_VIOLATION, COUNTER, viol_sync_boost_ns, 1, 1000, 0, \
	  "Throttling duration due to sync-boost constraints (in us).") \
	X(DCGM_FI_DEV_BOARD_LIMIT_VIOLATION, COUNTER, viol_board_limit_ns, 1, 1000, 0, \
	  "Throttling duration due to board limit constraints (in us).") \
	X(DCGM_FI_DEV_LOW_UTIL_VIOLATION, COUNTER, viol_low_util_ns, 1, 1000, 0, \
	  "Throttling duration due to low utilization (in us).") \
	X(DCGM_FI_DEV_RELIABILITY_VIOLATION, COUNTER, viol_reliability_ns, 1, 1000, 0, \
	  "Throttling duration due to reliability constraints (in us).") \
	X(DCGM_FI_DEV_FB_FREE, GAUGE, mem_free_bytes, 1, 1048576, 0, "Framebuffer memory free (in MiB).") \
	X(DCGM_FI_DEV_FB_USED, GAUGE, mem_used_bytes, 1, 1048576, 0, "Framebuffer memory used (in MiB).") \
	X(DCGM_FI_DEV_FB_TOTAL, GAUGE, mem_total_bytes, 1, 1048576, 0, "Framebuffer memory total (in MiB).") \
	X(DCGM_FI_DEV_ECC_SBE_VOL_TOTAL, COUNTER, ecc_vol_corrected, 1, 1, 0, \
	  "Total number of single-bit volatile ECC errors.") \
	X(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, COUNTER, ecc_vol_uncorrected, 1, 1, 0, \
	  "Total number of double-bit volatile ECC errors.") \
	X(DCGM_FI_DEV_ECC_SBE_AGG_TOTAL, COUNTER, ecc_agg_corrected, 1, 1, 0, \
	  "Total number of single-bit persistent ECC errors.") \
	X(DCGM_FI_DEV_ECC_DBE_AGG_TOTAL, COUNTER, ecc_agg_uncorrected, 1, 1, 0, \
	  "Total number of double-bit persistent ECC errors.") \
	X(DCGM_FI_DEV_RETIRED_SBE, COUNTER, retired_pages_sbe, 1, 1, 0, \
	  "Total number of retired pages due to single-bit errors.") \
	X(DCGM_FI_DEV_RETIRED_DBE, COUNTER, retired_pages_dbe, 1, 1, 0, \
	  "Total number of retired pages due to double-bit errors.") \
	X(DCGM_FI_DEV_RETIRED_PENDING, COUNTER, retired_pages_pending, 1, 1, 0, \
	  "Total number of pages pending retirement.") \
	X(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, COUNTER, remap_uncorrected, 1, 1, 0, \
	  "Number of remapped rows for uncorrectable errors.") \
	X(DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, COUNTER, remap_corrected, 1, 1, 0, \
	  "Number of remapped rows for correctable errors.") \
	X(DCGM_FI_DEV_ROW_REMAP_FAILURE, GAUGE, remap_failure, 1, 1, 0, "Whether remapping of rows has failed.") \
	X(DCGM_FI_DEV_ROW_REMAP_PENDING, GAUGE, remap_pending, 1, 1, 0, "Whether a row remapping is pending.") \
	X(DCGM_FI_PROF_SM_ACTIVE, GAUGE, prof_sm_active_pct, 1, 1, 2, \
	  "The ratio of cycles an SM has at least 1 warp assigned (NVML GPM).") \
	X(DCGM_FI_PROF_SM_OCCUPANCY, GAUGE, prof_sm_occupancy_pct, 1, 1, 2, \
	  "The ratio of number of warps resident on an SM (NVML GPM).") \
	X(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, GAUGE, prof_tensor_active_pct, 1, 1, 2, \
	  "Ratio of cycles the tensor (HMMA) pipe is active (NVML GPM).") \
	X(DCGM_FI_PROF_DRAM_ACTIVE, GAUGE, prof_dram_active_pct, 1, 1, 2, \
	  "Ratio of cycles the device memory interface is active sending or receiving data (NVML GPM).") \
	X(DCGM_FI_PROF_PIPE_FP64_ACTIVE, GAUGE, prof_fp64_active_pct, 1, 1, 2, \
	  "Ratio of cycles the fp64 pipes are active (NVML GPM).") \
	X(DCGM_FI_PROF_PIPE_FP32_ACTIVE, GAUGE, prof_fp32_active_pct, 1, 1, 2, \
	  "Ratio of cycles the fp32 pipes are active (NVML GPM).") \
	X(DCGM_FI_PROF_PIPE_FP16_ACTIVE, GAUGE, prof_fp16_active_pct, 1, 1, 2, \
	  "Ratio of cycles the fp16 pipes are active (NVML GPM).") \
	X(DCGM_FI_PROF_PCIE_TX_BYTES, COUNTER, prof_pcie_tx_kbps, 1024, 1, 0, \
	  "The rate of data transmitted over the PCIe bus, in bytes per second (NVML GPM).") \
	X(DCGM_FI_PROF_PCIE_RX_BYTES, COUNTER, prof_pcie_rx_kbps, 1024, 1, 0, \
	  "The rate of data received over the PCIe bus, in bytes per second (NVML GPM).") \
	X(DCGM_FI_PROF_NVLINK_TX_BYTES, COUNTER, prof_nvlink_tx_kbps, 1024, 1, 0, \
	  "The rate of data transmitted over NVLink, in bytes per second (NVML GPM).") \
	X(DCGM_FI_PROF_NVLINK_RX_BYTES, COUNTER, prof_nvlink_rx_kbps, 1024, 1, 0, \
	  "The rate of data received over NVLink, in bytes per second (NVML GPM).")

/* The one name served by code rather than a field (see above). */
#define DCGM_COMPAT_XID_NAME "DCGM_FI_DEV_XID_ERRORS"

struct dcgm_compat_row {
	const char *name;
	enum metric_type type;
	size_t off;         /* offsetof(struct gpu_sample, member) */
	const char *member; /* the field table's member, for the docs */
	unsigned long long mul, div;
	unsigned dec;
	const char *help;
};

extern const struct dcgm_compat_row dcgm_compat_rows[];
extern const size_t dcgm_compat_rows_n;

/* Appends the dcgm-exporter families of snap (every GPU that is up, every
 * value it has; DCGM_FI_DEV_XID_ERRORS when the xid group is on) to out,
 * with dcgm-exporter's labels (docs/metrics.md). In OpenMetrics a counter
 * whose name has no _total is written as `unknown` (the format wants _total
 * on a counter's samples; the names must stay dcgm-exporter's). Pure. */
void metrics_dcgm_render(struct abuf *out, const struct snapshot *snap, const struct metrics_opts *o);

#endif
