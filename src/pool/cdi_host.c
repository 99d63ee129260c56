/* SPDX-License-Identifier: Apache-2.0 */
/* cdi_host.c - see cdi_host.h (moved from src/cmd/cdi.c, which uses it). */
#include "pool/cdi_host.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data_path.h"
#include "core/spawn.h"
#include "pool/devcg.h"

#if defined(__x86_64__)
#define LDCONFIG_ARCH "x86-64"
#elif defined(__aarch64__)
#define LDCONFIG_ARCH "AArch64"
#else
#define LDCONFIG_ARCH ""
#endif

/* `ldconfig -p`'s output (from the file the tests give, or ldconfig itself,
 * which is in /sbin for those without it on PATH; core/spawn.h, killed after
 * 30 s). NULL with err set. */
static char *ldconfig_text(const char *file, char *err, size_t errlen)
{
	if (file)
		return read_whole_file(file, 16 << 20, NULL, err, errlen);
	static const char *const progs[] = { "ldconfig", "/sbin/ldconfig" };
	struct spawn_opts o = { .out_max = 16u << 20, .timeout_ms = 30000 };
	for (unsigned c = 0; c < 2; c++) {
		char *argv[] = { (char *)progs[c], (char *)"-p", NULL }, *buf = NULL, why[200];
		if (spawn_run(argv, &o, &buf, NULL, why, sizeof(why)) == 0 && buf[0])
			return buf;
		free(buf);
	}
	snprintf(err, errlen, "cannot run 'ldconfig -p'");
	return NULL;
}

static enum cdi_host_err find_libs(bool simulated, const char *ldconfig_file, struct cdi_host *h, char *err,
				   size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX];
	char *text = ldconfig_text(ldconfig_file, err, errlen);
	if (!text)
		return ldconfig_file ? CDI_HOST_NOINPUT : CDI_HOST_UNAVAILABLE;
	for (unsigned i = 0; i < cdi_driver_libs_n && h->nlibs < CDI_MAX_FILES; i++) {
		int r = cdi_ldconfig_find(text, cdi_driver_libs[i], LDCONFIG_ARCH, path, sizeof(path));
		if (r == 1 && realpath(path, real) && strlen(real) < sizeof(h->libs[0].host_path)) {
			struct cdi_file *f = &h->libs[h->nlibs++];
			memcpy(f->host_path, real, strlen(real) + 1); /* fits: checked above */
			snprintf(f->name, sizeof(f->name), "%s", cdi_driver_libs[i]);
		} else if (i < cdi_driver_libs_required && !simulated) {
			free(text);
			snprintf(err, errlen, "the driver's %s is not in the loader's cache (ldconfig -p)", cdi_driver_libs[i]);
			return CDI_HOST_UNAVAILABLE;
		}
	}
	free(text);
	return CDI_HOST_OK;
}

static void find_bins(struct cdi_host *h)
{
	const char *path_env = getenv("PATH");
	if (!path_env)
		return;
	char real[PATH_MAX], cand[PATH_MAX];
	for (unsigned b = 0; b < cdi_driver_bins_n && h->nbins < CDI_MAX_FILES; b++) {
		for (const char *d = path_env; *d;) {
			size_t len = strcspn(d, ":");
			if (len && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, d, cdi_driver_bins[b]) <
					   sizeof(cand) &&
			    access(cand, X_OK) == 0 && realpath(cand, real) && strlen(real) < sizeof(h->bins[0].host_path)) {
				struct cdi_file *f = &h->bins[h->nbins++];
				memcpy(f->host_path, real, strlen(real) + 1); /* fits: checked above */
				snprintf(f->name, sizeof(f->name), "%s", cdi_driver_bins[b]);
				break;
			}
			d += len;
			d += *d == ':';
		}
	}
}

static bool node_exists(const char *dev_dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dev_dir, name);
	return stat(p, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISREG(st.st_mode));
}

/* The MIG capability minors ("gpuM/giG/access" ...): real drivers only. */
static int cap_minor(const struct devcg_cap *caps, int ncaps, const char *name)
{
	for (int i = 0; i < ncaps; i++)
		if (!strcmp(caps[i].name, name))
			return (int)caps[i].minor;
	return -1;
}

