/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_logs.c - what the pool does to keep jobs' output from filling its
 * disk (docs/pool.md, "Output, retention and a full disk"): each stream of a
 * running job kept within pool_log_limit (joblog.h), ended jobs' directories
 * removed pool_log_retention after they end, and no job started while the
 * state directory's filesystem has less than pool_min_free.
 */
#include "pool_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/clock.h"
#include "pool/joblog.h"

/* running jobs' output files checked this often: the shim trims what comes
 * through the job's stdout and stderr as it writes it (runner.c); this
 * bounds what a job writes into the files by their path */
#define LOG_CHECK_NS 200000000ull
#define RETENTION_SWEEP_NS 60000000000ull /* ended jobs' directories looked at this often (or the retention) */

void pool_logs_trim(struct pool *p, struct pool_job *j)
{
	if (!p->cfg.log_limit)
		return;
	char dir[512], path[600];
	pool_job_dir(p, j->id, dir, sizeof(dir));
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, k ? "stderr" : "stdout");
		(void)joblog_trim(path, p->cfg.log_limit, &j->log_punched[k]); /* tried again at the next check */
	}
}

/* Removes a job's directory and what is in it (files only: the shim makes no
 * subdirectories). */
static void remove_job_dir(int jobs_fd, const char *name)
{
	int fd = openat(jobs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	unlinkat(jobs_fd, name, AT_REMOVEDIR);
}

/* Directories of jobs that are not active and ended (their directory last
 * changed: the exit record) longer than the retention ago. */
static void sweep_ended(struct pool *p)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/jobs", p->cfg.state_dir);
	DIR *d = opendir(path);
	if (!d)
		return;
	uint64_t now = pool_now(p);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		unsigned long long id = strtoull(e->d_name, &end, 10);
		struct stat sb;
		if (!id || *end || pool_find_active(p, id) || fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(sb.st_mode))
			continue;
		uint64_t changed = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec;
		if (now > changed && now - changed >= p->cfg.log_retention_ns)
			remove_job_dir(dirfd(d), e->d_name);
	}
	closedir(d);
}

void pool_logs_tick(struct pool *p)
{
	uint64_t m = clock_mono_ns();
	if (m - p->log_check_mono >= LOG_CHECK_NS) {
		p->log_check_mono = m;
		for (size_t i = 0; i < p->njobs; i++)
			if (p->jobs[i]->state == JOB_RUNNING)
				pool_logs_trim(p, p->jobs[i]);
	}
	uint64_t every = p->cfg.log_retention_ns < RETENTION_SWEEP_NS ? p->cfg.log_retention_ns : RETENTION_SWEEP_NS;
	if (p->cfg.log_retention_ns && (!p->sweep_mono || m - p->sweep_mono >= every)) {
		p->sweep_mono = m;
		sweep_ended(p);
	}
}

bool pool_disk_low(const struct pool *p, char *why, size_t len)
{
	struct statvfs vs;
	if (!p->cfg.min_free_bytes || statvfs(p->cfg.state_dir, &vs) != 0)
		return false;
	uint64_t free_b = (uint64_t)vs.f_bavail * (uint64_t)vs.f_frsize;
	if (free_b >= p->cfg.min_free_bytes)
		return false;
	snprintf(why, len, "not started: the pool's disk is full (%.1f MiB free in %.80s; jobs start above %.1f MiB, pool_min_free)",
		 (double)free_b / 1048576.0, p->cfg.state_dir, (double)p->cfg.min_free_bytes / 1048576.0);
	return true;
}
