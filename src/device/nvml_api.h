/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_api.h - the part of NVML that gpuctl uses, declared here because no
 * nvml.h exists at build time (the library is dlopen'ed at run time).
 *
 * Layouts and values follow NVIDIA's nvml.h (CUDA 12.9 - 13.x); every struct
 * here is passed by pointer to the library, so a wrong layout corrupts
 * memory: change one only against the header. Enums are passed as int.
 * Private to src/device/nvml*.c.
 */
#ifndef GPUCTL_NVML_API_H
#define GPUCTL_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_UNKNOWN = 999,
};

/* Buffer sizes (NVML_DEVICE_*_BUFFER_SIZE and friends). */
#define NVML_NAME_BUF 96
#define NVML_UUID_BUF 96
#define NVML_SERIAL_BUF 30
#define NVML_VBIOS_BUF 32
#define NVML_PART_BUF 80
#define NVML_VERSION_BUF 80

#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

#define NVML_TEMPERATURE_GPU 0
#define NVML_TEMP_THRESHOLD_SHUTDOWN 0
#define NVML_TEMP_THRESHOLD_SLOWDOWN 1

#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_MEMORY_LOCATION_DRAM 2
#define NVML_MEMORY_LOCATION_SRAM 7

#define NVML_PAGE_RETIREMENT_CAUSE_SBE 0 /* multiple single-bit errors */
#define NVML_PAGE_RETIREMENT_CAUSE_DBE 1

#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

/* nvmlPerfPolicyType_t */
#define NVML_PERF_POLICY_POWER 0
#define NVML_PERF_POLICY_THERMAL 1
#define NVML_PERF_POLICY_SYNC_BOOST 2
#define NVML_PERF_POLICY_BOARD_LIMIT 3
#define NVML_PERF_POLICY_LOW_UTILIZATION 4
#define NVML_PERF_POLICY_RELIABILITY 5

/* nvmlNvLinkErrorCounter_t */
#define NVML_NVLINK_ERROR_DL_REPLAY 0
#define NVML_NVLINK_ERROR_DL_RECOVERY 1
#define NVML_NVLINK_ERROR_DL_CRC_FLIT 2
#define NVML_NVLINK_ERROR_DL_CRC_DATA 3

/* nvmlIntNvLinkDeviceType_t */
#define NVML_NVLINK_DEVICE_TYPE_GPU 0x00
#define NVML_NVLINK_DEVICE_TYPE_IBMNPU 0x01
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 0x02

/* nvmlGpuTopologyLevel_t */
#define NVML_TOPOLOGY_INTERNAL 0
#define NVML_TOPOLOGY_SINGLE 10
#define NVML_TOPOLOGY_MULTIPLE 20
#define NVML_TOPOLOGY_HOSTBRIDGE 30
#define NVML_TOPOLOGY_NODE 40
#define NVML_TOPOLOGY_SYSTEM 50

/* nvmlGpuP2PCapsIndex_t / nvmlGpuP2PStatus_t */
#define NVML_P2P_CAPS_INDEX_READ 0
#define NVML_P2P_CAPS_INDEX_NVLINK 2
#define NVML_P2P_STATUS_OK 0

#define NVML_AFFINITY_SCOPE_NODE 0

/* nvmlNvlinkVersion_t, what nvmlDeviceGetNvLinkVersion answers (an H200 says 6) */
#define NVML_NVLINK_VERSION_5_0 7

/* nvmlDeviceArchitecture_t */
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_BLACKWELL 10

/* nvmlGpuFabricState_t (unsigned char) */
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

/* Event types (bit mask) */
#define NVML_EVENT_SBE 0x1ULL
#define NVML_EVENT_DBE 0x2ULL
#define NVML_EVENT_XID 0x8ULL

