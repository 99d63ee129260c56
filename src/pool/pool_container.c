/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_container.c - the pool's container jobs (docs/containers.md): before
 * one starts, the pool's CDI spec is written (refreshed: MIG instances come
 * and go) and the image's CUDA need is checked against the driver's; the job
 * itself is `podman run` (or `docker run`, with the spec's edits as flags)
 * under the shim (container.h builds its command line), as the submitting
 * user, in the job's cgroup; after one ends other than done, `podman rm -f`
 * (`docker rm -f`) removes what is left of its container.
 * p->mu is held in all of these (called from pool.c).
 */
#include "pool_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cudaver.h"
#include "pool/cdi_host.h"
#include "pool/container.h"
#include "pool/runner.h"

#define INSPECT_TIMEOUT_MS 60000 /* podman image inspect: a bound, not a guess of its speed */
#define INSPECT_MAX_OUTPUT (4u << 20)

bool pool_job_is_container(const struct pool_job *j)
{
	/* the stored spec of a container job holds "image" (pool_ops.c); a bare
	 * job's spec (its environment: up to 4 MiB) is parsed only when the word is in it */
	json_t *spec = j->spec_json && strstr(j->spec_json, "\"image\"") ? json_loads(j->spec_json, 0, NULL) : NULL;
	bool image = json_is_string(json_object_get(spec, "image"));
	json_decref(spec);
	return image;
}

bool pool_proc_in_job_cgroup(const struct pool *p, int pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool in = false;
	while (!in && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (size_t i = 0; i < p->njobs && !in; i++)
			in = p->jobs[i]->cgroup[0] && runner_cgroup_path_within(line + 3, p->jobs[i]->cgroup);
	}
	fclose(f);
	return in;
}

/* Writes (or refreshes) the pool's CDI spec; *keep gets it (docker's flags
 * are made from it) when not NULL. 0, or -1 with why. */
static int write_cdi_spec(struct pool *p, json_t **keep, char *msg, size_t len)
{
	struct cdi_host *h = calloc(1, sizeof(*h));
	struct cdi_gpu *gpus = calloc(GPU_MAX_GPUS, sizeof(*gpus));
	int rc = -1;
	unsigned n = 0;
	char err[300], kind[64], path[300];
	json_t *spec = NULL;
	if (!h || !gpus) {
		snprintf(msg, len, "out of memory");
		goto out;
	}
	if (cdi_host_gather(p->be, p->simulated, p->cfg.dev_dir, NULL, h, gpus, &n, err, sizeof(err)) != CDI_HOST_OK ||
	    !(spec = cdi_spec_build(h, gpus, n, err, sizeof(err)))) {
		snprintf(msg, len, "the CDI spec: %.250s", err);
		goto out;
	}
	container_cdi_kind(p->cgroup_tag, kind, sizeof(kind));
	container_cdi_path(p->cgroup_tag, path, sizeof(path));
	json_object_set_new(spec, "kind", json_string(kind));
	if (mkdir(CONTAINER_CDI_DIR, 0755) != 0 && errno != EEXIST) {
		snprintf(msg, len, "cannot create %s: %s", CONTAINER_CDI_DIR, strerror(errno));
		goto out;
	}
	if (cdi_spec_write(spec, path, err, sizeof(err))) {
		snprintf(msg, len, "%.280s", err);
		goto out;
	}
	rc = 0;
	if (keep) {
		*keep = spec;
		spec = NULL;
	}
out:
	json_decref(spec);
	free(h);
	free(gpus);
	return rc;
}

/* The user switch and environment of a podman the agent runs for a job. */
struct as_user {
	bool change;
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int ngroups;
	char **env;
};

static void as_user_init(const struct pool *p, const struct pool_job *j, char **env, struct as_user *u)
{
	memset(u, 0, sizeof(*u));
	u->change = p->euid == 0 && j->uid != 0;
	u->uid = j->uid;
	u->gid = j->gid;
	u->env = env;
	if (u->change) {
		u->ngroups = 256;
		if (getgrouplist(j->user, j->gid, u->groups, &u->ngroups) < 0 || u->ngroups < 0) {
			u->ngroups = 1;
			u->groups[0] = j->gid;
		}
	}
}

extern char **environ;

/* In a forked child: become the user, take the job's environment (its PATH
 * finds podman, as for the job itself) and exec. Never returns. */
static void exec_as(const struct as_user *u, char *const argv[], int out_fd, int err_fd)
{
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(out_fd >= 0 ? out_fd : null, 1);
	dup2(err_fd >= 0 ? err_fd : null, 2);
	if (close_range(3, ~0u, 0) != 0) /* none of the agent's sockets, database or logs */
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (u->change && (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid)))
		_exit(126);
	if (u->env)
		environ = u->env;
	execvp(argv[0], argv);
	_exit(127);
}

