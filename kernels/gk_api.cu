/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_api.cu - the module's one exported symbol and the device-info entries.
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"

int gk_device_count(int *count, char *err, size_t errlen)
{
	*count = 0;
	cudaError_t e = cudaGetDeviceCount(count);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
		*count = 0;
		return (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ? GK_ENODEV : GK_ECUDA;
	}
	if (errlen) err[0] = '\0';
	return GK_OK;
}

static int info_inner(int dev, struct gk_device_info *o, struct gk_result *r)
{
	CKR(gk_set_device(r, dev));
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, dev));
	snprintf(o->name, sizeof o->name, "%.95s", p.name);
	CK(cudaDeviceGetPCIBusId(o->pci_bus_id, sizeof o->pci_bus_id, dev));
	o->cc_major = p.major;
	o->cc_minor = p.minor;
	o->sm_count = p.multiProcessorCount;
	o->l2_bytes = p.l2CacheSize;
	o->shared_per_block_optin_bytes = (int)p.sharedMemPerBlockOptin;
	o->mem_bus_width_bits = p.memoryBusWidth;
	/* clock attributes may be absent on some drivers: 0 then */
	if (cudaDeviceGetAttribute(&o->clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess) o->clock_khz = 0;
	if (cudaDeviceGetAttribute(&o->mem_clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess)
		o->mem_clock_khz = 0;
	cudaGetLastError();
	size_t fr = 0, tot = 0;
	CK(cudaMemGetInfo(&fr, &tot));
	o->mem_free_bytes = fr;
	o->mem_total_bytes = tot;
	CK(cudaRuntimeGetVersion(&o->runtime_version));
	CK(cudaDriverGetVersion(&o->driver_version));
	return GK_OK;
}

int gk_device_info(int dev, struct gk_device_info *out)
{
	memset(out, 0, sizeof *out);
	struct gk_result r;
	gk_result_init(&r);
	int rc = info_inner(dev, out, &r);
	snprintf(out->err, sizeof out->err, "%s", r.err);
	return rc;
}

#define GK_STR2(x) #x
#define GK_STR(x) GK_STR2(x)
/* the architectures this module holds machine code for (kernels/CMakeLists.txt) */
#ifndef GK_CUDA_ARCHS
#define GK_CUDA_ARCHS "unknown architectures"
#endif

static const struct gk_api api_table = {
	GK_ABI_VERSION,
	sizeof(struct gk_api),
	"gpuctl kernels ABI " GK_STR(GK_ABI_VERSION) ", CUDA " GK_STR(CUDART_VERSION) ", " GK_CUDA_ARCHS,
	gk_device_count,
	gk_device_info,
	gk_copy,
	gk_memory,
	gk_fma,
	gk_gemm,
	gk_own_gemm,
	gk_p2p,
	gk_nccl,
	gk_spmv,
	gk_lj,
	gk_bvh,
	gk_memtest,
	gk_stress,
	gk_load_open,
	gk_load_step,
	gk_load_close,
	gk_train,
};

extern "C" __attribute__((visibility("default"))) const struct gk_api *gpuctl_kernels_api(void)
{
	return &api_table;
}
