/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_devices.c - the pool's side of device limiting (devcg.h): a job's
 * GPU minors and rules at its start, its v1 devices cgroup at its end, and
 * the pool_isolation setting.
 */
#include "pool_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pool_isolation_parse(const char *s)
{
	if (strcmp(s, "strict") == 0)
		return POOL_ISOLATION_STRICT;
	if (strcmp(s, "best-effort") == 0)
		return POOL_ISOLATION_BEST_EFFORT;
	if (strcmp(s, "off") == 0)
		return POOL_ISOLATION_OFF;
	return -1;
}

static void job_cgroup_name(const struct pool *p, uint64_t id, char *out, size_t outlen)
{
	/* the name runner_cgroup_create gives the job's v2 cgroup */
	snprintf(out, outlen, "gpuctl-%s-job-%llu", p->cgroup_tag, (unsigned long long)id);
}

/* Limits the job's NVIDIA devices to its GPUs (devcg.h), before its first
 * process exists. msg has room for 300 bytes. 0, or -1 with why. */
int pool_limit_devices(struct pool *p, const struct pool_job *j, const unsigned *gpus, unsigned ng, char *msg,
			 char *v1_dir, size_t v1_len)
{
	unsigned minors[GPU_MAX_GPUS];
	int mig_minor = -1;
	char err[300];
	for (unsigned k = 0; k < ng; k++) {
		const struct gpu_view *v = &p->snap->gpu[gpus[k]];
		if (devcg_gpu_minor(p->simulated, gpus[k], VAL_HAS(v->st.pci_bus_id) ? v->st.pci_bus_id.s : NULL, &minors[k],
				    err, sizeof(err))) {
			snprintf(msg, 300, "%.290s", err);
			return -1;
		}
	}
	if (j->mig_gpu >= 0 && ng)
		mig_minor = (int)minors[0];
	struct devcg_rules *r = malloc(sizeof(*r));
	if (!r) {
		snprintf(msg, 300, "out of memory");
		return -1;
	}
	char name[64];
	job_cgroup_name(p, j->id, name, sizeof(name));
	int rc = devcg_job_rules(r, minors, mig_minor >= 0 ? 0 : ng, mig_minor, j->mig_gi, err, sizeof(err));
	if (rc == 0)
		rc = devcg_apply(&p->devcg, r, j->cgroup, name, v1_dir, v1_len, err, sizeof(err));
	free(r);
	if (rc)
		snprintf(msg, 300, "%.290s", err);
	return rc;
}

void pool_job_note(const char *job_dir, const char *what, const char *why)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/stderr", job_dir);
	/* created as the runner creates it; the runner gives it to the user */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	dprintf(fd, "gpuctl: %s: %s\n", what, why);
	close(fd);
}

void pool_devices_warn(const char *job_dir, const char *why)
{
	pool_job_note(job_dir, "warning: this job's devices are not limited to its GPUs", why);
}

void pool_devices_cleanup(struct pool *p, const struct pool_job *j)
{
	if (p->devcg.method != DEVCG_V1)
		return;
	char name[64], dir[600];
	job_cgroup_name(p, j->id, name, sizeof(name));
	snprintf(dir, sizeof(dir), "%s/%s", p->devcg.v1_base, name);
	if (access(dir, F_OK) == 0)
		pool_cleanup_cgroup(p, dir);
}
