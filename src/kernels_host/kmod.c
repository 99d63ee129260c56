/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kmod.c - find, dlopen and check the CUDA kernels module. See kmod.h.
 */
#include "kernels_host/kmod.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUCTL_BUILD_DIR
#define GPUCTL_BUILD_DIR ""
#endif
#ifndef GPUCTL_LIBEXEC_DIR
#define GPUCTL_LIBEXEC_DIR ""
#endif
#ifdef GPUCTL_WITH_CUDA_MODULE
#define KMOD_BUILT_WITH_CUDA 1
#else
#define KMOD_BUILT_WITH_CUDA 0
#endif

#ifndef GPUCTL_LIBDIR_REL
#define GPUCTL_LIBDIR_REL "lib" /* the install's libdir, relative to its prefix */
#endif

#define KMOD_FILE "gpuctl_kernels.so"
#define KMOD_MAX_CANDIDATES 7

static bool nonempty(const char *s) { return s && s[0]; }

/* The folder of the running binary (dirname of /proc/self/exe), or "". */
static void exe_dir_of_self(char *out, size_t outlen)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
	else
		out[0] = '\0';
}

/* Fill cand[] with the candidate paths in search order; returns how many. */
static int candidates(const struct kmod_search *s, char cand[KMOD_MAX_CANDIDATES][4096], bool *explicit_given)
{
	int n = 0;
	*explicit_given = false;
	if (nonempty(s->explicit_path)) {
		snprintf(cand[n++], 4096, "%s", s->explicit_path);
		*explicit_given = true;
		return n; /* an explicit path is the only one tried */
	}
	if (nonempty(s->env_override))
		snprintf(cand[n++], 4096, "%s", s->env_override);
	char self[4096];
	if (!s->exe_dir)
		exe_dir_of_self(self, sizeof self);
	const char *ed = s->exe_dir ? s->exe_dir : self;
	if (nonempty(ed)) {
		snprintf(cand[n++], 4096, "%.3000s/%s", ed, KMOD_FILE);
		snprintf(cand[n++], 4096, "%.3000s/../lib/gpuctl/%s", ed, KMOD_FILE);
		if (strcmp(GPUCTL_LIBDIR_REL, "lib") != 0)
			snprintf(cand[n++], 4096, "%.3000s/../%s/gpuctl/%s", ed, GPUCTL_LIBDIR_REL, KMOD_FILE);
	}
	const char *bd = s->build_dir ? s->build_dir : GPUCTL_BUILD_DIR;
	const char *ld = s->libexec_dir ? s->libexec_dir : GPUCTL_LIBEXEC_DIR;
	if (nonempty(bd))
		snprintf(cand[n++], 4096, "%s/kernels/%s", bd, KMOD_FILE);
	if (nonempty(ld))
		snprintf(cand[n++], 4096, "%s/%s", ld, KMOD_FILE);
	return n;
}

/* dlopen the driver library once to see that it is there (then let it go:
 * the module's runtime opens it again itself). */
static int driver_present(const char *lib, const char *module, char *err, size_t errlen)
{
	const char *name = nonempty(lib) ? lib : "libcuda.so.1";
	void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "cannot load '%s': %s not found (no NVIDIA driver)", module, name);
		return KMOD_ENODRIVER;
	}
	dlclose(h);
	return KMOD_OK;
}

static int load_one(struct kmod *km, const char *path, char *err, size_t errlen)
{
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		if (e && strstr(e, "libcuda.so")) {
			snprintf(err, errlen, "cannot load '%s': libcuda.so.1 not found (no NVIDIA driver)", path);
			return KMOD_ENODRIVER;
		}
		snprintf(err, errlen, "cannot load '%s': %s", path, e ? e : "unknown dlopen error");
		return KMOD_ELOAD;
	}
	gk_api_fn fn;
	void *sym = dlsym(h, GK_SYMBOL);
	if (!sym) {
		snprintf(err, errlen, "cannot load '%s': symbol '%s' missing (not a gpuctl kernels module)",
			 path, GK_SYMBOL);
		dlclose(h);
		return KMOD_ELOAD;
	}
	memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer, as POSIX allows */
	const struct gk_api *api = fn();
	if (!api) {
		snprintf(err, errlen, "cannot load '%s': %s() returned no table", path, GK_SYMBOL);
		dlclose(h);
		return KMOD_ELOAD;
	}
	if (api->abi_version != GK_ABI_VERSION || api->struct_size < sizeof(struct gk_api)) {
		snprintf(err, errlen,
			 "kernels module '%s' has ABI %u (table %u bytes), gpuctl needs ABI %d (%zu bytes): rebuild it",
			 path, api->abi_version, api->struct_size, GK_ABI_VERSION, sizeof(struct gk_api));
		dlclose(h);
		return KMOD_EABI;
	}
	km->handle = h;
	km->api = api;
	size_t len = strnlen(path, sizeof km->path - 1);
	memcpy(km->path, path, len);
	km->path[len] = '\0';
	return KMOD_OK;
}

int kmod_open(struct kmod *km, const struct kmod_search *s, char *err, size_t errlen)
{
	memset(km, 0, sizeof *km);
	if (errlen)
		err[0] = '\0';
	char cand[KMOD_MAX_CANDIDATES][4096];
	bool explicit_given;
	int n = candidates(s, cand, &explicit_given);
	for (int i = 0; i < n; i++) {
		if (access(cand[i], F_OK) != 0) {
			if (explicit_given) {
				snprintf(err, errlen, "kernels module '%s' not found", cand[i]);
				return KMOD_ENOMODULE;
			}
			continue;
		}
		int drc = driver_present(s->driver_lib, cand[i], err, errlen);
		if (drc != KMOD_OK)
			return drc;
		return load_one(km, cand[i], err, errlen);
	}
	int with_cuda = s->built_with_cuda >= 0 ? s->built_with_cuda : KMOD_BUILT_WITH_CUDA;
	if (!with_cuda)
		snprintf(err, errlen,
			 "gpuctl was built without CUDA (no kernels module; rebuild with -DGPUCTL_WITH_CUDA=ON)");
	else {
		char where[1024] = "";
		for (int i = 0, used = 0; i < n && used >= 0 && (size_t)used < sizeof where; i++)
			used += snprintf(where + used, sizeof where - (size_t)used, "%s%s", i ? ", " : "", cand[i]);
		snprintf(err, errlen, "kernels module '%s' not found (looked in %s; set GPUCTL_KERNELS)", KMOD_FILE,
			 n > 0 ? where : "nowhere");
	}
	return KMOD_ENOMODULE;
}

int kmod_open_default(struct kmod *km, const char *explicit_path, const char *env_override,
		      char *err, size_t errlen)
{
	struct kmod_search s = { .explicit_path = explicit_path, .env_override = env_override,
				 .built_with_cuda = -1, .driver_lib = NULL };
	return kmod_open(km, &s, err, errlen);
}

void kmod_close(struct kmod *km)
{
	if (km->handle)
		dlclose(km->handle);
	memset(km, 0, sizeof *km);
}
