/* container.c - see container.h. */
#include "container.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cudaver.h"

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int container_check_image(const char *image, char *err, size_t errlen)
{
	size_t n = strlen(image);
	if (n == 0)
		FAIL("empty image name");
	if (n >= CONTAINER_IMAGE_LEN)
		FAIL("image name longer than %u bytes", CONTAINER_IMAGE_LEN - 1);
	if (!is_alnum(image[0]))
		FAIL("bad image name (it must start with a letter or digit)");
	for (const char *c = image; *c; c++)
		if (!is_alnum(*c) && !strchr("._-/:@", *c))
			FAIL("bad image name (letters, digits and ._-/:@ only)");
	return 0;
}

/* An absolute path of printable bytes without ',' or ':'. */
static int check_path(const char *p, size_t n, const char *what, const char *spec, char *err, size_t errlen)
{
	if (n == 0 || p[0] != '/')
		FAIL("bad mount '%.80s' (%s must be an absolute path)", spec, what);
	if (n >= 4096)
		FAIL("bad mount (%s longer than 4095 bytes)", what);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == ',')
			FAIL("bad mount '%.80s' (%s holds a control character or ',')", spec, what);
	return 0;
}

int container_check_mount(const char *spec, char *err, size_t errlen)
{
	for (const char *c = spec; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			FAIL("bad mount (it holds a control character)");
	const char *c1 = strchr(spec, ':');
	if (!c1)
		FAIL("bad mount '%.80s' (SRC:DST or SRC:DST:ro)", spec);
	const char *c2 = strchr(c1 + 1, ':');
	const char *dst_end = c2 ? c2 : c1 + strlen(c1);
	if (c2 && strcmp(c2 + 1, "ro") != 0 && strcmp(c2 + 1, "rw") != 0)
		FAIL("bad mount '%.80s' (the option after DST is ro or rw)", spec);
	if (check_path(spec, (size_t)(c1 - spec), "SRC", spec, err, errlen) ||
	    check_path(c1 + 1, (size_t)(dst_end - c1 - 1), "DST", spec, err, errlen))
		return -1;
	if (dst_end - c1 - 1 == 1)
		FAIL("bad mount '%.80s' (DST cannot be /)", spec);
	return 0;
}

/* The variables the pool sets in every container job. */
static const char *const pool_env_keys[] = { "CUDA_VISIBLE_DEVICES", "GPUCTL_JOB_ID", "GPUCTL_JOB_GPUS",
					     "NVIDIA_VISIBLE_DEVICES" };

int container_check_env(const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	if (!eq || eq == kv)
		FAIL("bad environment entry (KEY=VALUE)");
	size_t klen = (size_t)(eq - kv);
	for (size_t i = 0; i < klen; i++)
		if (!(is_alnum(kv[i]) || kv[i] == '_') || (i == 0 && kv[i] >= '0' && kv[i] <= '9'))
			FAIL("bad environment variable name (letters, digits and _, not first a digit)");
	for (const char *c = eq + 1; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			FAIL("environment variable %.*s holds a control character", (int)(klen < 60 ? klen : 60), kv);
	for (size_t k = 0; k < sizeof(pool_env_keys) / sizeof(pool_env_keys[0]); k++)
		if (strlen(pool_env_keys[k]) == klen && strncmp(kv, pool_env_keys[k], klen) == 0)
			FAIL("%s is set by the pool (the job's GPUs)", pool_env_keys[k]);
	return 0;
}

int container_check_runtime(const char *runtime, char *err, size_t errlen)
{
	if (strcmp(runtime, "podman") == 0)
		return 0;
	if (strcmp(runtime, "docker") == 0)
		FAIL("runtime 'docker' is not supported by the pool yet (podman only; docs/containers.md)");
	FAIL("unknown runtime '%.40s' (podman)", runtime);
}

void container_cdi_kind(const char *tag, char *out, size_t outlen)
{
	snprintf(out, outlen, "gpuctl.pool/gpu-%s", tag);
}

void container_cdi_path(const char *tag, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/gpuctl-pool-%s.json", CONTAINER_CDI_DIR, tag);
}

void container_name(uint64_t job, char *out, size_t outlen)
{
	snprintf(out, outlen, CONTAINER_NAME_PREFIX "%llu", (unsigned long long)job);
}

/* ---- the command line ---------------------------------------------------------- */

struct strv {
	char **v;
	size_t n, cap;
	bool oom;
};

/* Appends the concatenation of up to three parts (NULL: none). */
static void add(struct strv *a, const char *p1, const char *p2, const char *p3)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		char **g = realloc(a->v, cap * sizeof(char *));
		if (!g) {
			a->oom = true;
			return;
		}
		a->v = g;
		a->cap = cap;
	}
	const char *parts[3] = { p1, p2 ? p2 : "", p3 ? p3 : "" };
	size_t len = strlen(parts[0]) + strlen(parts[1]) + strlen(parts[2]);
	char *s = malloc(len + 1);
	if (!s) {
		a->oom = true;
		return;
	}
	s[0] = '\0';
	for (int i = 0; i < 3; i++)
		strcat(s, parts[i]);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

char **container_run_argv(const struct container_run *r)
{
	struct strv a = { 0 };
	char name[48], id[24];
	container_name(r->job, name, sizeof(name));
	snprintf(id, sizeof(id), "%llu", (unsigned long long)r->job);
	/* cgroupfs: --cgroups=split names cgroups by path, as the pool made the job's */
	add(&a, "podman", NULL, NULL);
	add(&a, "--cgroup-manager=cgroupfs", NULL, NULL);
	add(&a, "run", NULL, NULL);
	add(&a, "--rm", NULL, NULL);
	add(&a, "--name=", name, NULL);
	/* PID 1 in the container is catatonit: it passes on the SIGTERM of a cancel
	 * (podman's --sig-proxy sends it there), which a command as PID 1 would ignore */
	add(&a, "--init", NULL, NULL);
	if (r->in_cgroup)
		add(&a, "--cgroups=split", NULL, NULL);
	for (const char *d = r->devices; d && *d;) {
		size_t len = strcspn(d, ",");
		char dev[256];
		snprintf(dev, sizeof(dev), "%s=%.*s", r->cdi_kind, (int)(len < 160 ? len : 160), d);
		add(&a, "--device=", dev, NULL);
		d += len;
		d += *d == ',';
	}
	add(&a, "--env=CUDA_VISIBLE_DEVICES=", r->devices, NULL);
	add(&a, "--env=GPUCTL_JOB_ID=", id, NULL);
	add(&a, "--env=GPUCTL_JOB_GPUS=", r->gpus, NULL);
	for (size_t i = 0; i < r->nenv; i++)
		add(&a, "--env=", r->env[i], NULL);
	for (size_t i = 0; i < r->nmounts; i++)
		add(&a, "--volume=", r->mounts[i], NULL);
	add(&a, r->image, NULL, NULL);
	for (size_t i = 0; i < r->ncmd; i++)
		add(&a, r->cmd[i], NULL, NULL);
	if (a.oom) {
		for (size_t i = 0; i < a.n; i++)
			free(a.v[i]);
		free(a.v);
		return NULL;
	}
	return a.v;
}

/* ---- the image's CUDA ------------------------------------------------------------ */

int container_image_need(const char *inspect_json, unsigned *need, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loads(inspect_json, 0, &je);
	if (!doc)
		FAIL("podman image inspect's output is not JSON");
	json_t *img = json_is_array(doc) ? json_array_get(doc, 0) : doc;
	json_t *env = json_object_get(json_object_get(img, "Config"), "Env");
	const char *require = NULL, *cuda_version = NULL;
	size_t i;
	json_t *e;
	json_array_foreach(env, i, e) {
		const char *kv = json_string_value(e);
		if (!kv)
			continue;
		if (strncmp(kv, "NVIDIA_REQUIRE_CUDA=", 20) == 0)
			require = kv + 20;
		else if (strncmp(kv, "CUDA_VERSION=", 13) == 0)
			cuda_version = kv + 13;
	}
	int rc = json_is_object(img) ? cudaver_image_need(require, cuda_version, need, err, errlen) : -1;
	if (!json_is_object(img))
		snprintf(err, errlen, "podman image inspect's output holds no image");
	json_decref(doc);
	return rc;
}
