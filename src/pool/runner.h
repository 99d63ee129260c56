/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runner.h - starting a job under its shim, and everything about processes.
 *
 * The shim is a child the agent forks; it calls setsid() (so it outlives
 * the agent: a kill -9 of the agent leaves it running, re-parented to init),
 * forks the job, writes "pids" (shim and job pid) into the job's directory,
 * waits for the job and writes its exit status durably into "exit" (written
 * to a temporary file, fsync'ed, renamed). Between fork and exec only
 * async-signal-safe calls run: everything (paths, argv, environment, group
 * list, open files) is prepared before the fork.
 *
 * The job: its own process group (cancel signals the group), its cgroup when
 * one was made (cgroup.procs written before exec; cgroup.kill on SIGKILL),
 * its v1 devices cgroup when device limits use the v1 fallback (devcg.h),
 * stdin /dev/null, stdout/stderr into pipes the shim copies into the job
 * directory's files (each kept within log_limit as it is written: joblog.h;
 * the shim goes on copying until the last process holding them ends), then as the
 * submitting user (setgroups, setgid, setuid when the agent is root), chdir
 * to the submitting directory, execve.
 */
#ifndef GPUCTL_POOL_RUNNER_H
#define GPUCTL_POOL_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/proc_stat.h"

struct runner_spec {
	const char *job_dir;         /* exists; stdout, stderr, pids, exit go here */
	bool change_user;            /* setgroups/setgid/setuid (agent is root) */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;         /* supplementary groups */
	int ngroups;
	const char *cwd;
	const char *path;            /* the program: with a '/' as is, else searched in search_path */
	const char *search_path;     /* the job's PATH (NULL: /usr/local/bin:/usr/bin:/bin), searched
				      * by the job itself, as the user, like execvp */
	char *const *argv;           /* NULL-terminated */
	char *const *envp;           /* NULL-terminated */
	const char *cgroup_dir;      /* join this cgroup, or NULL */
	const char *devices_v1_procs; /* cgroup.procs of the job's v1 devices cgroup to join, or NULL */
	uint64_t log_limit;          /* bytes kept of each output stream (joblog.h), 0: all */
};

/* Forks the shim. Returns 0 with *shim_pid, or -1 with a message. */
int runner_spawn(const struct runner_spec *s, pid_t *shim_pid, char *err, size_t errlen);

/* What the shim wrote in "exit". */
struct runner_exit {
	int wait_status;             /* as waitpid() gave it */
	uint64_t end_ns;
	int stage;                   /* 0: the job ran; else where starting it failed (RUNNER_STAGE_*) */
	int error;                   /* errno of that failure */
};
enum { RUNNER_STAGE_RAN = 0, RUNNER_STAGE_CGROUP, RUNNER_STAGE_USER, RUNNER_STAGE_CWD, RUNNER_STAGE_EXEC };
const char *runner_stage_name(int stage);

/* Parsers of the shim's records (pure). 0 or -1 when malformed. */
int runner_parse_exit(const char *text, struct runner_exit *out);
int runner_parse_pids(const char *text, int *shim_pid, int *job_pid);
/* 1 the record exists (parsed into out), 0 not (yet), -1 unreadable or malformed. */
int runner_read_exit(const char *job_dir, struct runner_exit *out);
int runner_read_pids(const char *job_dir, int *shim_pid, int *job_pid);

/* /proc/PID/stat fields the pool needs. */
/* True when pid is alive (not a zombie) with this start time. */
bool proc_alive_as(int pid, uint64_t start_ticks);
/* True when pid belongs to one of the shims' jobs: in a shim's session, or
 * descended from a shim (followed up to 64 parents). */
bool proc_in_jobs(int pid, const int *shim_pids, unsigned n);

/* The boot id (/proc/sys/kernel/random/boot_id), "" when unreadable. */
void runner_boot_id(char *out, size_t outlen);

/* The cgroup2 mount point ("/sys/fs/cgroup", or ".../unified" on a hybrid
 * host). 0, or -1 when none is mounted. */
int runner_cgroup2_mount(char *out, size_t outlen);
/* cgroup v2: where the job cgroups go: the agent's own cgroup in the
 * cgroup2 mount (hybrid or unified), or parent when given. 0 with the
 * directory, or -1 with why there is none. */
int runner_cgroup_base(const char *parent, char *out, size_t outlen, char *err, size_t errlen);
/* Makes base/gpuctl-TAG-job-ID (TAG tells the pools of several agents apart).
 * 0 or -1 with a message. */
int runner_cgroup_create(const char *base, const char *tag, uint64_t job, char *out, size_t outlen, char *err,
			 size_t errlen);
/* Kills every process of the cgroup (cgroup.kill; else SIGKILL to each pid in cgroup.procs). */
void runner_cgroup_kill(const char *dir);
/* Removes the cgroup when it is empty, with the empty cgroups a container
 * runtime made in it (podman --cgroups=split); true when it is gone. */
bool runner_cgroup_remove(const char *dir);
/* True when the cgroup v2 path (a /proc/PID/cgroup "0::" line's, "/a/b")
 * has the job cgroup's directory name (its last component, "gpuctl-TAG-job-ID")
 * as a whole component: the process runs in that cgroup or below it (pure). */
bool runner_cgroup_path_within(const char *proc_path, const char *job_cgroup);
/* Number of processes in the cgroup (-1: unreadable). */
int runner_cgroup_count(const char *dir);

#endif
