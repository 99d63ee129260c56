/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cdi.c - the CDI spec builder and the `ldconfig -p` reader (cdi.h).
 */
#include <stdio.h>
#include <string.h>

#include "cdi.h"

/* What NVIDIA's container toolkit mounts for the "compute" and "utility"
 * capabilities, by soname (docs/containers.md says where the lists differ). */
const char *const cdi_driver_libs[] = {
	"libcuda.so.1", "libnvidia-ml.so.1", /* required */
	"libnvidia-ptxjitcompiler.so.1", "libnvidia-nvvm.so.4", "libcudadebugger.so.1",
	"libnvidia-gpucomp.so", "libnvidia-allocator.so.1", "libnvidia-cfg.so.1",
	"libnvidia-opencl.so.1", "libnvidia-pkcs11-openssl3.so", "libnvidia-nscq.so.2",
};
const unsigned cdi_driver_libs_n = sizeof(cdi_driver_libs) / sizeof(cdi_driver_libs[0]);
const unsigned cdi_driver_libs_required = 2;
const char *const cdi_driver_bins[] = {
	"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control", "nvidia-cuda-mps-server",
};
const unsigned cdi_driver_bins_n = sizeof(cdi_driver_bins) / sizeof(cdi_driver_bins[0]);

/* {"path": "/dev/NAME"} and, when the host's node is elsewhere, its hostPath. */
static json_t *node(const char *dev_dir, const char *name)
{
	char path[300], host[600];
	snprintf(path, sizeof(path), "/dev/%s", name);
	json_t *n = json_pack("{s:s}", "path", path);
	if (strcmp(dev_dir, "/dev") != 0) {
		snprintf(host, sizeof(host), "%s/%s", dev_dir, name);
		json_object_set_new(n, "hostPath", json_string(host));
	}
	return n;
}

static void add_gpu_nodes(json_t *nodes, const char *dev_dir, const struct cdi_gpu *g)
{
	char name[32];
	snprintf(name, sizeof(name), "nvidia%u", g->minor);
	json_array_append_new(nodes, node(dev_dir, name));
}

static void add_mig_nodes(json_t *nodes, const char *dev_dir, const struct cdi_mig *m)
{
	char name[48];
	int caps[2] = { m->gi_cap_minor, m->ci_cap_minor };
	for (int i = 0; i < 2; i++) {
		if (caps[i] < 0)
			continue;
		snprintf(name, sizeof(name), "nvidia-caps/nvidia-cap%d", caps[i]);
		json_array_append_new(nodes, node(dev_dir, name));
	}
}

static json_t *device(const char *name, json_t *nodes)
{
	return json_pack("{s:s, s:{s:o}}", "name", name, "containerEdits", "deviceNodes", nodes);
}

static int add_files(json_t *mounts, const struct cdi_file *f, unsigned n, const char *dir, char *err,
		     size_t errlen)
{
	char dst[300];
	for (unsigned i = 0; i < n; i++) {
		if (!f[i].name[0] || strchr(f[i].name, '/') || f[i].host_path[0] != '/') {
			snprintf(err, errlen, "bad file to mount: '%.80s' as '%.80s'", f[i].host_path, f[i].name);
			return -1;
		}
		snprintf(dst, sizeof(dst), "%s/%s", dir, f[i].name);
		json_array_append_new(mounts, json_pack("{s:s, s:s, s:[s,s,s,s]}", "hostPath", f[i].host_path,
							"containerPath", dst, "options", "ro", "nosuid", "nodev",
							"bind"));
	}
	return 0;
}

