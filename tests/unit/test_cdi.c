/* SPDX-License-Identifier: Apache-2.0 */
/* test_cdi.c - the CDI spec builder, the `ldconfig -p` reader (src/core/cdi.c)
 * and the driver/CUDA comparison (src/core/cudaver.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "view/cdi.h"
#include "core/cudaver.h"

/* The device named name in spec, or NULL. */
static json_t *device(json_t *spec, const char *name)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(spec, "devices"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return d;
	return NULL;
}

/* Its device nodes' container paths, comma-separated. */
static const char *nodes(json_t *d, char *buf, size_t len)
{
	size_t i;
	json_t *n;
	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(d, "containerEdits"), "deviceNodes"), i, n) {
		size_t at = strlen(buf);
		snprintf(buf + at, len - at, "%s%s", at ? "," : "", json_string_value(json_object_get(n, "path")));
	}
	return buf;
}

static void two_gpus(struct cdi_gpu *g)
{
	memset(g, 0, 2 * sizeof(*g));
	g[0].index = 0;
	g[0].minor = 4; /* the minor is the driver's, not the index */
	strcpy(g[0].uuid, "GPU-aaaa");
	g[1].index = 1;
	g[1].minor = 1;
	strcpy(g[1].uuid, "GPU-bbbb");
	g[1].nmig = 2;
	g[1].mig[0] = (struct cdi_mig){ .gi = 1, .ci = 0, .uuid = "MIG-1111", .gi_cap_minor = 12, .ci_cap_minor = 13 };
	g[1].mig[1] = (struct cdi_mig){ .gi = 2, .ci = 0, .uuid = "MIG-2222", .gi_cap_minor = -1, .ci_cap_minor = -1 };
}

static void test_spec_devices(void **state)
{
	(void)state;
	struct cdi_gpu g[2];
	two_gpus(g);
	struct cdi_host h = { .dev_dir = "/dev", .common_nodes = { "nvidiactl", "nvidia-uvm" }, .ncommon = 2 };
	char err[200], buf[400];
	json_t *spec = cdi_spec_build(&h, g, 2, err, sizeof(err));
	assert_non_null(spec);
	assert_string_equal(json_string_value(json_object_get(spec, "cdiVersion")), CDI_VERSION);
	assert_string_equal(json_string_value(json_object_get(spec, "kind")), "nvidia.com/gpu");
	/* by index and by UUID: exactly that GPU's node */
	assert_string_equal(nodes(device(spec, "0"), buf, sizeof(buf)), "/dev/nvidia4");
	assert_string_equal(nodes(device(spec, "GPU-aaaa"), buf, sizeof(buf)), "/dev/nvidia4");
	assert_string_equal(nodes(device(spec, "1"), buf, sizeof(buf)), "/dev/nvidia1");
	assert_string_equal(nodes(device(spec, "GPU-bbbb"), buf, sizeof(buf)), "/dev/nvidia1");
	/* a MIG instance: its GPU's node and its two capabilities; unknown ones left out */
	assert_string_equal(nodes(device(spec, "1:0"), buf, sizeof(buf)),
			    "/dev/nvidia1,/dev/nvidia-caps/nvidia-cap12,/dev/nvidia-caps/nvidia-cap13");
	assert_string_equal(nodes(device(spec, "MIG-1111"), buf, sizeof(buf)),
			    "/dev/nvidia1,/dev/nvidia-caps/nvidia-cap12,/dev/nvidia-caps/nvidia-cap13");
	assert_string_equal(nodes(device(spec, "1:1"), buf, sizeof(buf)), "/dev/nvidia1");
	assert_null(device(spec, "0:0"));
	assert_string_equal(nodes(device(spec, "all"), buf, sizeof(buf)),
			    "/dev/nvidia4,/dev/nvidia1,/dev/nvidia-caps/nvidia-cap12,/dev/nvidia-caps/nvidia-cap13");
	assert_int_equal(json_array_size(json_object_get(spec, "devices")), 2 + 2 + 4 + 1);
	/* the common nodes once, for every device; /dev: no hostPath */
	json_t *edits = json_object_get(spec, "containerEdits");
	assert_string_equal(nodes(spec, buf, sizeof(buf)), "/dev/nvidiactl,/dev/nvidia-uvm");
	assert_null(json_object_get(json_array_get(json_object_get(edits, "deviceNodes"), 0), "hostPath"));
	/* no library: no LD_LIBRARY_PATH, and no mount */
	assert_int_equal(json_array_size(json_object_get(edits, "mounts")), 0);
	assert_int_equal(json_array_size(json_object_get(edits, "env")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(edits, "env"), 0)),
			    "NVIDIA_VISIBLE_DEVICES=void");
	json_decref(spec);
}