/* Runs argv as the user, its stdout into *out (heap), the first line of its
 * stderr into errline; waits at most timeout_ms. The exit status (as
 * waitpid gives it), or -1 (could not run, or timed out: errline says). */
static int run_capture(const struct as_user *u, char *const argv[], char **out, char *errline, size_t errlen)
{
	int po[2], pe[2];
	*out = NULL;
	errline[0] = '\0';
	if (pipe2(po, O_CLOEXEC))
		return snprintf(errline, errlen, "pipe: %s", strerror(errno)), -1;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return snprintf(errline, errlen, "pipe: %s", strerror(errno)), -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		exec_as(u, argv, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return snprintf(errline, errlen, "fork: %s", strerror(errno)), -1;
	}
	size_t cap = 1 << 14, len = 0, elen = 0;
	char *buf = malloc(cap), ebuf[512];
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool timed_out = false;
	while (buf && (fds[0].fd >= 0 || fds[1].fd >= 0)) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long spent = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= INSPECT_TIMEOUT_MS) {
			timed_out = true;
			break;
		}
		int r = poll(fds, 2, (int)(INSPECT_TIMEOUT_MS - spent));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (fds[0].revents) {
			if (len + 4096 > cap) {
				char *g = cap < INSPECT_MAX_OUTPUT ? realloc(buf, cap * 2) : NULL;
				if (!g)
					break;
				buf = g;
				cap *= 2;
			}
			ssize_t got = read(fds[0].fd, buf + len, cap - len - 1);
			if (got <= 0)
				fds[0].fd = -1;
			else
				len += (size_t)got;
		}
		if (fds[1].revents) {
			ssize_t got = elen < sizeof(ebuf) - 1 ? read(fds[1].fd, ebuf + elen, sizeof(ebuf) - 1 - elen) : 0;
			char sink[512];
			if (got == 0 && elen >= sizeof(ebuf) - 1)
				got = read(fds[1].fd, sink, sizeof(sink)); /* drain what does not fit */
			else if (got > 0)
				elen += (size_t)got;
			if (got <= 0)
				fds[1].fd = -1;
		}
	}
	close(po[0]);
	close(pe[0]);
	if (timed_out || !buf)
		kill(pid, SIGKILL);
	int status = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ebuf[elen] = '\0';
	ebuf[strcspn(ebuf, "\n")] = '\0';
	for (char *c = ebuf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (timed_out || !buf) {
		free(buf);
		snprintf(errline, errlen, timed_out ? "it did not answer in %d s" : "out of memory",
			 INSPECT_TIMEOUT_MS / 1000);
		return -1;
	}
	buf[len] = '\0';
	*out = buf;
	snprintf(errline, errlen, "%.250s", ebuf);
	return status;
}

/* The driver's CUDA version (0: unknown). */
static unsigned driver_cuda(struct pool *p)
{
	struct gpu_system sys;
	struct gpu_err ge;
	unsigned v = 0;
	char err[100];
	if (p->be && p->be->ops->system_info(p->be, &sys, &ge) == 0 && VAL_HAS(sys.cuda_driver_version) &&
	    cudaver_parse(sys.cuda_driver_version.s, &v, err, sizeof(err)) == 0)
		return v;
	return 0;
}

/* What the start of one container job needs beyond its stored spec. */
struct prepared {
	enum container_runtime rt;
	json_t *cdi;                 /* docker: the pool's CDI spec, applied as flags */
	char cgroup_parent[300];     /* docker: --cgroup-parent, "" for none */
};

/* docker: the job's cgroup as --cgroup-parent when dockerd can take it: a
 * cgroup v2 daemon with the cgroupfs driver (a path from the cgroup2 root);
 * the systemd driver takes only slices, a v1 daemon makes its own hierarchy
 * paths. Otherwise "": the container stays in dockerd's cgroups. */
