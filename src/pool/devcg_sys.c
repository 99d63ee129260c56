/* SPDX-License-Identifier: Apache-2.0 */
/*
 * devcg_sys.c - the machine half of device limiting (devcg.h): probing
 * which method works, reading the driver's /proc files, loading and
 * attaching the BPF program (raw bpf(2)), and the v1 devices cgroup.
 */
#include "pool/devcg.h"
#include "core/data_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* Loads a device program. The fd, or -1 with a message (the verifier's first line). */
static int prog_load(const struct bpf_insn *insns, size_t n, char *err, size_t errlen)
{
	static const char license[] = "GPL"; /* no helper is called; any string would do */
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insn_cnt = (uint32_t)n;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.license = (uint64_t)(uintptr_t)license;
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd >= 0)
		return fd;
	int e = errno;
	char log[512] = "";
	if (e != EPERM) { /* again with the verifier's log, to say why */
		attr.log_level = 1;
		attr.log_size = sizeof(log);
		attr.log_buf = (uint64_t)(uintptr_t)log;
		int fd2 = (int)sys_bpf(BPF_PROG_LOAD, &attr);
		if (fd2 >= 0)
			return fd2;
		char *nl = strchr(log, '\n');
		if (nl)
			*nl = '\0';
	}
	snprintf(err, errlen, "the kernel refused the device program (%s%s%.200s)", strerror(e), log[0] ? ": " : "", log);
	errno = e;
	return -1;
}

/* ---- choosing the method ----------------------------------------------------------- */

