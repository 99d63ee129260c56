/* SPDX-License-Identifier: Apache-2.0 */
/*
 * devcg.h - limiting a pool job's NVIDIA device nodes to its own GPUs
 * (docs/pool.md, "What is isolated").
 *
 * The NVIDIA character devices: major 195, minors 0-253 /dev/nvidiaN (one
 * per GPU, N = the GPU's "Device Minor"), 254 nvidia-modeset, 255 nvidiactl;
 * nvidia-uvm and nvidia-caps get dynamic majors (/proc/devices). A job may
 * open its own GPUs' minors, nvidiactl, nvidia-modeset and nvidia-uvm (not
 * per GPU); the other GPUs' minors are denied, and so is every
 * nvidia-caps minor except its own MIG instance's GPU instance and compute
 * instance access capabilities (/proc/driver/nvidia-caps/mig-minors). Every
 * other device is left as it was.
 *
 * Two ways to enforce it, chosen once when the pool starts:
 *  - cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program (hand-assembled, loaded
 *    with bpf(2), no libbpf) attached to the job's cgroup before the job is
 *    created in it;
 *  - cgroup v1 fallback: a per-job cgroup in the v1 devices hierarchy with
 *    one devices.deny line per denied node, joined by the job before exec.
 * Pure parts (parsers, rules, the program) are separate from the I/O
 * (devcg_sys.c).
 */
#ifndef GPUCTL_POOL_DEVCG_H
#define GPUCTL_POOL_DEVCG_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEVCG_NVIDIA_MAJOR 195u
#define DEVCG_MODESET_MINOR 254u
#define DEVCG_CTL_MINOR 255u
#define DEVCG_MAX_CAPS 8192       /* nvidia-caps minors we track (the driver lists 4322: 32 GPUs x 15 GIs x (1 + 8 CIs) + 2) */
#define DEVCG_MAX_PROG 1100       /* instructions: 10 + up to 256 own GPU minors + caps */

/* "Device Minor: N" in /proc/driver/nvidia/gpus/<bus id>/information.
 * 0 with the minor (0-253), -1 when absent or malformed. */
int devcg_parse_minor(const char *text, unsigned *minor);
/* The character major of driver name in /proc/devices text. 1 found, 0 not. */
int devcg_parse_major(const char *text, const char *name, unsigned *major);
/* NVML's bus id ("00000000:18:00.0") -> the /proc/driver/nvidia/gpus
 * directory's name ("0000:18:00.0", lower case). 0, or -1 when malformed. */
int devcg_proc_bus_id(const char *nvml, char *out, size_t outlen);

struct devcg_cap {
	char name[64];            /* "gpu0/gi1/access", "gpu0/gi1/ci0/access", "config", "monitor" */
	unsigned minor;
};
/* /proc/driver/nvidia-caps/mig-minors: "NAME MINOR" lines. Returns how many
 * were read, -1 when a line is malformed, DEVCG_CAPS_TOO_MANY when there are
 * more than max (a cut list would leave minors neither allowed nor denied). */
#define DEVCG_CAPS_TOO_MANY (-2)
int devcg_parse_mig_minors(const char *text, struct devcg_cap *out, int max);

/* What a job may open. */
struct devcg_rules {
	bool own[256];                /* minors of major 195 allowed (its GPUs, 254, 255) */
	bool have_caps;               /* nvidia-caps exists: deny its minors but these */
	unsigned caps_major;
	unsigned caps_allow[DEVCG_MAX_CAPS];
	unsigned ncaps_allow;
	unsigned caps_deny[DEVCG_MAX_CAPS];   /* the listed minors not allowed (for v1) */
	unsigned ncaps_deny;
};
/* The rules for a job holding GPUs of these minors, and (mig_gpu_minor >= 0)
 * the MIG GPU instance mig_gi of the GPU of that minor. caps: the
 * mig-minors list (ncaps may be 0); caps_major < 0: no nvidia-caps. */
void devcg_rules_build(struct devcg_rules *r, const unsigned *gpu_minors, unsigned ngpus, int mig_gpu_minor,
		       int mig_gi, int caps_major, const struct devcg_cap *caps, int ncaps);
/* Whether the rules let a job open char device major:minor (what the BPF
 * program and the v1 lines enforce; for tests and the docs). */
bool devcg_rules_allow(const struct devcg_rules *r, unsigned major, unsigned minor);

/* The BPF_PROG_TYPE_CGROUP_DEVICE program for the rules: returns its number
 * of instructions, or 0 when cap is too small. */
size_t devcg_bpf_program(const struct devcg_rules *r, struct bpf_insn *out, size_t cap);

/* The v1 devices.deny lines ("c 195:3 rwm"), one per call of fn; stops and
 * returns fn's non-zero result. */
int devcg_v1_deny_lines(const struct devcg_rules *r, int (*fn)(const char *line, void *arg), void *arg);

/* ---- the machine (devcg_sys.c) ---- */

enum devcg_method { DEVCG_NONE = 0, DEVCG_BPF, DEVCG_V1 };

struct devcg {
	enum devcg_method method;
	char v1_base[512];            /* the agent's cgroup in the v1 devices hierarchy */
	char note[300];               /* "devices limited to each job's GPUs (...)" or why not */
};

/* Chooses the method: BPF when v2_cgroups (jobs get a cgroup v2) and the
 * kernel loads a device program; else the v1 devices controller when the
 * agent's v1 devices cgroup is writable; else none, with why in note. */
void devcg_probe(struct devcg *d, bool v2_cgroups);

/* The GPU minor of a GPU: on the simulator its index (no driver files);
 * else from /proc/driver/nvidia/gpus/<bus id>/information. 0 or -1 with a message. */
int devcg_gpu_minor(bool simulated, unsigned index, const char *nvml_bus_id, unsigned *minor, char *err,
		    size_t errlen);

/* Builds the rules for a job from the machine's /proc files (majors, MIG
 * capability minors). 0 or -1 with a message. */
int devcg_job_rules(struct devcg_rules *r, const unsigned *gpu_minors, unsigned ngpus, int mig_gpu_minor, int mig_gi,
		    char *err, size_t errlen);

/* Applies the rules for a job: BPF: loads and attaches the program to
 * cgroup_dir (the job's v2 cgroup, still empty); V1: creates
 * v1_base/NAME (NAME = the last part of cgroup_dir, or name) and writes the
 * deny lines; *v1_dir gets that directory ("" for BPF). 0 or -1 with a message. */
int devcg_apply(const struct devcg *d, const struct devcg_rules *r, const char *cgroup_dir, const char *name,
		char *v1_dir, size_t v1_len, char *err, size_t errlen);

#endif