static void test_spec_host_paths_and_files(void **state)
{
	(void)state;
	struct cdi_gpu g[2];
	two_gpus(g);
	struct cdi_host h = { .dev_dir = "/tmp/fake", .common_nodes = { "nvidiactl" }, .ncommon = 1, .nlibs = 1, .nbins = 1 };
	strcpy(h.libs[0].host_path, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.1");
	strcpy(h.libs[0].name, "libcuda.so.1");
	strcpy(h.bins[0].host_path, "/usr/bin/nvidia-smi");
	strcpy(h.bins[0].name, "nvidia-smi");
	char err[200];
	json_t *spec = cdi_spec_build(&h, g, 2, err, sizeof(err));
	assert_non_null(spec);
	json_t *n = json_array_get(json_object_get(json_object_get(device(spec, "0"), "containerEdits"), "deviceNodes"), 0);
	assert_string_equal(json_string_value(json_object_get(n, "path")), "/dev/nvidia4");
	assert_string_equal(json_string_value(json_object_get(n, "hostPath")), "/tmp/fake/nvidia4");
	json_t *edits = json_object_get(spec, "containerEdits");
	json_t *m = json_object_get(edits, "mounts");
	assert_int_equal(json_array_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "hostPath")),
			    "/usr/lib/x86_64-linux-gnu/libcuda.so.580.1");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "containerPath")),
			    CDI_LIB_DIR "/libcuda.so.1");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "containerPath")),
			    CDI_BIN_DIR "/nvidia-smi");
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(m, 0), "options"), 0)), "ro");
	assert_string_equal(json_string_value(json_array_get(json_object_get(edits, "env"), 1)),
			    "LD_LIBRARY_PATH=" CDI_LIB_DIR);
	json_decref(spec);
	/* a name with a slash would mount outside the directory: refused */
	strcpy(h.libs[0].name, "../libcuda.so.1");
	assert_null(cdi_spec_build(&h, g, 2, err, sizeof(err)));
	assert_non_null(strstr(err, "bad file"));
	assert_null(cdi_spec_build(&h, g, 0, err, sizeof(err)));
	assert_string_equal(err, "no GPU to describe");
}

static const char ldconfig[] = "1234 libs found in cache `/etc/ld.so.cache'\n"
			       "\tlibnvidia-ml.so.1 (libc6) => /usr/lib/i386-linux-gnu/libnvidia-ml.so.1\n"
			       "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
			       "\tlibcuda.so.1 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libcuda.so.1\n"
			       "\tlibcuda.so.1 (libc6,x86-64) => /usr/local/lib/libcuda.so.1\n"
			       "\tlibcuda.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so\n"
			       "\tlibcuda.so.1 (libc6,AArch64) => /lib/aarch64-linux-gnu/libcuda.so.1\n"
			       "\tbroken line\n"
			       "Cache generated by: ldconfig (GNU libc) stable release version 2.36";

