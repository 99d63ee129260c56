/* SPDX-License-Identifier: Apache-2.0 */
/* container.c - see container.h. */
#include "container.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cudaver.h"

#define PATH_FLAG_LEN (2 * 4096 + 32) /* --volume=HOST:PATH:ro, each path at most PATH_MAX */

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
	/* a ':' before the first '/' is a registry's port: never a transport
	 * ("oci-archive:/path", "docker://x", "dir:x/y": files of the host) */
	const char *slash = strchr(image, '/'), *colon = strchr(image, ':');
	if (slash && colon && colon < slash) {
		size_t digits = strspn(colon + 1, "0123456789");
		if (colon + 1 + digits != slash || digits == 0 || digits > 5)
			FAIL("bad image name '%.80s' (a ':' before the first '/' is a registry's port; no transports)", image);
	}
	return 0;
}

/* An absolute path of printable bytes without ',' or ':', and no ".."
 * component (a container runtime resolves it; the checks below read it as
 * written). */
static int check_path(const char *p, size_t n, const char *what, const char *spec, char *err, size_t errlen)
{
	if (n == 0 || p[0] != '/')
		FAIL("bad mount '%.80s' (%s must be an absolute path)", spec, what);
	if (n >= 4096)
		FAIL("bad mount (%s longer than 4095 bytes)", what);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == ',')
			FAIL("bad mount '%.80s' (%s holds a control character or ',')", spec, what);
	for (size_t i = 0; i < n;) { /* each component */
		size_t e = i;
		while (e < n && p[e] != '/')
			e++;
		if (e - i == 2 && p[i] == '.' && p[i + 1] == '.')
			FAIL("bad mount '%.80s' (%s holds a '..' component)", spec, what);
		i = e + 1;
	}
	return 0;
}

/* p (n bytes, absolute) with "//" and "/./" collapsed and no trailing '/'
 * ("/" stays "/"); false when it does not fit. */
static bool normalize(const char *p, size_t n, char *out, size_t outlen)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && p[i] == '/')
			i++;
		size_t e = i;
		while (e < n && p[e] != '/')
			e++;
		if (e > i && !(e - i == 1 && p[i] == '.')) {
			if (k + 1 + (e - i) >= outlen)
				return false;
			out[k++] = '/';
			memcpy(out + k, p + i, e - i);
			k += e - i;
		}
		i = e;
	}
	if (k == 0) {
		if (outlen < 2)
			return false;
		out[k++] = '/';
	}
	out[k] = '\0';
	return true;
}