static void docker_cgroup_parent(const struct as_user *u, const struct pool_job *j, char *out, size_t outlen)
{
	char *const argv[] = { "docker", "info", "--format", "{{.CgroupVersion}} {{.CgroupDriver}}", NULL };
	char *text = NULL, line[300], mnt[256];
	out[0] = '\0';
	int st = j->cgroup[0] ? run_capture(u, argv, &text, line, sizeof(line)) : -1;
	size_t n = strlen(j->cgroup), m;
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && strncmp(text, "2 cgroupfs", 10) == 0 &&
	    runner_cgroup2_mount(mnt, sizeof(mnt)) == 0 && (m = strlen(mnt)) < n && strncmp(j->cgroup, mnt, m) == 0 &&
	    j->cgroup[m] == '/')
		snprintf(out, outlen, "%s", j->cgroup + m);
	free(text);
}

static int prepare(struct pool *p, const struct pool_job *j, char **env, struct prepared *pr, char *msg, size_t len)
{
	json_t *spec = json_loads(j->spec_json, 0, NULL);
	const char *image = json_string_value(json_object_get(spec, "image"));
	int rc = -1;
	pr->rt = container_runtime_of(json_string_value(json_object_get(spec, "runtime")));
	const char *rt = container_runtime_name(pr->rt);
	if (!image) {
		snprintf(msg, len, "the job's stored image is damaged");
		goto out;
	}
	if (write_cdi_spec(p, pr->rt == CONTAINER_DOCKER ? &pr->cdi : NULL, msg, len))
		goto out;
	struct as_user u;
	as_user_init(p, j, env, &u);
	char *const argv[] = { (char *)rt, "image", "inspect", (char *)image, NULL };
	char *text = NULL, line[300];
	int st = run_capture(&u, argv, &text, line, sizeof(line));
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(msg, len, "%s is not installed (not found in the job's PATH, as its user)", rt);
		else
			snprintf(msg, len, "image '%.100s' is not there (%s image inspect: %.120s)", image, rt,
				 line[0] ? line : "failed");
		free(text);
		goto out;
	}
	unsigned need = 0, have = driver_cuda(p);
	char err[200], need_s[16], have_s[16];
	int r = container_image_need(text, &need, err, sizeof(err));
	free(text);
	if (r < 0) {
		snprintf(msg, len, "image '%.100s': %.150s", image, err);
		goto out;
	}
	if (r == 1 && have && !cudaver_ok(have, need)) {
		cudaver_format(need, need_s, sizeof(need_s));
		cudaver_format(have, have_s, sizeof(have_s));
		snprintf(msg, len, "image '%.100s' needs CUDA %s; the driver supports CUDA %s (update the driver, or use "
			 "an image built for CUDA %s or older)", image, need_s, have_s, have_s);
		goto out;
	}
	if (pr->rt == CONTAINER_DOCKER)
		docker_cgroup_parent(&u, j, pr->cgroup_parent, sizeof(pr->cgroup_parent));
	rc = 0;
out:
	json_decref(spec);
	return rc;
}

static char **run_argv(struct pool *p, const struct pool_job *j, const struct prepared *pr, char **cmd,
		       const char *gpus, char *msg, size_t len)
{
	json_t *spec = json_loads(j->spec_json, 0, NULL);
	json_t *m = json_object_get(spec, "mounts"), *e = json_object_get(spec, "container_env");
	const char *image = json_string_value(json_object_get(spec, "image"));
	size_t nm = json_array_size(m), ne = json_array_size(e), nc = 0;
	char **mounts = calloc(nm + 1, sizeof(char *)), **cenv = calloc(ne + 1, sizeof(char *)), **argv = NULL;
	char **cdi_flags = NULL, kind[64], lost[300];
	gid_t groups[256]; /* unsigned int, as container_run's */
	int ngroups = 256;
	snprintf(msg, len, "out of memory");
	if (!image || !mounts || !cenv)
		goto out;
	for (size_t i = 0; i < nm; i++)
		mounts[i] = (char *)json_string_value(json_array_get(m, i)) ?: "";
	for (size_t i = 0; i < ne; i++)
		cenv[i] = (char *)json_string_value(json_array_get(e, i)) ?: "";
	while (cmd && cmd[nc])
		nc++;
	container_cdi_kind(p->cgroup_tag, kind, sizeof(kind));
	/* podman as root: --cgroups=split makes its cgroups below the job's. A
	 * rootless podman (any other user) can make none there (the job's cgroup
	 * is root's; on a v1 or hybrid host it tries v1 hierarchies and fails):
	 * without the flag it makes none, and conmon and the container stay in
	 * the job's cgroup, where the shim started it */
	bool rootful = p->euid == 0 && j->uid == 0;
	if (pr->rt == CONTAINER_DOCKER) {
		if (!(cdi_flags = container_docker_cdi_flags(pr->cdi, j->devices, lost, sizeof(lost), msg, len)))
			goto out;
		if (lost[0]) {
			char dir[512];
			pool_job_dir(p, j->id, dir, sizeof(dir));
			pool_job_note(dir, "docker does not apply this of the GPUs' CDI spec", lost);
		}
		if (getgrouplist(j->user, j->gid, groups, &ngroups) < 0 || ngroups < 0)
			ngroups = 0;
	}
	struct container_run r = {
		.runtime = pr->rt, .job = j->id, .image = image, .cdi_kind = kind, .devices = j->devices, .gpus = gpus,
		.in_cgroup = j->cgroup[0] != '\0' && rootful, .mounts = mounts, .nmounts = nm, .env = cenv, .nenv = ne,
		.cmd = cmd, .ncmd = nc, .cdi_flags = cdi_flags, .uid = j->uid, .gid = j->gid, .groups = groups,
		.ngroups = (size_t)ngroups, .cgroup_parent = pr->cgroup_parent[0] ? pr->cgroup_parent : NULL,
	};
	argv = container_run_argv(&r);
out:
	for (size_t i = 0; cdi_flags && cdi_flags[i]; i++)
		free(cdi_flags[i]);
	free(cdi_flags);
	free(mounts);
	free(cenv);
	json_decref(spec);
	return argv;
}