static void test_ldconfig_find(void **state)
{
	(void)state;
	char p[128];
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so.1", "x86-64", p, sizeof(p)), 1);
	assert_string_equal(p, "/lib/x86_64-linux-gnu/libcuda.so.1"); /* the first, as the loader */
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so", "x86-64", p, sizeof(p)), 1);
	assert_string_equal(p, "/lib/x86_64-linux-gnu/libcuda.so");
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libnvidia-ml.so.1", "x86-64", p, sizeof(p)), 1);
	assert_string_equal(p, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"); /* not the 32-bit one */
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libnvidia-ml.so.1", "", p, sizeof(p)), 1);
	assert_string_equal(p, "/usr/lib/i386-linux-gnu/libnvidia-ml.so.1");
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so.1", "AArch64", p, sizeof(p)), 1);
	assert_string_equal(p, "/lib/aarch64-linux-gnu/libcuda.so.1");
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so.", "x86-64", p, sizeof(p)), 0);
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libnvidia-ptxjitcompiler.so.1", "x86-64", p, sizeof(p)), 0);
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so.1", "x86-6", p, sizeof(p)), 0);
	assert_int_equal(cdi_ldconfig_find(ldconfig, "libcuda.so.1", "x86-64", p, 10), -1);
	assert_int_equal(cdi_ldconfig_find("", "libcuda.so.1", "x86-64", p, sizeof(p)), 0);
}

static void test_cudaver_parse(void **state)
{
	(void)state;
	unsigned v = 0;
	char err[200];
	assert_int_equal(cudaver_parse("12.4", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 12040);
	assert_int_equal(cudaver_parse("12.4.1", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 12040);
	assert_int_equal(cudaver_parse("13", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 13000);
	assert_int_equal(cudaver_parse("11.10", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 11100); /* 11.10 is newer than 11.9 */
	const char *bad[] = { "", ".", "12.", ".4", "12..4", "12.4.1.2", "v12", "12.4a", "-1", " 12", "12.100", "1000",
			      "12.4\n" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(cudaver_parse(bad[i], &v, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "bad CUDA version"));
		assert_null(strchr(err, '\n'));
	}
	char s[16];
	cudaver_format(12040, s, sizeof(s));
	assert_string_equal(s, "12.4");
	cudaver_format(11100, s, sizeof(s));
	assert_string_equal(s, "11.10");
}

static void test_cudaver_image(void **state)
{
	(void)state;
	unsigned need = 0;
	char err[200];
	/* as nvidia/cuda:12.4.1-base sets them */
	const char *req = "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471";
	assert_int_equal(cudaver_from_require(req, &need, err, sizeof(err)), 1);
	assert_int_equal(need, 12040);
	assert_int_equal(cudaver_image_need(req, "12.4.1", &need, err, sizeof(err)), 1);
	assert_int_equal(need, 12040);
	/* the cuda term anywhere in the list */
	assert_int_equal(cudaver_from_require("brand=tesla,cuda>=11.8", &need, err, sizeof(err)), 1);
	assert_int_equal(need, 11080);
	/* no cuda term: CUDA_VERSION decides; nothing: any driver */
	assert_int_equal(cudaver_image_need("brand=tesla", "12.2.0", &need, err, sizeof(err)), 1);
	assert_int_equal(need, 12020);
	assert_int_equal(cudaver_image_need(NULL, "", &need, err, sizeof(err)), 0);
	assert_int_equal(cudaver_image_need("", NULL, &need, err, sizeof(err)), 0);
	/* malformed */
	assert_int_equal(cudaver_from_require("cuda>=", &need, err, sizeof(err)), -1);
	assert_int_equal(cudaver_image_need("cuda>=twelve", "12.4", &need, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "twelve"));
	assert_int_equal(cudaver_image_need(NULL, "12.x", &need, err, sizeof(err)), -1);
	/* the comparison */
	assert_true(cudaver_ok(13000, 12040));
	assert_true(cudaver_ok(12040, 12040));
	assert_false(cudaver_ok(12020, 12040));
	assert_false(cudaver_ok(11100, 12000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_devices),
		cmocka_unit_test(test_spec_host_paths_and_files),
		cmocka_unit_test(test_ldconfig_find),
		cmocka_unit_test(test_cudaver_parse),
		cmocka_unit_test(test_cudaver_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