/* nvmlFieldValue_t ids (nvml.h, checked against two copies of it: NVIDIA's
 * header and pynvml's). IDs never change; a driver that does not know one
 * answers that field with an error of its own. */
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3   /* corrected, since driver load */
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4   /* uncorrected, since driver load */
#define NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5   /* corrected, lifetime */
#define NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6   /* uncorrected, lifetime */
#define NVML_FI_DEV_ECC_DBE_AGG_DEV 23    /* uncorrected, lifetime, device memory (= DRAM) */
#define NVML_FI_DEV_RETIRED_SBE 29        /* pages retired for single-bit errors */
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_RETIRED_PENDING 31    /* 1 = a retirement is pending */
/* per-link NVLink error counters, links 0-5 then 6-11 (no ids past link 11) */
#define NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0 32
#define NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0 39
#define NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L0 46
#define NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L0 53
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83 /* mJ since driver load */
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L6 96
#define NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6 102
#define NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L6 108
#define NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L6 114
#define NVML_FI_DEV_REMAPPED_COR 142
#define NVML_FI_DEV_REMAPPED_UNC 143
#define NVML_FI_DEV_REMAPPED_PENDING 144  /* 1 = rows pending remapping */
#define NVML_FI_DEV_REMAPPED_FAILURE 145  /* 1 = a remapping failed */
/* the link in scopeId */
#define NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY 161
#define NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY 162
#define NVML_FI_DEV_NVLINK_ERROR_DL_CRC 163 /* which CRC counter it is, the header does not say */
#define NVML_FI_DEV_NVLINK_GET_STATE 165
#define NVML_FI_DEV_PCIE_L0_TO_RECOVERY_COUNTER 169 /* times the link left L0 for recovery (retraining) */
/* mW; scopeId 0 = the GPU alone. AVERAGE (over 1 s, Ampere on, not GA100) is
 * what nvmlDeviceGetPowerUsage answers on those GPUs. */
#define NVML_FI_DEV_POWER_AVERAGE 185
#define NVML_FI_DEV_POWER_INSTANT 186
/* Violation (throttle) time counters, ns, one per nvmlPerfPolicyType_t 0..5
 * from this id on (power, thermal, sync boost, board limit, low utilization,
 * reliability): what nvmlDeviceGetViolationStatus answers. NVIDIA's field
 * reference gives "in ns" for POWER (74) and SYNC_BOOST (76), which newer
 * headers also name NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP/_SYNC_BOOST. */
#define NVML_FI_DEV_PERF_POLICY_POWER 74
#define NVML_FI_DEV_PERF_POLICY_THERMAL 75
#define NVML_FI_DEV_PERF_POLICY_SYNC_BOOST 76
#define NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT 77
#define NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION 78
#define NVML_FI_DEV_PERF_POLICY_RELIABILITY 79
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5
#define NVML_VALUE_TYPE_UNSIGNED_SHORT 6

typedef struct {
	char busIdLegacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
/* _v2 splits what the driver reserves off "used", as nvidia-smi shows it. */
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
/* NVML_STRUCT_VERSION(Memory, 2): the struct's size and its version in the top byte */
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long referenceTime, violationTime; } nvmlViolationTime_t;

/* nvmlProcessInfo_t as taken by the _v2/_v3 process queries. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
	unsigned int gpuInstanceSliceCount;
	unsigned int computeInstanceSliceCount;
	unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
	unsigned char clusterUuid[16];
	nvmlReturn_t status;
	unsigned int cliqueId;
	unsigned char state;
} nvmlGpuFabricInfo_t;

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

/* GPM (GPU performance monitoring, Hopper and later): nvml.h's
 * nvmlGpmMetricId_t values, checked against NVIDIA's header (its comments:
 * the _UTIL ones are percent 0.0-100.0, the _PER_SEC ones MiB/s). */
#define NVML_GPM_METRIC_SM_UTIL 2
#define NVML_GPM_METRIC_SM_OCCUPANCY 3
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10
#define NVML_GPM_METRIC_FP64_UTIL 11
#define NVML_GPM_METRIC_FP32_UTIL 12
#define NVML_GPM_METRIC_FP16_UTIL 13
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC 20
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC 21
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRICS_GET_VERSION 1
/* The metrics array's length: nvml.h's NVML_GPM_METRIC_MAX grew (98, 210,
 * 333) and the library reads only numMetrics entries, as it must for
 * programs built against the first header; 98 is that header's. */
#define NVML_GPM_METRICS_LEN 98

typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

typedef struct {
	unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice; /* out */
} nvmlGpmSupport_t;

typedef struct { /* 40 bytes */
	unsigned int metricId;  /* in */
	nvmlReturn_t nvmlReturn; /* out, per metric */
	double value;           /* out */
	struct { char *shortName, *longName, *unit; } metricInfo; /* out */
} nvmlGpmMetric_t;

typedef struct {
	unsigned int version;   /* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics;
	nvmlGpmSample_t sample1, sample2; /* the older one first */
	nvmlGpmMetric_t metrics[NVML_GPM_METRICS_LEN];
} nvmlGpmMetricsGet_t;

/* The entry points, resolved by name (versioned names first, see nvml.c). A
 * NULL pointer means this driver lacks the function: its values read "not
 * supported". */