json_t *cdi_spec_build(const struct cdi_host *h, const struct cdi_gpu *gpus, unsigned ngpus, char *err,
		       size_t errlen)
{
	if (ngpus == 0) {
		snprintf(err, errlen, "no GPU to describe");
		return NULL;
	}
	const char *dev_dir = h->dev_dir && h->dev_dir[0] ? h->dev_dir : "/dev";
	json_t *devices = json_array(), *all = json_array();
	char name[128];
	for (unsigned i = 0; i < ngpus; i++) {
		const struct cdi_gpu *g = &gpus[i];
		json_t *nodes = json_array();
		add_gpu_nodes(nodes, dev_dir, g);
		add_gpu_nodes(all, dev_dir, g);
		snprintf(name, sizeof(name), "%u", g->index);
		json_array_append_new(devices, device(name, nodes));
		if (g->uuid[0])
			json_array_append_new(devices, device(g->uuid, json_deep_copy(nodes)));
		for (unsigned k = 0; k < g->nmig && k < GPU_MAX_MIG; k++) {
			const struct cdi_mig *m = &g->mig[k];
			json_t *mn = json_array();
			add_gpu_nodes(mn, dev_dir, g);
			add_mig_nodes(mn, dev_dir, m);
			add_mig_nodes(all, dev_dir, m);
			snprintf(name, sizeof(name), "%u:%u", g->index, k);
			json_array_append_new(devices, device(name, mn));
			if (m->uuid[0])
				json_array_append_new(devices, device(m->uuid, json_deep_copy(mn)));
		}
	}
	json_array_append_new(devices, device("all", all));

	json_t *common = json_array(), *mounts = json_array();
	for (unsigned i = 0; i < h->ncommon && i < 8; i++)
		json_array_append_new(common, node(dev_dir, h->common_nodes[i]));
	json_t *env = json_array();
	json_array_append_new(env, json_string("NVIDIA_VISIBLE_DEVICES=void"));
	if (h->nlibs)
		json_array_append_new(env, json_string("LD_LIBRARY_PATH=" CDI_LIB_DIR));
	json_t *edits = json_pack("{s:o, s:o, s:o}", "env", env, "deviceNodes", common, "mounts", mounts);
	json_t *spec = json_pack("{s:s, s:s, s:o, s:o}", "cdiVersion", CDI_VERSION, "kind", CDI_KIND, "devices",
				 devices, "containerEdits", edits);
	if (!spec) { /* json_pack took (and freed) what it was given */
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (add_files(mounts, h->libs, h->nlibs < CDI_MAX_FILES ? h->nlibs : CDI_MAX_FILES, CDI_LIB_DIR, err,
		      errlen) ||
	    add_files(mounts, h->bins, h->nbins < CDI_MAX_FILES ? h->nbins : CDI_MAX_FILES, CDI_BIN_DIR, err,
		      errlen)) {
		json_decref(spec);
		return NULL;
	}
	return spec;
}

/* One line of `ldconfig -p`: "\tNAME (TAGS) => PATH". 0 with the parts
 * (pointers into line, lengths), -1 when it is not such a line. */
static int split_line(const char *line, size_t len, const char **nm, size_t *nlen, const char **tags,
		      size_t *tlen, const char **path, size_t *plen)
{
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == 0)
		return -1; /* the header line ("N libs found in cache ...") is not indented */
	*nm = line + i;
	while (i < len && line[i] != ' ')
		i++;
	*nlen = (size_t)(line + i - *nm);
	if (*nlen == 0 || i + 2 > len || line[i + 1] != '(')
		return -1;
	i += 2;
	*tags = line + i;
	while (i < len && line[i] != ')')
		i++;
	if (i >= len)
		return -1;
	*tlen = (size_t)(line + i - *tags);
	i++;
	static const char arrow[] = " => ";
	const char *a = NULL;
	for (size_t k = i; k + 4 <= len; k++)
		if (!memcmp(line + k, arrow, 4)) {
			a = line + k;
			break;
		}
	if (!a)
		return -1;
	*path = a + 4;
	*plen = (size_t)(line + len - *path);
	return *plen && **path == '/' ? 0 : -1;
}

/* The arch is the tag after "libc6," (none: ""); other tags (", OS ABI: ...")
 * follow it after a comma. */
static bool arch_matches(const char *tags, size_t tlen, const char *arch)
{
	static const char libc6[] = "libc6";
	if (tlen < 5 || memcmp(tags, libc6, 5))
		return false;
	const char *rest = tags + 5;
	size_t rlen = tlen - 5;
	size_t alen = strlen(arch);
	if (alen == 0)
		return rlen == 0 || (rlen >= 2 && rest[0] == ',' && rest[1] == ' '); /* "libc6, OS ABI: ..." */
	if (rlen < alen + 1 || *rest != ',' || memcmp(rest + 1, arch, alen))
		return false;
	return rlen == alen + 1 || rest[alen + 1] == ',';
}

int cdi_ldconfig_find(const char *text, const char *soname, const char *arch, char *out, size_t outlen)
{
	size_t slen = strlen(soname);
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *nm, *tags, *path;
		size_t nlen, tlen, plen;
		if (!split_line(line, len, &nm, &nlen, &tags, &tlen, &path, &plen) && nlen == slen &&
		    !memcmp(nm, soname, slen) && arch_matches(tags, tlen, arch)) {
			if (plen + 1 > outlen)
				return -1;
			memcpy(out, path, plen);
			out[plen] = '\0';
			return 1;
		}
		line = eol ? eol + 1 : NULL;
	}
	return 0;
}