int pool_container_check_mounts(const struct pool *p, char *const *mounts, size_t n, char *msg, size_t len)
{
	/* the pool's own paths, as configured and as they resolve (its state
	 * directory is root's, not a user's: resolving it does not wait on them) */
	char state[PATH_MAX], sock[PATH_MAX], src[4096];
	const char *extra[4] = { p->cfg.state_dir, p->cfg.socket_path, NULL, NULL };
	if (n && realpath(p->cfg.state_dir, state))
		extra[2] = state;
	if (n && realpath(p->cfg.socket_path, sock))
		extra[3] = sock;
	for (size_t i = 0; i < n; i++)
		if (container_mount_src(mounts[i], src, sizeof(src)) ||
		    container_check_host_path(src, extra, sizeof(extra) / sizeof(extra[0]), msg, len))
			return -1;
	return 0;
}

int pool_container_wrap(struct pool *p, const struct pool_job *j, char ***argv, char **env, const char *gpus,
			char *msg, size_t len)
{
	struct prepared pr = { .rt = CONTAINER_PODMAN };
	char **wrapped = NULL;
	if (prepare(p, j, env, &pr, msg, len) == 0)
		wrapped = run_argv(p, j, &pr, *argv, gpus, msg, len);
	json_decref(pr.cdi);
	if (!wrapped)
		return -1;
	for (size_t i = 0; (*argv)[i]; i++)
		free((*argv)[i]);
	free(*argv);
	*argv = wrapped;
	return 0;
}

pid_t pool_container_remove(struct pool *p, const struct pool_job *j)
{
	char name[48];
	container_name(j->id, name, sizeof(name));
	/* the job's environment (CONTAINERS_CONF, XDG_RUNTIME_DIR, PATH) picks the podman and store it ran with */
	json_t *spec = json_loads(j->spec_json, 0, NULL);
	json_t *e = json_object_get(spec, "env");
	size_t ne = json_array_size(e);
	char **env = calloc(ne + 1, sizeof(char *));
	pid_t pid = -1;
	if (env) {
		for (size_t i = 0, k = 0; i < ne; i++)
			if (json_string_value(json_array_get(e, i)))
				env[k++] = (char *)json_string_value(json_array_get(e, i));
		struct as_user u;
		as_user_init(p, j, env, &u);
		/* docker rm --force has no --ignore (a container gone already is an error it prints: to /dev/null) */
		char *const podman_rm[] = { "podman", "rm", "--force", "--ignore", "--time=0", name, NULL };
		char *const docker_rm[] = { "docker", "rm", "--force", name, NULL };
		bool docker = container_runtime_of(json_string_value(json_object_get(spec, "runtime"))) ==
			      CONTAINER_DOCKER;
		pid = fork();
		if (pid == 0) {
			setsid(); /* not in the agent's process group: a Ctrl-C of a foreground agent leaves it be */
			exec_as(&u, docker ? docker_rm : podman_rm, -1, -1);
		}
	}
	free(env);
	json_decref(spec);
	return pid;
}