struct nvml_api {
	void *lib;
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned int);
	nvmlReturn_t (*SystemGetNVMLVersion)(char *, unsigned int);
	nvmlReturn_t (*SystemGetCudaDriverVersion)(int *);
	nvmlReturn_t (*DeviceGetCount)(unsigned int *);
	nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetSerial)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetVbiosVersion)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetBoardPartNumber)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetArchitecture)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetCudaComputeCapability)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*DeviceGetNumGpuCores)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*DeviceGetMemoryInfoV2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*DeviceGetMemoryBusWidth)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerManagementLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerManagementDefaultLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerManagementLimitConstraints)(nvmlDevice_t, unsigned int *, unsigned int *);
	nvmlReturn_t (*DeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPersistenceMode)(nvmlDevice_t, int *);
	nvmlReturn_t (*DeviceGetComputeMode)(nvmlDevice_t, int *);
	nvmlReturn_t (*DeviceGetEccMode)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int *, unsigned int *);
	nvmlReturn_t (*DeviceGetGpuMaxPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxPcieLinkWidth)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetCurrPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetCurrPcieLinkWidth)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPcieThroughput)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetPcieReplayCounter)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetTemperatureThreshold)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*DeviceGetFieldValues)(nvmlDevice_t, int, nvmlFieldValue_t *);
	nvmlReturn_t (*DeviceGetFanSpeed)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*DeviceGetPerformanceState)(nvmlDevice_t, int *);
	nvmlReturn_t (*DeviceGetCurrentClocksEventReasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*DeviceGetViolationStatus)(nvmlDevice_t, int, nvmlViolationTime_t *);
	nvmlReturn_t (*DeviceGetTotalEccErrors)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*DeviceGetMemoryErrorCounter)(nvmlDevice_t, int, int, int, unsigned long long *);
	nvmlReturn_t (*DeviceGetRetiredPages)(nvmlDevice_t, int, unsigned int *, unsigned long long *);
	nvmlReturn_t (*DeviceGetRetiredPagesPendingStatus)(nvmlDevice_t, int *);
	nvmlReturn_t (*DeviceGetRemappedRows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
	nvmlReturn_t (*DeviceGetNvLinkState)(nvmlDevice_t, unsigned int, int *);
	nvmlReturn_t (*DeviceGetNvLinkVersion)(nvmlDevice_t, unsigned int, unsigned int *);
	nvmlReturn_t (*DeviceGetNvLinkRemotePciInfo)(nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetNvLinkRemoteDeviceType)(nvmlDevice_t, unsigned int, int *);
	nvmlReturn_t (*DeviceGetNvLinkErrorCounter)(nvmlDevice_t, unsigned int, int, unsigned long long *);
	nvmlReturn_t (*DeviceGetTopologyCommonAncestor)(nvmlDevice_t, nvmlDevice_t, int *);
	nvmlReturn_t (*DeviceGetP2PStatus)(nvmlDevice_t, nvmlDevice_t, int, int *);
	nvmlReturn_t (*DeviceGetCpuAffinityWithinScope)(nvmlDevice_t, unsigned int, unsigned long *, unsigned int);
	nvmlReturn_t (*DeviceGetCpuAffinity)(nvmlDevice_t, unsigned int, unsigned long *);
	nvmlReturn_t (*DeviceGetMemoryAffinity)(nvmlDevice_t, unsigned int, unsigned long *, unsigned int);
	nvmlReturn_t (*DeviceGetComputeRunningProcesses)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	nvmlReturn_t (*DeviceGetGraphicsRunningProcesses)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	nvmlReturn_t (*DeviceGetMaxMigDeviceCount)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetGpuInstanceId)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetComputeInstanceId)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetAttributes)(nvmlDevice_t, nvmlDeviceAttributes_t *);
	nvmlReturn_t (*DeviceGetGpuFabricInfo)(nvmlDevice_t, nvmlGpuFabricInfo_t *);
	nvmlReturn_t (*DeviceGetSupportedEventTypes)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t *);
	nvmlReturn_t (*DeviceRegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
	nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
	nvmlReturn_t (*EventSetFree)(nvmlEventSet_t);
	nvmlReturn_t (*GpmQueryDeviceSupport)(nvmlDevice_t, nvmlGpmSupport_t *);
	nvmlReturn_t (*GpmSampleAlloc)(nvmlGpmSample_t *);
	nvmlReturn_t (*GpmSampleFree)(nvmlGpmSample_t);
	nvmlReturn_t (*GpmSampleGet)(nvmlDevice_t, nvmlGpmSample_t);
	nvmlReturn_t (*GpmMetricsGet)(nvmlGpmMetricsGet_t *);
	/* (device, gpuInstanceId, sample): a MIG GPU instance's counters */
	nvmlReturn_t (*GpmMigSampleGet)(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
};

#endif
