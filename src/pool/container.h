/* SPDX-License-Identifier: Apache-2.0 */
/*
 * container.h - container jobs (`gpuctl submit --image`, docs/containers.md):
 * the checks of what a request names (image, mounts, environment), the
 * podman or docker command line the pool runs as the job (for docker, which
 * reads no CDI spec, the spec's edits as docker flags), and the image's CUDA
 * need read from `podman|docker image inspect`. Pure: no I/O
 * (pool_container.c runs the runtime and writes the CDI spec).
 */
#ifndef GPUCTL_POOL_CONTAINER_H
#define GPUCTL_POOL_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CONTAINER_IMAGE_LEN 256u   /* bytes of an image reference, NUL included */
#define CONTAINER_MAX_MOUNTS 64u
#define CONTAINER_MAX_ENV 256u
#define CONTAINER_CDI_DIR "/var/run/cdi" /* podman 4.3 reads /etc/cdi and this (no --cdi-spec-dir) */
#define CONTAINER_NAME_PREFIX "gpuctl-job-"

/* Each: 0, or -1 with a one-line message naming what is wrong. */
/* An image reference: [registry[:port]/]name[:tag][@digest] or an image id;
 * starts with a letter or digit (never an option), at most 255 bytes of
 * letters, digits and ._-/:@. */
int container_check_image(const char *image, char *err, size_t errlen);
/* "SRC:DST" or "SRC:DST:ro" (or ":rw"): both absolute, neither with ',',
 * ':' or a ".." component; SRC as container_check_host_path() says (no
 * extra paths), DST not /, nor /proc, /sys, /dev or below them. */
int container_check_mount(const char *spec, char *err, size_t errlen);
/* A mount's host path (absolute): refused when, with "//" and "/./"
 * collapsed, it is, lies within or holds one of /proc, /sys, /dev, the
 * container runtimes' sockets and state (/run/docker.sock, /run/podman,
 * /var/lib/docker, ...), the CDI spec directories, /run/gpuctl and
 * /var/lib/gpuctl; when it is or lies within one of extra (nextra absolute
 * paths: the pool's state directory and socket; a directory above them is
 * allowed, as the default places above are not); or when its last component
 * is a runtime's socket name (docker.sock, podman.sock, containerd.sock,
 * crio.sock). */
int container_check_host_path(const char *src, const char *const *extra, size_t nextra, char *err, size_t errlen);
/* A checked mount's SRC into out; -1 when it does not fit. */
int container_mount_src(const char *spec, char *out, size_t outlen);
/* "KEY=VALUE": KEY a shell name ([A-Za-z_][A-Za-z0-9_]*), not one the pool
 * sets (CUDA_VISIBLE_DEVICES, GPUCTL_JOB_ID, GPUCTL_JOB_GPUS,
 * NVIDIA_VISIBLE_DEVICES); no control characters. */
int container_check_env(const char *kv, char *err, size_t errlen);
/* "podman" or "docker". */
int container_check_runtime(const char *runtime, char *err, size_t errlen);

enum container_runtime { CONTAINER_PODMAN, CONTAINER_DOCKER };
/* The runtime a stored job names: docker for "docker", else podman (the
 * default, and what jobs stored before there was a choice ran with). */
enum container_runtime container_runtime_of(const char *name);
const char *container_runtime_name(enum container_runtime rt);

/* The CDI kind of one pool's spec: "gpuctl.pool/gpu-TAG" (its own kind, so
 * that it never conflicts with nvidia-ctk's nvidia.com/gpu names nor with
 * another pool's), and the spec's file in CONTAINER_CDI_DIR. */
void container_cdi_kind(const char *tag, char *out, size_t outlen);
void container_cdi_path(const char *tag, char *out, size_t outlen);
/* "gpuctl-job-ID" */
void container_name(uint64_t job, char *out, size_t outlen);

/* Docker 20.10 reads no CDI spec: the pool applies it itself, as NVIDIA's
 * runtime did before CDI. The flags for the devices named in `devices`
 * (comma-separated device names of spec's kind) and the spec's own
 * containerEdits: --device=HOST:PATH[:PERMS] per node, --volume=HOST:PATH:ro
 * (or :rw) per mount, --env=K=V per variable; each node or mount once.
 * A NULL-terminated heap array of heap strings (free each and the array), or
 * NULL with err (a device the spec lacks, a path docker's flags cannot carry,
 * out of memory). What docker's flags cannot carry is named in lost ("" when
 * nothing): createContainer and other hooks (not run), mount options other
 * than ro/rw/bind/rbind (nosuid, nodev: dropped). */
char **container_docker_cdi_flags(const json_t *spec, const char *devices, char *lost, size_t lostlen, char *err,
				  size_t errlen);

struct container_run {
	enum container_runtime runtime;
	uint64_t job;
	const char *image;
	const char *cdi_kind;
	const char *devices;         /* the job's GPUs: UUIDs (or one MIG UUID), comma-separated */
	const char *gpus;            /* GPUCTL_JOB_GPUS: indexes */
	bool in_cgroup;              /* podman as root, and the job has its own cgroup: --cgroups=split
				      * keeps the container in it (rootless podman stays there without) */
	/* docker only: */
	char *const *cdi_flags;      /* container_docker_cdi_flags() */
	unsigned uid, gid;           /* --user=UID:GID: the submitting user, as podman's rootless user */
	const unsigned *groups;      /* --group-add: the user's supplementary groups */
	size_t ngroups;
	const char *cgroup_parent;   /* --cgroup-parent (the job's cgroup under a cgroupfs v2 dockerd), or NULL */
	char *const *mounts;         /* checked "SRC:DST[:ro]" */
	size_t nmounts;
	char *const *env;            /* checked "K=V" */
	size_t nenv;
	char *const *cmd;            /* the command in the container (may be empty: the image's) */
	size_t ncmd;
};

/* The job's argv, NULL-terminated (heap strings in a heap array; free each
 * and the array): podman --cgroup-manager=cgroupfs run --rm --name
 * gpuctl-job-ID --init [--cgroups=split] --device KIND=UUID... --env ...
 * --volume ... IMAGE CMD...; or docker run --rm --name gpuctl-job-ID --init
 * --user UID:GID [--group-add G]... [--cgroup-parent P] CDI-FLAGS... --env
 * ... --volume ... IMAGE CMD... NULL when out of memory. */
char **container_run_argv(const struct container_run *r);

/* The CUDA an image needs, from `podman image inspect`'s JSON (docker's is
 * the same shape) (an array of
 * one object whose Config.Env holds NVIDIA_REQUIRE_CUDA / CUDA_VERSION):
 * 1 with *need, 0 when the image says nothing, -1 malformed (err says). */
int container_image_need(const char *inspect_json, unsigned *need, char *err, size_t errlen);

#endif