/* a is b or lies below it ("/" holds everything) */
static bool within(const char *a, const char *b)
{
	size_t n = strlen(b);
	return strcmp(b, "/") == 0 || (strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/'));
}

/* What no container job's mount may name on the host, hold or lie within:
 * the kernel's views (the runtime gives the container its own, and a job's
 * devices are the GPUs the pool placed, never a mounted node), the container
 * runtimes' sockets and state (as good as root on the host), the CDI specs
 * they obey, and the pool's own state and socket. */
static const char *const host_denied[] = {
	"/proc", "/sys", "/dev", "/run/docker.sock", "/var/run/docker.sock", "/run/docker", "/var/run/docker",
	"/run/podman", "/var/run/podman", "/run/containerd", "/var/run/containerd", "/run/crio", "/var/run/crio",
	"/var/lib/docker", "/var/lib/containers", "/etc/cdi", "/run/cdi", "/var/run/cdi", "/run/gpuctl",
	"/var/lib/gpuctl",
};
/* A socket of these names is a container runtime's wherever it is (a user's
 * rootless podman: /run/user/UID/podman/podman.sock). */
static const char *const socket_names[] = { "docker.sock", "podman.sock", "containerd.sock", "crio.sock" };

int container_check_host_path(const char *src, const char *const *extra, size_t nextra, char *err, size_t errlen)
{
	char n[4096], d[4096];
	for (const char *c = src; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			FAIL("bad mount source (it holds a control character)");
	if (src[0] != '/' || !normalize(src, strlen(src), n, sizeof(n)))
		FAIL("bad mount source '%.80s' (an absolute path)", src);
	size_t nd = sizeof(host_denied) / sizeof(host_denied[0]);
	for (size_t i = 0; i < nd + nextra; i++) {
		const char *deny = i < nd ? host_denied[i] : extra[i - nd];
		if (!deny || deny[0] != '/' || !normalize(deny, strlen(deny), d, sizeof(d)))
			continue;
		if (within(n, d))
			FAIL("mount source '%.80s' is refused (it is within %.80s)", src, d);
		if (i < nd && within(d, n)) /* the pool's own (extra): a directory above it is any user's */
			FAIL("mount source '%.80s' is refused (it holds %.80s)", src, d);
	}
	const char *last = strrchr(n, '/') + 1;
	for (size_t i = 0; i < sizeof(socket_names) / sizeof(socket_names[0]); i++)
		if (strcmp(last, socket_names[i]) == 0)
			FAIL("mount source '%.80s' is refused (a container runtime's socket)", src);
	return 0;
}

/* Where the runtime mounts its own: a mount there would hide or replace them. */
static const char *const dest_denied[] = { "/proc", "/sys", "/dev" };

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
	size_t ns = (size_t)(c1 - spec), nd = (size_t)(dst_end - c1 - 1);
	if (check_path(spec, ns, "SRC", spec, err, errlen) || check_path(c1 + 1, nd, "DST", spec, err, errlen))
		return -1;
	char src[4096], dst[4096];
	memcpy(src, spec, ns);
	src[ns] = '\0';
	if (container_check_host_path(src, NULL, 0, err, errlen))
		return -1;
	if (!normalize(c1 + 1, nd, dst, sizeof(dst)) || strcmp(dst, "/") == 0)
		FAIL("bad mount '%.80s' (DST cannot be /)", spec);
	for (size_t i = 0; i < sizeof(dest_denied) / sizeof(dest_denied[0]); i++)
		if (within(dst, dest_denied[i]))
			FAIL("bad mount '%.80s' (DST cannot be within %s)", spec, dest_denied[i]);
	return 0;
}

int container_mount_src(const char *spec, char *out, size_t outlen)
{
	const char *c = strchr(spec, ':');
	size_t n = c ? (size_t)(c - spec) : strlen(spec);
	if (n >= outlen)
		return -1;
	memcpy(out, spec, n);
	out[n] = '\0';
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
	if (strcmp(runtime, "podman") == 0 || strcmp(runtime, "docker") == 0)
		return 0;
	FAIL("unknown runtime '%.40s' (podman or docker)", runtime);
}

enum container_runtime container_runtime_of(const char *name)
{
	return name && strcmp(name, "docker") == 0 ? CONTAINER_DOCKER : CONTAINER_PODMAN;
}

const char *container_runtime_name(enum container_runtime rt)
{
	return rt == CONTAINER_DOCKER ? "docker" : "podman";
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

static void strv_free(struct strv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/* ---- docker: the CDI spec's edits as flags ------------------------------------- */

/* Appends what went missing to lost, once per kind ("hooks", "mount options ..."). */
static void note_lost(char *lost, size_t lostlen, const char *what)
{
	if (strstr(lost, what))
		return;
	size_t n = strlen(lost);
	snprintf(lost + n, lostlen - n, "%s%s", n ? "; " : "", what);
}

static bool in_list(const struct strv *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], s) == 0)
			return true;
	return false;
}

/* A path docker's HOST:PATH[:OPT] flags can carry: absolute, no ':' or ',', no control bytes. */
static bool flag_path_ok(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	for (; *p; p++)
		if (*p == ':' || *p == ',' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* One containerEdits object's nodes, mounts, environment and hooks. */
static int docker_edits(const json_t *edits, struct strv *a, char *lost, size_t lostlen, char *err, size_t errlen)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(edits, "deviceNodes"), i, x) {
		const char *path = json_string_value(json_object_get(x, "path"));
		const char *host = json_string_value(json_object_get(x, "hostPath"));
		const char *perms = json_string_value(json_object_get(x, "permissions"));
		if (!host)
			host = path;
		if (!flag_path_ok(path) || !flag_path_ok(host))
			FAIL("the CDI spec names a device node docker's --device cannot carry");
		if (perms && (!perms[0] || strspn(perms, "rwm") != strlen(perms)))
			FAIL("the CDI spec gives device node %.100s bad permissions", path);
		char flag[PATH_FLAG_LEN];
		snprintf(flag, sizeof(flag), "--device=%s:%s%s%s", host, path, perms ? ":" : "", perms ? perms : "");
		if (!in_list(a, flag))
			add(a, flag, NULL, NULL);
	}
	json_array_foreach(json_object_get(edits, "mounts"), i, x) {
		const char *host = json_string_value(json_object_get(x, "hostPath"));
		const char *path = json_string_value(json_object_get(x, "containerPath"));
		if (!flag_path_ok(path) || !flag_path_ok(host))
			FAIL("the CDI spec names a mount docker's --volume cannot carry");
		bool ro = false;
		size_t k;
		json_t *o;
		json_array_foreach(json_object_get(x, "options"), k, o) {
			const char *opt = json_string_value(o);
			if (!opt)
				continue;
			if (strcmp(opt, "ro") == 0)
				ro = true;
			else if (strcmp(opt, "rw") != 0 && strcmp(opt, "bind") != 0 && strcmp(opt, "rbind") != 0) {
				char what[80];
				snprintf(what, sizeof(what), "mount option %.40s", opt);
				note_lost(lost, lostlen, what);
			}
		}
		char flag[PATH_FLAG_LEN];
		snprintf(flag, sizeof(flag), "--volume=%s:%s:%s", host, path, ro ? "ro" : "rw");
		if (!in_list(a, flag))
			add(a, flag, NULL, NULL);
	}
	json_array_foreach(json_object_get(edits, "env"), i, x) {
		const char *kv = json_string_value(x);
		if (!kv || !strchr(kv, '=') || kv[0] == '=')
			FAIL("the CDI spec holds an environment entry that is not KEY=VALUE");
		add(a, "--env=", kv, NULL);
	}
	if (json_array_size(json_object_get(edits, "hooks")))
		note_lost(lost, lostlen, "hooks (docker runs no CDI hook)");
	return 0;
}