/* The agent's cgroup in the v1 devices hierarchy. 0 or -1 with why. */
static int v1_devices_base(char *out, size_t outlen, char *why, size_t whylen)
{
	FILE *f = fopen("/proc/mounts", "re");
	char line[1024], mnt[512] = "";
	while (f && fgets(line, sizeof(line), f)) {
		char dev[128], dir[512], type[32], opts[512];
		if (sscanf(line, "%127s %511s %31s %511s", dev, dir, type, opts) != 4 || strcmp(type, "cgroup") != 0)
			continue;
		for (char *o = strtok(opts, ","); o; o = strtok(NULL, ","))
			if (strcmp(o, "devices") == 0)
				snprintf(mnt, sizeof(mnt), "%s", dir);
	}
	if (f)
		fclose(f);
	if (!mnt[0]) {
		snprintf(why, whylen, "no cgroup v1 devices controller is mounted");
		return -1;
	}
	char path[512] = "";
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		bool devices = false;
		for (char *o = strtok(c1 + 1, ","); o; o = strtok(NULL, ","))
			devices |= strcmp(o, "devices") == 0;
		if (devices) {
			c2[1 + strcspn(c2 + 1, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", c2 + 1);
		}
	}
	if (f)
		fclose(f);
	if (!path[0]) {
		snprintf(why, whylen, "the agent's cgroup v1 devices path is unknown");
		return -1;
	}
	if ((size_t)snprintf(out, outlen, "%s%s", mnt, strcmp(path, "/") == 0 ? "" : path) >= outlen) {
		snprintf(why, whylen, "the cgroup v1 devices path is too long");
		return -1;
	}
	char deny[600];
	snprintf(deny, sizeof(deny), "%s/devices.deny", out);
	if (access(out, W_OK) != 0 || access(deny, F_OK) != 0) {
		snprintf(why, whylen, "the cgroup v1 devices cgroup '%.200s' is not writable (%s)", out, strerror(errno));
		return -1;
	}
	return 0;
}

void devcg_probe(struct devcg *d, bool v2_cgroups)
{
	memset(d, 0, sizeof(*d));
	char bpf_why[256] = "";
	if (v2_cgroups) {
		struct bpf_insn allow_all[2];
		memset(allow_all, 0, sizeof(allow_all));
		allow_all[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
		allow_all[0].imm = 1;
		allow_all[1].code = BPF_JMP | BPF_EXIT;
		int fd = prog_load(allow_all, 2, bpf_why, sizeof(bpf_why));
		if (fd >= 0) {
			close(fd);
			d->method = DEVCG_BPF;
			snprintf(d->note, sizeof(d->note), "devices limited to each job's GPUs (cgroup v2 device program)");
			return;
		}
	} else {
		snprintf(bpf_why, sizeof(bpf_why), "no per-job cgroup v2 to attach a device program to");
	}
	char v1_why[300];
	if (v1_devices_base(d->v1_base, sizeof(d->v1_base), v1_why, sizeof(v1_why)) == 0) {
		d->method = DEVCG_V1;
		snprintf(d->note, sizeof(d->note), "devices limited to each job's GPUs (cgroup v1 devices under %.200s)",
			 d->v1_base);
		return;
	}
	d->v1_base[0] = '\0';
	d->method = DEVCG_NONE;
	snprintf(d->note, sizeof(d->note), "devices not limited: %.130s; %.130s", bpf_why, v1_why);
}

/* ---- a job's rules ------------------------------------------------------------------ */

int devcg_gpu_minor(bool simulated, unsigned index, const char *nvml_bus_id, unsigned *minor, char *err,
		    size_t errlen)
{
	if (simulated) { /* no driver files: simulated GPU i is /dev/nvidiaI */
		*minor = index;
		return 0;
	}
	char id[32], path[128];
	if (devcg_proc_bus_id(nvml_bus_id, id, sizeof(id))) {
		snprintf(err, errlen, "GPU %u has no usable PCI bus id", index);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", id);
	/* read whole: /proc files report no size (mig-minors is about 100 KB for
	 * 32 GPUs; a fixed 64 KiB buffer once cut it mid-line) */
	char *text = read_whole_file(path, 1 << 20, NULL, err, errlen);
	if (!text)
		return -1;
	int bad = devcg_parse_minor(text, minor);
	free(text);
	if (bad) {
		snprintf(err, errlen, "no 'Device Minor:' in '%s'", path);
		return -1;
	}
	return 0;
}

int devcg_job_rules(struct devcg_rules *r, const unsigned *gpu_minors, unsigned ngpus, int mig_gpu_minor, int mig_gi,
		    char *err, size_t errlen)
{
	static const char caps_path[] = "/proc/driver/nvidia-caps/mig-minors";
	char *text = NULL;
	struct devcg_cap *caps = calloc(DEVCG_MAX_CAPS, sizeof(*caps));
	int rc = -1, ncaps = 0, caps_major = -1;
	unsigned major;
	if (!caps) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!(text = read_whole_file("/proc/devices", 1 << 20, NULL, err, errlen)))
		goto out;
	if (devcg_parse_major(text, "nvidia-caps", &major) == 1) {
		caps_major = (int)major;
		free(text);
		/* no list (no MIG support in this driver): the major is denied whole */
		char ignore[256];
		if ((text = read_whole_file(caps_path, 16 << 20, NULL, ignore, sizeof(ignore)))) {
			ncaps = devcg_parse_mig_minors(text, caps, DEVCG_MAX_CAPS);
			if (ncaps == DEVCG_CAPS_TOO_MANY) {
				snprintf(err, errlen, "%s lists more than %d capabilities", caps_path, DEVCG_MAX_CAPS);
				goto out;
			}
			if (ncaps < 0) {
				snprintf(err, errlen, "cannot parse %s", caps_path);
				goto out;
			}
		}
	}
	devcg_rules_build(r, gpu_minors, ngpus, mig_gpu_minor, mig_gi, caps_major, caps, ncaps);
	rc = 0;
out:
	free(text);
	free(caps);
	return rc;
}

/* ---- applying them --------------------------------------------------------------- */

static int attach_bpf(const struct devcg_rules *r, const char *cgroup_dir, char *err, size_t errlen)
{
	struct bpf_insn *prog = calloc(DEVCG_MAX_PROG, sizeof(*prog));
	if (!prog) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = devcg_bpf_program(r, prog, DEVCG_MAX_PROG);
	int pfd = n ? prog_load(prog, n, err, errlen) : -1;
	free(prog);
	if (!n)
		snprintf(err, errlen, "the device program is too long");
	if (pfd < 0)
		return -1;
	int cg = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		snprintf(err, errlen, "cannot open cgroup '%.200s': %s", cgroup_dir, strerror(errno));
		close(pfd);
		return -1;
	}
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cg;
	attr.attach_bpf_fd = (uint32_t)pfd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	/* ALLOW_MULTI: a program attached below the job's cgroup runs as well
	 * as ours, never instead (both must allow an access), and a container
	 * runtime in the job (runc under podman --cgroups=split) can attach its
	 * own: without the flag, runc's attach failed with EPERM on the H200
	 * and the container did not start. No flags where an ancestor's
	 * program forbids MULTI below it. */
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	long rc = sys_bpf(BPF_PROG_ATTACH, &attr);
	if (rc != 0) {
		attr.attach_flags = 0;
		rc = sys_bpf(BPF_PROG_ATTACH, &attr);
	}
	int e = errno;
	close(cg);
	close(pfd); /* the attachment keeps the program */
	if (rc != 0) {
		snprintf(err, errlen, "cannot attach the device program to '%.200s': %s", cgroup_dir, strerror(e));
		return -1;
	}
	return 0;
}

static int write_line(const char *line, void *arg)
{
	int fd = *(int *)arg;
	size_t n = strlen(line);
	return write(fd, line, n) == (ssize_t)n ? 0 : -1;
}

static int apply_v1(const struct devcg *d, const struct devcg_rules *r, const char *name, char *v1_dir, size_t v1_len,
		    char *err, size_t errlen)
{
	if ((size_t)snprintf(v1_dir, v1_len, "%s/%s", d->v1_base, name) >= v1_len) {
		snprintf(err, errlen, "the cgroup v1 devices path is too long");
		v1_dir[0] = '\0';
		return -1;
	}
	if (mkdir(v1_dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%.200s': %s", v1_dir, strerror(errno));
		v1_dir[0] = '\0';
		return -1;
	}
	char path[600];
	snprintf(path, sizeof(path), "%s/devices.deny", v1_dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc = fd < 0 ? -1 : devcg_v1_deny_lines(r, write_line, &fd);
	if (rc) {
		snprintf(err, errlen, "cannot write '%.200s': %s", path, strerror(errno));
		rmdir(v1_dir);
		v1_dir[0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int devcg_apply(const struct devcg *d, const struct devcg_rules *r, const char *cgroup_dir, const char *name,
		char *v1_dir, size_t v1_len, char *err, size_t errlen)
{
	v1_dir[0] = '\0';
	switch (d->method) {
	case DEVCG_BPF:
		if (!cgroup_dir || !cgroup_dir[0]) {
			snprintf(err, errlen, "the job has no cgroup to attach the device program to");
			return -1;
		}
		return attach_bpf(r, cgroup_dir, err, errlen);
	case DEVCG_V1: {
		const char *base = cgroup_dir && cgroup_dir[0] ? strrchr(cgroup_dir, '/') : NULL;
		return apply_v1(d, r, base ? base + 1 : name, v1_dir, v1_len, err, errlen);
	}
	case DEVCG_NONE:
		break;
	}
	snprintf(err, errlen, "%s", d->note);
	return -1;
}
