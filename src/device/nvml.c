/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml.c - the NVML backend: libnvidia-ml.so.1 is dlopen'ed at run time (the
 * binary links no NVIDIA library), its entry points are resolved by name,
 * versioned names first, and a function the driver lacks leaves its values
 * "not supported". This file: loading, open/close, system facts, XID events
 * and the operations table. Per-GPU reads are in nvml_device.c, topology in
 * nvml_topo.c.
 *
 * NVML calls cost 1-3 ms each on an H200 (nvmlInit 13 ms, PCIe throughput
 * 20 ms, topology 17 ms), so: facts that do not change are read once, and
 * sample() reads only the groups it is asked for.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml_priv.h"

#define NVML_LIBRARY "libnvidia-ml.so.1"

static const char *library_name = NVML_LIBRARY;

void nvml_set_library_name(const char *name)
{
	library_name = name ? name : NVML_LIBRARY;
}

/* Entry points: the field of struct nvml_api and the names to try, in order. */
#define SYM(field, ...) { offsetof(struct nvml_api, field), #field, { __VA_ARGS__, NULL } }
static const struct {
	size_t off;
	const char *field;
	const char *names[4];
} symbols[] = {
	SYM(Init, "nvmlInit_v2", "nvmlInit"),
	SYM(Shutdown, "nvmlShutdown"),
	SYM(ErrorString, "nvmlErrorString"),
	SYM(SystemGetDriverVersion, "nvmlSystemGetDriverVersion"),
	SYM(SystemGetNVMLVersion, "nvmlSystemGetNVMLVersion"),
	SYM(SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
	SYM(DeviceGetCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
	SYM(DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
	SYM(DeviceGetName, "nvmlDeviceGetName"),
	SYM(DeviceGetUUID, "nvmlDeviceGetUUID"),
	SYM(DeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"),
	SYM(DeviceGetSerial, "nvmlDeviceGetSerial"),
	SYM(DeviceGetVbiosVersion, "nvmlDeviceGetVbiosVersion"),
	SYM(DeviceGetBoardPartNumber, "nvmlDeviceGetBoardPartNumber"),
	SYM(DeviceGetArchitecture, "nvmlDeviceGetArchitecture"),
	SYM(DeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability"),
	SYM(DeviceGetNumGpuCores, "nvmlDeviceGetNumGpuCores"),
	SYM(DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo"),
	SYM(DeviceGetMemoryInfoV2, "nvmlDeviceGetMemoryInfo_v2"),
	SYM(DeviceGetMemoryBusWidth, "nvmlDeviceGetMemoryBusWidth"),
	SYM(DeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo"),
	SYM(DeviceGetClockInfo, "nvmlDeviceGetClockInfo"),
	SYM(DeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit"),
	SYM(DeviceGetPowerManagementDefaultLimit, "nvmlDeviceGetPowerManagementDefaultLimit"),
	SYM(DeviceGetPowerManagementLimitConstraints, "nvmlDeviceGetPowerManagementLimitConstraints"),
	SYM(DeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit"),
	SYM(DeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode"),
	SYM(DeviceGetComputeMode, "nvmlDeviceGetComputeMode"),
	SYM(DeviceGetEccMode, "nvmlDeviceGetEccMode"),
	SYM(DeviceGetMigMode, "nvmlDeviceGetMigMode"),
	SYM(DeviceGetGpuMaxPcieLinkGeneration, "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
	SYM(DeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration"),
	SYM(DeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth"),
	SYM(DeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration"),
	SYM(DeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth"),
	SYM(DeviceGetPcieThroughput, "nvmlDeviceGetPcieThroughput"),
	SYM(DeviceGetPcieReplayCounter, "nvmlDeviceGetPcieReplayCounter"),
	SYM(DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates"),
	SYM(DeviceGetTemperature, "nvmlDeviceGetTemperature"),
	SYM(DeviceGetTemperatureThreshold, "nvmlDeviceGetTemperatureThreshold"),
	SYM(DeviceGetFieldValues, "nvmlDeviceGetFieldValues"),
	SYM(DeviceGetFanSpeed, "nvmlDeviceGetFanSpeed"),
	SYM(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage"),
	SYM(DeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption"),
	SYM(DeviceGetPerformanceState, "nvmlDeviceGetPerformanceState"),
	SYM(DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
	    "nvmlDeviceGetCurrentClocksThrottleReasons"),
	SYM(DeviceGetViolationStatus, "nvmlDeviceGetViolationStatus"),
	SYM(DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors"),
	SYM(DeviceGetMemoryErrorCounter, "nvmlDeviceGetMemoryErrorCounter"),
	SYM(DeviceGetRetiredPages, "nvmlDeviceGetRetiredPages"),
	SYM(DeviceGetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus"),
	SYM(DeviceGetRemappedRows, "nvmlDeviceGetRemappedRows"),
	SYM(DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState"),
	SYM(DeviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion"),
	SYM(DeviceGetNvLinkRemotePciInfo, "nvmlDeviceGetNvLinkRemotePciInfo_v2"),
	SYM(DeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType"),
	SYM(DeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter"),
	SYM(DeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor"),
	SYM(DeviceGetP2PStatus, "nvmlDeviceGetP2PStatus"),
	SYM(DeviceGetCpuAffinityWithinScope, "nvmlDeviceGetCpuAffinityWithinScope"),
	SYM(DeviceGetCpuAffinity, "nvmlDeviceGetCpuAffinity"),
	SYM(DeviceGetMemoryAffinity, "nvmlDeviceGetMemoryAffinity"),
	SYM(DeviceGetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2"),
	SYM(DeviceGetGraphicsRunningProcesses, "nvmlDeviceGetGraphicsRunningProcesses_v3",
	    "nvmlDeviceGetGraphicsRunningProcesses_v2"),
	SYM(DeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount"),
	SYM(DeviceGetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex"),
	SYM(DeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId"),
	SYM(DeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId"),
	SYM(DeviceGetAttributes, "nvmlDeviceGetAttributes_v2"),
	SYM(DeviceGetGpuFabricInfo, "nvmlDeviceGetGpuFabricInfo"),
	SYM(DeviceGetSupportedEventTypes, "nvmlDeviceGetSupportedEventTypes"),
	SYM(EventSetCreate, "nvmlEventSetCreate"),
	SYM(DeviceRegisterEvents, "nvmlDeviceRegisterEvents"),
	SYM(EventSetWait, "nvmlEventSetWait_v2", "nvmlEventSetWait"),
	SYM(EventSetFree, "nvmlEventSetFree"),
	SYM(GpmQueryDeviceSupport, "nvmlGpmQueryDeviceSupport"),
	SYM(GpmSampleAlloc, "nvmlGpmSampleAlloc"),
	SYM(GpmSampleFree, "nvmlGpmSampleFree"),
	SYM(GpmSampleGet, "nvmlGpmSampleGet"),
	SYM(GpmMetricsGet, "nvmlGpmMetricsGet"),
	SYM(GpmMigSampleGet, "nvmlGpmMigSampleGet"),
};
#undef SYM

/* Without these nothing works: the library is not a usable NVML. */
static const size_t required[] = {
	offsetof(struct nvml_api, Init), offsetof(struct nvml_api, Shutdown),
	offsetof(struct nvml_api, ErrorString), offsetof(struct nvml_api, DeviceGetCount),
	offsetof(struct nvml_api, DeviceGetHandleByIndex),
};

static void **slot(struct nvml_api *api, size_t off)
{
	return (void **)((char *)api + off);
}

static int load_library(struct nvml_api *api, struct gpu_err *err)
{
	memset(api, 0, sizeof(*api));
	api->lib = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
	if (!api->lib) {
		gpu_err_set(err, "cannot load %s: NVIDIA driver not found", library_name);
		return GPU_ENODRIVER;
	}
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		for (const char *const *name = symbols[i].names; *name; name++) {
			void *sym = dlsym(api->lib, *name);
			if (sym) {
				*slot(api, symbols[i].off) = sym;
				break;
			}
		}
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (*slot(api, required[i]))
			continue;
		const char *missing = "?";
		for (size_t k = 0; k < sizeof(symbols) / sizeof(symbols[0]); k++)
			if (symbols[k].off == required[i])
				missing = symbols[k].names[0];
		gpu_err_set(err, "%s is not a usable NVML library: it lacks %s", library_name, missing);
		dlclose(api->lib);
		api->lib = NULL;
		return GPU_ENODRIVER;
	}
	return GPU_OK;
}

void nvml_call_error(struct nvml_priv *p, struct gpu_err *err, unsigned gpu, const char *what, nvmlReturn_t rc)
{
	const char *msg = p->api.ErrorString ? p->api.ErrorString(rc) : NULL;
	if (rc == NVML_ERROR_GPU_IS_LOST)
		gpu_err_set(err, "GPU %u has fallen off the bus: %s", gpu, what);
	else
		gpu_err_set(err, "GPU %u: %s: %s", gpu, what, msg ? msg : "unknown NVML error");
}

static void free_priv(struct nvml_priv *p)
{
	for (unsigned i = 0; i < GPU_MAX_GPUS; i++)
		pthread_mutex_destroy(&p->gpu[i].links_lock);
	pthread_mutex_destroy(&p->lock);
	if (p->cat_ok)
		catalog_free(&p->cat);
	free(p);
}

static void unload(struct nvml_api *api)
{
	if (api->lib)
		dlclose(api->lib);
	api->lib = NULL;
}

/* Opens the backend over a loaded entry-point table (given: a test's fake one). */
static int open_with(struct gpu_backend *be, const struct nvml_api *given, struct gpu_err *err)
{
	struct nvml_priv *p = calloc(1, sizeof(*p));
	if (!p) {
		gpu_err_set(err, "out of memory");
		return GPU_ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	for (unsigned i = 0; i < GPU_MAX_GPUS; i++)
		pthread_mutex_init(&p->gpu[i].links_lock, NULL);
	int rc = given ? GPU_OK : load_library(&p->api, err);
	if (given)
		p->api = *given;
	if (rc != GPU_OK) {
		free_priv(p);
		return rc;
	}
	struct nvml_api *api = &p->api;
	nvmlReturn_t r = api->Init();
	if (r != NVML_SUCCESS) {
		const char *msg = api->ErrorString(r);
		gpu_err_set(err, "NVML initialisation failed: %s", msg ? msg : "unknown error");
		unload(api);
		free_priv(p);
		return r == NVML_ERROR_NO_PERMISSION ? GPU_EIO : GPU_ENODRIVER;
	}
	unsigned count = 0;
	r = api->DeviceGetCount(&count);
	if (r != NVML_SUCCESS) {
		const char *msg = api->ErrorString(r);
		gpu_err_set(err, "cannot count GPUs: %s", msg ? msg : "unknown error");
		api->Shutdown();
		unload(api);
		free_priv(p);
		return nvml_errcode(r);
	}
	if (count > GPU_MAX_GPUS)
		count = GPU_MAX_GPUS;
	p->n = count;
	for (unsigned i = 0; i < count; i++) {
		struct nvml_gpu *g = &p->gpu[i];
		g->handle_rc = api->DeviceGetHandleByIndex(i, &g->h);
		if (g->handle_rc != NVML_SUCCESS) {
			g->h = NULL;
			continue;
		}
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof(pci));
		if (NVML_CALL(api, DeviceGetPciInfo, g->h, &pci) == NVML_SUCCESS)
			snprintf(g->busid, sizeof(g->busid), "%.31s", pci.busId);
	}
	be->priv = p;
	be->gpu_count = count;
	return GPU_OK;
}

static void close_nvml(struct gpu_backend *be)
{
	struct nvml_priv *p = nvml_priv_of(be);
	if (!p)
		return;
	if (p->evset)
		NVML_CALL(&p->api, EventSetFree, p->evset);
	for (unsigned i = 0; i < p->n; i++)
		nvml_gpm_free(p, i);
	p->api.Shutdown();
	unload(&p->api);
	free_priv(p);
	be->priv = NULL;
}

/* arg: NULL, or "data_dir=DIR" where the GPU catalog is looked for first
 * (the backend reads no environment: the command passes --data-dir in). */
static int open_nvml(struct gpu_backend *be, const char *arg, struct gpu_err *err)
{
	const char *dir = NULL;
	if (arg && *arg) {
		if (strncmp(arg, "data_dir=", 9) != 0) {
			gpu_err_set(err, "nvml backend: unknown option '%.64s'", arg);
			return GPU_EINVAL;
		}
		dir = arg + 9;
	}
	int rc = open_with(be, NULL, err);
	if (rc == GPU_OK && dir)
		snprintf(nvml_priv_of(be)->data_dir, sizeof(nvml_priv_of(be)->data_dir), "%s", dir);
	return rc;
}

int nvml_open_with_api(struct gpu_backend *be, const struct nvml_api *api, struct gpu_err *err)
{
	be->ops = &gpu_backend_nvml;
	be->priv = NULL;
	be->gpu_count = 0;
	int rc = open_with(be, api, err);
	if (rc != GPU_OK)
		be->ops = NULL;
	return rc;
}

static int system_info_nvml(struct gpu_backend *be, struct gpu_system *out, struct gpu_err *err)
{
	(void)err;
	struct nvml_priv *p = nvml_priv_of(be);
	struct nvml_api *api = &p->api;
	char buf[NVML_VERSION_BUF];
	memset(out, 0, sizeof(*out));
	out->simulated = false;
	snprintf(out->backend, sizeof(out->backend), "nvml");
	out->gpu_count = p->n;
	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		nvml_put_str(&out->hostname, NVML_SUCCESS, buf);
		snprintf(out->server_name, sizeof(out->server_name), "%s", buf);
	} else {
		out->hostname.st = VAL_ERROR;
	}
	buf[0] = '\0';
	nvmlReturn_t r = NVML_CALL(api, SystemGetDriverVersion, buf, sizeof(buf));
	nvml_put_str(&out->driver_version, r, buf);
	buf[0] = '\0';
	r = NVML_CALL(api, SystemGetNVMLVersion, buf, sizeof(buf));
	nvml_put_str(&out->nvml_version, r, buf);
	int cuda = 0;
	r = NVML_CALL(api, SystemGetCudaDriverVersion, &cuda);
	nvml_cuda_version_str(cuda, buf, sizeof(buf));
	nvml_put_str(&out->cuda_driver_version, r, buf);

	/* The fabric manager registers each GPU with the NVSwitch fabric: "completed"
	 * means it runs. GPUs without NVSwitch answer "not supported". */
	out->fabric_manager_running.st = VAL_UNSUPPORTED;
	for (unsigned i = 0; i < p->n; i++) {
		if (!p->gpu[i].h)
			continue;
		nvmlGpuFabricInfo_t fi;
		memset(&fi, 0, sizeof(fi));
		r = NVML_CALL(api, DeviceGetGpuFabricInfo, p->gpu[i].h, &fi);
		if (r != NVML_SUCCESS) {
			out->fabric_manager_running.st = nvml_val_status(r);
		} else if (fi.state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) {
			out->fabric_manager_running.st = VAL_UNSUPPORTED;
		} else {
			VAL_SET(out->fabric_manager_running,
				fi.state == NVML_GPU_FABRIC_STATE_COMPLETED && fi.status == NVML_SUCCESS ? 1 : 0);
		}
		break;
	}
	return GPU_OK;
}

/* XID (and ECC) events: one event set for all GPUs, made on the first poll. */
static void events_setup(struct nvml_priv *p)
{
	struct nvml_api *api = &p->api;
	p->ev_tried = true;
	p->ev_rc = NVML_CALL(api, EventSetCreate, &p->evset);
	if (p->ev_rc != NVML_SUCCESS) {
		p->evset = NULL;
		return;
	}
	unsigned registered = 0;
	nvmlReturn_t last = NVML_ERROR_NOT_SUPPORTED;
	for (unsigned i = 0; i < p->n; i++) {
		unsigned long long supported = 0;
		if (!p->gpu[i].h)
			continue;
		if (NVML_CALL(api, DeviceGetSupportedEventTypes, p->gpu[i].h, &supported) != NVML_SUCCESS)
			supported = NVML_EVENT_XID;
		unsigned long long want = supported & (NVML_EVENT_XID | NVML_EVENT_DBE);
		if (!want)
			continue;
		last = NVML_CALL(api, DeviceRegisterEvents, p->gpu[i].h, want, p->evset);
		if (last == NVML_SUCCESS)
			registered++;
	}
	if (registered == 0) {
		NVML_CALL(api, EventSetFree, p->evset);
		p->evset = NULL;
		p->ev_rc = last;
	}
}

static int poll_events_nvml(struct gpu_backend *be, unsigned timeout_ms, struct gpu_event *out,
			    unsigned max, unsigned *n, struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	*n = 0;
	pthread_mutex_lock(&p->lock);
	if (!p->ev_tried)
		events_setup(p);
	nvmlEventSet_t set = p->evset;
	nvmlReturn_t setup_rc = p->ev_rc;
	pthread_mutex_unlock(&p->lock);
	if (!set) {
		const char *msg = p->api.ErrorString(setup_rc);
		gpu_err_set(err, "XID events: %s", msg ? msg : "not supported");
		return setup_rc == NVML_ERROR_NOT_SUPPORTED || setup_rc == NVML_ERROR_FUNCTION_NOT_FOUND
			       ? GPU_EUNSUPPORTED : nvml_errcode(setup_rc);
	}
	while (*n < max) {
		nvmlEventData_t d;
		memset(&d, 0, sizeof(d));
		nvmlReturn_t r = NVML_CALL(&p->api, EventSetWait, set, &d, *n == 0 ? timeout_ms : 0);
		if (r == NVML_ERROR_TIMEOUT)
			break;
		if (r != NVML_SUCCESS) {
			if (*n > 0)
				break;
			const char *msg = p->api.ErrorString(r);
			gpu_err_set(err, "waiting for XID events: %s", msg ? msg : "unknown error");
			return nvml_errcode(r);
		}
		struct gpu_event *e = &out[*n];
		memset(e, 0, sizeof(*e));
		e->gpu = 0;
		for (unsigned i = 0; i < p->n; i++)
			if (p->gpu[i].h == d.device)
				e->gpu = i;
		e->timestamp_ns = gpu_backend_now_ns(be);
		if (d.eventType & NVML_EVENT_XID) {
			e->kind = EVT_XID;
			e->xid = d.eventData;
			snprintf(e->detail, sizeof(e->detail), "XID %llu", d.eventData);
		} else if (d.eventType & NVML_EVENT_DBE) {
			e->kind = EVT_ECC_DBE;
			snprintf(e->detail, sizeof(e->detail), "double-bit ECC error");
		} else {
			e->kind = EVT_ECC_SBE;
			snprintf(e->detail, sizeof(e->detail), "event type 0x%llx", d.eventType);
		}
		(*n)++;
	}
	return GPU_OK;
}

const struct gpu_backend_ops gpu_backend_nvml = {
	.name = "nvml",
	.open = open_nvml,
	.close = close_nvml,
	.system_info = system_info_nvml,
	.static_info = nvml_static_info,
	.sample = nvml_sample,
	.processes = nvml_processes,
	.link = nvml_link,
	.mig_instances = nvml_mig_instances,
	.poll_events = poll_events_nvml,
};