char **container_docker_cdi_flags(const json_t *spec, const char *devices, char *lost, size_t lostlen, char *err,
				  size_t errlen)
{
	struct strv a = { 0 };
	lost[0] = '\0';
	const json_t *devs = json_object_get(spec, "devices");
	for (const char *d = devices; d && *d;) {
		size_t len = strcspn(d, ",");
		const json_t *found = NULL;
		size_t i;
		json_t *dev;
		json_array_foreach(devs, i, dev) {
			const char *name = json_string_value(json_object_get(dev, "name"));
			if (name && strlen(name) == len && strncmp(name, d, len) == 0)
				found = dev;
		}
		if (!found) {
			snprintf(err, errlen, "the CDI spec has no device '%.*s'", (int)(len < 100 ? len : 100), d);
			strv_free(&a);
			return NULL;
		}
		if (docker_edits(json_object_get(found, "containerEdits"), &a, lost, lostlen, err, errlen)) {
			strv_free(&a);
			return NULL;
		}
		d += len;
		d += *d == ',';
	}
	if (docker_edits(json_object_get(spec, "containerEdits"), &a, lost, lostlen, err, errlen)) {
		strv_free(&a);
		return NULL;
	}
	if (a.oom || !a.v) { /* no flags at all cannot be: a GPU device has its node */
		snprintf(err, errlen, a.oom ? "out of memory" : "the CDI spec gives the devices nothing");
		strv_free(&a);
		return NULL;
	}
	return a.v;
}

/* The flags of a docker job: container_run_argv's docker form. */
static void docker_argv(const struct container_run *r, struct strv *a, const char *name)
{
	char user[48], group[24];
	add(a, "docker", NULL, NULL);
	add(a, "run", NULL, NULL);
	add(a, "--rm", NULL, NULL);
	add(a, "--name=", name, NULL);
	add(a, "--init", NULL, NULL); /* docker-init passes a cancel's SIGTERM on, as podman's catatonit */
	snprintf(user, sizeof(user), "%u:%u", r->uid, r->gid);
	add(a, "--user=", user, NULL); /* dockerd runs containers as root otherwise */
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i] != r->gid) {
			snprintf(group, sizeof(group), "%u", r->groups[i]);
			add(a, "--group-add=", group, NULL);
		}
	if (r->cgroup_parent)
		add(a, "--cgroup-parent=", r->cgroup_parent, NULL);
	for (size_t i = 0; r->cdi_flags && r->cdi_flags[i]; i++)
		add(a, r->cdi_flags[i], NULL, NULL);
}

char **container_run_argv(const struct container_run *r)
{
	struct strv a = { 0 };
	char name[48], id[24];
	container_name(r->job, name, sizeof(name));
	snprintf(id, sizeof(id), "%llu", (unsigned long long)r->job);
	if (r->runtime == CONTAINER_DOCKER) {
		docker_argv(r, &a, name);
		goto common;
	}
	/* cgroupfs: --cgroups=split names cgroups by path, as the pool made the job's */
	add(&a, "podman", NULL, NULL);
	add(&a, "--cgroup-manager=cgroupfs", NULL, NULL);
	add(&a, "run", NULL, NULL);
	add(&a, "--rm", NULL, NULL);
	add(&a, "--name=", name, NULL);
	/* PID 1 in the container is catatonit: it passes on the SIGTERM of a cancel
	 * (podman's --sig-proxy sends it there), which a command as PID 1 would ignore */
	add(&a, "--init", NULL, NULL);
	if (r->in_cgroup) {
		add(&a, "--cgroups=split", NULL, NULL);
		/* podman's default pids limit makes runc write pids.max in the
		 * payload's cgroup, which the job's cgroup (no controllers given
		 * to its children) lacks on a cgroup v2 host: the container did
		 * not start on the H200. The job's limits are the pool's. */
		add(&a, "--pids-limit=0", NULL, NULL);
	}
	for (const char *d = r->devices; d && *d;) {
		size_t len = strcspn(d, ",");
		char dev[256];
		snprintf(dev, sizeof(dev), "%s=%.*s", r->cdi_kind, (int)(len < 160 ? len : 160), d);
		add(&a, "--device=", dev, NULL);
		d += len;
		d += *d == ',';
	}
common:
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
		strv_free(&a);
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
		FAIL("image inspect's output is not JSON");
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
		snprintf(err, errlen, "image inspect's output holds no image");
	json_decref(doc);
	return rc;
}