static enum cdi_host_err gather_gpus(struct gpu_backend *be, bool simulated, const char *dev_dir, struct cdi_gpu *gpus,
				     unsigned *ngpus, char *err, size_t errlen)
{
	struct gpu_err ge;
	char name[48];
	struct devcg_cap *caps = NULL;
	int ncaps = 0;
	if (!simulated) {
		char ignore[300];
		char *text = read_whole_file("/proc/driver/nvidia-caps/mig-minors", 16 << 20, NULL, ignore, sizeof(ignore));
		if (text && (caps = calloc(DEVCG_MAX_CAPS, sizeof(*caps))))
			ncaps = devcg_parse_mig_minors(text, caps, DEVCG_MAX_CAPS);
		free(text);
		if (ncaps < 0)
			ncaps = 0;
	}
	enum cdi_host_err rc = CDI_HOST_OK;
	*ngpus = 0;
	for (unsigned i = 0; i < be->gpu_count && i < GPU_MAX_GPUS; i++) {
		struct gpu_static st = { 0 };
		struct cdi_gpu *g = &gpus[(*ngpus)++];
		memset(g, 0, sizeof(*g));
		g->index = i;
		if (be->ops->static_info(be, i, &st, &ge) != 0) {
			snprintf(err, errlen, "GPU %u: %s", i, ge.msg);
			rc = CDI_HOST_UNAVAILABLE;
			break;
		}
		if (VAL_HAS(st.uuid))
			snprintf(g->uuid, sizeof(g->uuid), "%s", st.uuid.s);
		char why[300];
		if (devcg_gpu_minor(simulated, i, VAL_HAS(st.pci_bus_id) ? st.pci_bus_id.s : "", &g->minor, why,
				    sizeof(why))) {
			snprintf(err, errlen, "GPU %u: %s", i, why);
			rc = CDI_HOST_UNAVAILABLE;
			break;
		}
		snprintf(name, sizeof(name), "nvidia%u", g->minor);
		if (!node_exists(dev_dir, name)) {
			snprintf(err, errlen, "GPU %u: no device node %s/%s", i, dev_dir, name);
			rc = CDI_HOST_UNAVAILABLE;
			break;
		}
		struct gpu_mig mig[GPU_MAX_MIG];
		unsigned nmig = 0;
		if (be->ops->mig_instances && be->ops->mig_instances(be, i, mig, GPU_MAX_MIG, &nmig, &ge) != 0)
			nmig = 0; /* MIG off or not supported: the whole GPU only */
		for (unsigned k = 0; k < nmig && k < GPU_MAX_MIG; k++) {
			struct cdi_mig *m = &g->mig[g->nmig++];
			m->gi = mig[k].gi_id;
			m->ci = mig[k].ci_id;
			snprintf(m->uuid, sizeof(m->uuid), "%s", mig[k].uuid);
			snprintf(name, sizeof(name), "gpu%u/gi%u/access", g->minor, m->gi);
			m->gi_cap_minor = cap_minor(caps, ncaps, name);
			snprintf(name, sizeof(name), "gpu%u/gi%u/ci%u/access", g->minor, m->gi, m->ci);
			m->ci_cap_minor = cap_minor(caps, ncaps, name);
		}
	}
	free(caps);
	return rc;
}

enum cdi_host_err cdi_host_gather(struct gpu_backend *be, bool simulated, const char *dev_dir,
				  const char *ldconfig_file, struct cdi_host *h, struct cdi_gpu *gpus,
				  unsigned *ngpus, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->dev_dir = dev_dir && dev_dir[0] ? dev_dir : "/dev";
	static const char *const common[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset" };
	for (unsigned i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (node_exists(h->dev_dir, common[i]))
			h->common_nodes[h->ncommon++] = common[i];
	enum cdi_host_err rc = gather_gpus(be, simulated, h->dev_dir, gpus, ngpus, err, errlen);
	if (rc == CDI_HOST_OK)
		rc = find_libs(simulated, ldconfig_file, h, err, errlen);
	if (rc != CDI_HOST_OK)
		return rc;
	find_bins(h);
	if (!simulated && !node_exists(h->dev_dir, "nvidiactl")) {
		snprintf(err, errlen, "no device node %s/nvidiactl", h->dev_dir);
		return CDI_HOST_UNAVAILABLE;
	}
	return CDI_HOST_OK;
}

int cdi_spec_write(const json_t *spec, const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "output path too long");
		return -1;
	}
	FILE *f = fopen(tmp, "we");
	bool ok = f && !json_dumpf(spec, f, JSON_INDENT(2)) && fputc('\n', f) != EOF && fflush(f) == 0 &&
		  fsync(fileno(f)) == 0;
	int saved = errno;
	if (f && fclose(f) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (ok && chmod(tmp, 0644) != 0) {
		ok = false;
		saved = errno;
	}
	if (ok && rename(tmp, path) != 0) {
		ok = false;
		saved = errno;
	}
	if (!ok) {
		unlink(tmp);
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(saved));
		return -1;
	}
	return 0;
}
