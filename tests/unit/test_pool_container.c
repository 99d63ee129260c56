/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_container.c - container jobs' pure parts (src/pool/container.c):
 * what an image, a mount and an environment entry may be, the podman and
 * docker command lines (docker's with the CDI spec's edits as flags), and the
 * CUDA an image needs as podman image inspect shows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pool/container.h"

static void test_image(void **state)
{
	(void)state;
	char err[256], long_name[300];
	const char *ok[] = { "busybox", "localhost/gpuctl-test/cuda12", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
			     "registry:5000/a/b@sha256:0123abcd", "59c2d581baed" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(container_check_image(ok[i], err, sizeof(err)), 0);
	memset(long_name, 'a', 256);
	long_name[256] = '\0';
	const char *bad[] = { "", "-v", "--privileged", ".x", "a b", "a\nb", "a;b", "a$(x)", long_name,
			      /* transports: the host's files, not a registry's image (issue 38) */
			      "oci-archive:/etc/shadow", "docker-archive:/root/x.tar", "dir:x/y", "docker://busybox",
			      "containers-storage:/x", "registry:123456/a", "registry:/a" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(container_check_image(bad[i], err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
}

static void test_mount(void **state)
{
	(void)state;
	char err[256];
	const char *ok[] = { "/data:/data", "/data:/in:ro", "/a b:/c:rw", "/home/ann/x:/x", "/a..b:/c..d",
			     "/home/ann/proc:/x/dev", "/var/lib/gpuctl2:/x", "/devices:/sysx" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(container_check_mount(ok[i], err, sizeof(err)), 0);
	const char *bad[] = { "", "/a", "a:/b", "/a:b", "/a:/b:rx", "/a:/b:ro:x", "/a:/", "/a,b:/c", "/a:/b,c",
			      ":/b", "/a:", "/a\n:/b",
			      /* hostile ones (issue 38): "..", the kernel's views, devices, runtimes' sockets
			       * and state, the pool's own, options through the string, DST over the runtime's */
			      "/data/../etc:/e", "/..:/x", "/a:/b/..", "/proc:/p", "/proc/1/root:/r", "//proc:/p",
			      "/./sys/kernel:/k", "/sys:/s", "/dev:/d", "/dev/nvidia3:/dev/nvidia0", "/dev/nvidia3:/x",
			      "/:/host", "//:/host", "/run:/r", "/var:/v", "/var/run/docker.sock:/s", "/run/docker.sock:/s",
			      "/run/podman/podman.sock:/s", "/run/user/1000/podman/podman.sock:/s", "/home/a/docker.sock:/s",
			      "/run/containerd:/c", "/var/lib/gpuctl/pool:/p", "/var/lib/gpuctl:/p", "/run/gpuctl:/g",
			      "/etc/cdi:/c", "/var/run/cdi/x.json:/c", "/var/lib/docker:/d", "/a:/b:ro,exec",
			      "/a:/b:z", "/a:/b:ro:z", "/a:/proc", "/a:/proc/sys", "/a:/sys/fs", "/a:/dev/nvidia0",
			      "/a:/dev", "/a://", "/a:/./" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(container_check_mount(bad[i], err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
}

/* The pool's own state, given as extra paths (issue 38). */
static void test_host_path(void **state)
{
	(void)state;
	char err[256];
	const char *const extra[] = { "/srv/pool/state", "/srv/pool/run/pool.sock" };
	assert_int_equal(container_check_host_path("/srv/data", extra, 2, err, sizeof(err)), 0);
	assert_int_equal(container_check_host_path("/srv/pool/stateful", extra, 2, err, sizeof(err)), 0);
	/* a directory above the configured ones is a user's (tests mount theirs) */
	assert_int_equal(container_check_host_path("/srv/pool", extra, 2, err, sizeof(err)), 0);
	const char *bad[] = { "/srv/pool/state", "/srv/pool/state/jobs.db", "/srv//pool/./state/",
			      "/srv/pool/run/pool.sock", "/", "/proc/self", "/var/lib" };
	/* what a message would quote holds no control character (fuzz_poolmount) */
	assert_int_equal(container_check_host_path("/proc/\x0f:/x", extra, 2, err, sizeof(err)), -1);
	assert_null(strchr(err, '\x0f'));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(container_check_host_path(bad[i], extra, 2, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "is refused"));
	}
	char src[64];
	assert_int_equal(container_mount_src("/a/b:/c:ro", src, sizeof(src)), 0);
	assert_string_equal(src, "/a/b");
}

static void test_env(void **state)
{
	(void)state;
	char err[256];
	const char *ok[] = { "A=1", "_X=", "GREETING=hi there", "NCCL_DEBUG=INFO", "A=b=c" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(container_check_env(ok[i], err, sizeof(err)), 0);
	const char *bad[] = { "", "A", "=1", "1A=2", "A B=1", "A-B=1", "A=x\ny", "CUDA_VISIBLE_DEVICES=0",
			      "GPUCTL_JOB_ID=3", "NVIDIA_VISIBLE_DEVICES=all" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(container_check_env(bad[i], err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(container_check_env("CUDA_VISIBLE_DEVICES=0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "set by the pool"));
}

static void test_runtime(void **state)
{
	(void)state;
	char err[256];
	assert_int_equal(container_check_runtime("podman", err, sizeof(err)), 0);
	assert_int_equal(container_check_runtime("docker", err, sizeof(err)), 0);
	assert_int_equal(container_check_runtime("", err, sizeof(err)), -1);
	assert_int_equal(container_check_runtime("crun", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "podman or docker"));
	assert_int_equal(container_runtime_of("docker"), CONTAINER_DOCKER);
	assert_int_equal(container_runtime_of("podman"), CONTAINER_PODMAN);
	assert_int_equal(container_runtime_of(NULL), CONTAINER_PODMAN); /* stored before --runtime existed */
	assert_string_equal(container_runtime_name(CONTAINER_DOCKER), "docker");
}

static void free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static void assert_argv(char **argv, const char *const *want, size_t nwant)
{
	assert_non_null(argv);
	size_t n = 0;
	while (argv[n])
		n++;
	for (size_t i = 0; i < n && i < nwant; i++)
		assert_string_equal(argv[i], want[i]);
	assert_int_equal(n, nwant);
}

/* A spec as cdi_spec_build makes it: two GPUs (nodes in a test's dev dir),
 * a MIG device, the common nodes, libraries, the environment. */
static const char *const spec_text =
	"{\"cdiVersion\":\"0.5.0\",\"kind\":\"gpuctl.pool/gpu-0a1b2c3d\",\"devices\":["
	"{\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\",\"hostPath\":\"/t/dev/nvidia0\"}]}},"
	"{\"name\":\"GPU-aaa\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\",\"hostPath\":\"/t/dev/nvidia0\"}]}},"
	"{\"name\":\"GPU-bbb\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia3\",\"permissions\":\"rw\"}]}},"
	"{\"name\":\"MIG-ccc\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\",\"hostPath\":\"/t/dev/nvidia0\"},"
	"{\"path\":\"/dev/nvidia-caps/nvidia-cap21\"}]}}],"
	"\"containerEdits\":{\"env\":[\"NVIDIA_VISIBLE_DEVICES=void\",\"LD_LIBRARY_PATH=/usr/local/nvidia/lib64\"],"
	"\"deviceNodes\":[{\"path\":\"/dev/nvidiactl\",\"hostPath\":\"/t/dev/nvidiactl\"}],"
	"\"mounts\":[{\"hostPath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\","
	"\"containerPath\":\"/usr/local/nvidia/lib64/libcuda.so.1\",\"options\":[\"ro\",\"nosuid\",\"nodev\",\"bind\"]}]}}";

static void test_docker_cdi_flags(void **state)
{
	(void)state;
	char err[256], lost[300];
	json_t *spec = json_loads(spec_text, 0, NULL);
	assert_non_null(spec);
	/* two GPUs: each one's node, then the spec's common edits once */
	char **f = container_docker_cdi_flags(spec, "GPU-aaa,GPU-bbb", lost, sizeof(lost), err, sizeof(err));
	const char *want[] = { "--device=/t/dev/nvidia0:/dev/nvidia0", "--device=/dev/nvidia3:/dev/nvidia3:rw",
			       "--device=/t/dev/nvidiactl:/dev/nvidiactl",
			       "--volume=/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15:/usr/local/nvidia/lib64/libcuda.so.1:ro",
			       "--env=NVIDIA_VISIBLE_DEVICES=void", "--env=LD_LIBRARY_PATH=/usr/local/nvidia/lib64" };
	assert_argv(f, want, sizeof(want) / sizeof(want[0]));
	free_argv(f);
	/* what docker's flags cannot carry is said, each kind once */
	assert_string_equal(lost, "mount option nosuid; mount option nodev");
	/* a MIG instance: its GPU's node and its capability node */
	f = container_docker_cdi_flags(spec, "MIG-ccc", lost, sizeof(lost), err, sizeof(err));
	assert_non_null(f);
	assert_string_equal(f[0], "--device=/t/dev/nvidia0:/dev/nvidia0");
	assert_string_equal(f[1], "--device=/dev/nvidia-caps/nvidia-cap21:/dev/nvidia-caps/nvidia-cap21");
	free_argv(f);
	/* the same node named twice (index and UUID of one GPU) goes in once */
	f = container_docker_cdi_flags(spec, "0,GPU-aaa", lost, sizeof(lost), err, sizeof(err));
	assert_non_null(f);
	assert_string_equal(f[1], "--device=/t/dev/nvidiactl:/dev/nvidiactl");
	free_argv(f);
	/* a device the spec lacks */
	assert_null(container_docker_cdi_flags(spec, "GPU-aaa,GPU-zzz", lost, sizeof(lost), err, sizeof(err)));
	assert_non_null(strstr(err, "no device 'GPU-zzz'"));
	json_decref(spec);
	/* hooks are not run: said; paths a flag cannot carry, bad permissions: refused */
	spec = json_loads("{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\"}],"
			  "\"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/usr/bin/nvidia-cdi-hook\"}]}}]}",
			  0, NULL);
	f = container_docker_cdi_flags(spec, "0", lost, sizeof(lost), err, sizeof(err));
	assert_non_null(f);
	assert_non_null(strstr(lost, "hooks"));
	free_argv(f);
	json_decref(spec);
	const char *bad[] = {
		"{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/a:b\"}]}}]}",
		"{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"dev/a\"}]}}]}",
		"{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/a\",\"permissions\":\"x\"}]}}]}",
		"{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/a,b\",\"containerPath\":\"/b\"}]}}]}",
		"{\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"env\":[\"=x\"]}}]}",
		"{\"devices\":[{\"name\":\"0\"}]}",
		"[]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spec = json_loads(bad[i], 0, NULL);
		assert_null(container_docker_cdi_flags(spec, "0", lost, sizeof(lost), err, sizeof(err)));
		assert_null(strchr(err, '\n'));
		json_decref(spec);
	}
}

static void test_docker_argv(void **state)
{
	(void)state;
	char *mounts[] = { "/data:/data:ro" }, *env[] = { "A=1" }, *cmd[] = { "nvidia-smi", "-L" };
	char *cdi[] = { "--device=/dev/nvidia3:/dev/nvidia3", "--env=NVIDIA_VISIBLE_DEVICES=void", NULL };
	unsigned groups[] = { 1000, 27, 44 };
	struct container_run r = { .runtime = CONTAINER_DOCKER, .job = 42, .image = "localhost/x:1",
				   .cdi_kind = "gpuctl.pool/gpu-0a1b2c3d", .devices = "GPU-bbb", .gpus = "3",
				   .in_cgroup = true, .mounts = mounts, .nmounts = 1, .env = env, .nenv = 1, .cmd = cmd,
				   .ncmd = 2, .cdi_flags = cdi, .uid = 1000, .gid = 1000, .groups = groups,
				   .ngroups = 3, .cgroup_parent = "/gpuctl-0a1b2c3d-job-42" };
	char **argv = container_run_argv(&r);
	const char *want[] = { "docker", "run", "--rm", "--name=gpuctl-job-42", "--init", "--user=1000:1000",
			       "--group-add=27", "--group-add=44", "--cgroup-parent=/gpuctl-0a1b2c3d-job-42",
			       "--device=/dev/nvidia3:/dev/nvidia3", "--env=NVIDIA_VISIBLE_DEVICES=void",
			       "--env=CUDA_VISIBLE_DEVICES=GPU-bbb", "--env=GPUCTL_JOB_ID=42", "--env=GPUCTL_JOB_GPUS=3",
			       "--env=A=1", "--volume=/data:/data:ro", "localhost/x:1", "nvidia-smi", "-L" };
	assert_argv(argv, want, sizeof(want) / sizeof(want[0]));
	free_argv(argv);
	/* no parent (a v1 or systemd-driven dockerd), root, the image's command */
	r.cgroup_parent = NULL;
	r.uid = r.gid = 0;
	r.ngroups = 0;
	r.ncmd = 0;
	argv = container_run_argv(&r);
	assert_non_null(argv);
	for (size_t i = 0; argv[i]; i++) {
		assert_null(strstr(argv[i], "--cgroup"));
		assert_null(strstr(argv[i], "podman"));
	}
	assert_string_equal(argv[5], "--user=0:0");
	free_argv(argv);
}

static void test_run_argv(void **state)
{
	(void)state;
	char *mounts[] = { "/data:/data:ro" }, *env[] = { "A=1" }, *cmd[] = { "sh", "-c", "nvidia-smi -L" };
	struct container_run r = { .job = 42, .image = "localhost/x:1", .cdi_kind = "gpuctl.pool/gpu-0a1b2c3d",
				   .devices = "GPU-aaa,GPU-bbb", .gpus = "0,3", .in_cgroup = true,
				   .mounts = mounts, .nmounts = 1, .env = env, .nenv = 1, .cmd = cmd, .ncmd = 3 };
	char **argv = container_run_argv(&r);
	assert_non_null(argv);
	const char *want[] = { "podman", "--cgroup-manager=cgroupfs", "run", "--rm", "--name=gpuctl-job-42", "--init",
			       "--cgroups=split", "--pids-limit=0", "--device=gpuctl.pool/gpu-0a1b2c3d=GPU-aaa",
			       "--device=gpuctl.pool/gpu-0a1b2c3d=GPU-bbb", "--env=CUDA_VISIBLE_DEVICES=GPU-aaa,GPU-bbb",
			       "--env=GPUCTL_JOB_ID=42", "--env=GPUCTL_JOB_GPUS=0,3", "--env=A=1", "--volume=/data:/data:ro",
			       "localhost/x:1", "sh", "-c", "nvidia-smi -L" };
	size_t n = 0;
	while (argv[n])
		n++;
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(argv[i], want[i]);
		free(argv[i]);
	}
	free(argv);
	/* no cgroup of its own: podman's default placement; no command: the image's */
	r.in_cgroup = false;
	r.ncmd = 0;
	argv = container_run_argv(&r);
	assert_non_null(argv);
	bool split = false;
	for (n = 0; argv[n]; n++) {
		split |= strcmp(argv[n], "--cgroups=split") == 0 || strcmp(argv[n], "--pids-limit=0") == 0;
		free(argv[n]);
	}
	assert_false(split);
	free(argv);
	char kind[64], path[300], name[48];
	container_cdi_kind("0a1b2c3d", kind, sizeof(kind));
	container_cdi_path("0a1b2c3d", path, sizeof(path));
	container_name(7, name, sizeof(name));
	assert_string_equal(kind, "gpuctl.pool/gpu-0a1b2c3d");
	assert_string_equal(path, "/var/run/cdi/gpuctl-pool-0a1b2c3d.json");
	assert_string_equal(name, "gpuctl-job-7");
}

static void test_image_need(void **state)
{
	(void)state;
	char err[256];
	unsigned need = 0;
	const char *cuda_image = "[{\"Id\":\"x\",\"Config\":{\"Env\":[\"PATH=/usr/bin\","
				 "\"NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471\","
				 "\"CUDA_VERSION=12.4.1\"]}}]";
	assert_int_equal(container_image_need(cuda_image, &need, err, sizeof(err)), 1);
	assert_int_equal(need, 12040);
	/* CUDA_VERSION alone */
	assert_int_equal(container_image_need("[{\"Config\":{\"Env\":[\"CUDA_VERSION=11.8.0\"]}}]", &need, err,
					      sizeof(err)), 1);
	assert_int_equal(need, 11080);
	/* the requirement wins over CUDA_VERSION */
	assert_int_equal(container_image_need("[{\"Config\":{\"Env\":[\"CUDA_VERSION=11.8.0\","
					      "\"NVIDIA_REQUIRE_CUDA=cuda>=12.1\"]}}]", &need, err, sizeof(err)), 1);
	assert_int_equal(need, 12010);
	/* an image that says nothing: any driver */
	assert_int_equal(container_image_need("[{\"Config\":{\"Env\":[\"PATH=/bin\"]}}]", &need, err, sizeof(err)), 0);
	assert_int_equal(container_image_need("[{\"Config\":{}}]", &need, err, sizeof(err)), 0);
	/* malformed */
	const char *bad[] = { "", "not json", "[]", "[1]", "{\"Config\":[]}x",
			      "[{\"Config\":{\"Env\":[\"NVIDIA_REQUIRE_CUDA=cuda>=twelve\"]}}]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(container_image_need(bad[i], &need, err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image),     cmocka_unit_test(test_mount), cmocka_unit_test(test_host_path),    cmocka_unit_test(test_env),
		cmocka_unit_test(test_runtime),   cmocka_unit_test(test_run_argv), cmocka_unit_test(test_image_need),
		cmocka_unit_test(test_docker_cdi_flags), cmocka_unit_test(test_docker_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
