// SPDX-License-Identifier: Apache-2.0
/* sweep_files.c - a sweep's result directory and --drain's decision for one
 * node (slurm/sweep_files.h). */
#include "slurm/sweep_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/abuf.h"
#include "core/exitcodes.h"
#include "core/readfile.h"
#include "core/spawn.h"
#include "core/units.h"
#include "slurm/gres.h"
#include "slurm/scontrol.h"

int sweep_dir_make(const char *dir, char *err, size_t errlen)
{
	char sub[4200];
	snprintf(sub, sizeof(sub), "%s/logs", dir);
	if ((mkdir(dir, 0755) != 0 && errno != EEXIST) || (mkdir(sub, 0755) != 0 && errno != EEXIST))
		return snprintf(err, errlen, "cannot create '%s': %s", sub, strerror(errno)), -1;
	snprintf(sub, sizeof(sub), "%s/nodes", dir);
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return snprintf(err, errlen, "cannot create '%s': %s", sub, strerror(errno)), -1;
	return 0;
}

void sweep_results_forget(const char *dir, const struct sweep_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/nodes/%s.json", dir, jobs[i].node);
		unlink(path);
	}
}

bool sweep_result_exists(const char *dir, const char *node)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/nodes/%s.json", dir, node);
	return access(path, F_OK) == 0;
}

void sweep_log_tail(const char *dir, const char *node, char *out, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/logs/%s.out", dir, node);
	size_t n;
	char err[300];
	char *text = read_whole_file(path, SWEEP_LOG_MAX, &n, err, sizeof(err));
	out[0] = '\0';
	if (!text)
		return;
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	char *last = strrchr(text, '\n');
	snprintf(out, len, "%s", last ? last + 1 : text);
	free(text);
}

int sweep_gather(struct fleet *f, const char *dir, const struct sweep_job *jobs, size_t n, sweep_warn_fn warn,
		 void *arg, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		const struct sweep_job *j = &jobs[i];
		char path[4200], why[300];
		snprintf(path, sizeof(path), "%s/nodes/%s.json", dir, j->node);
		size_t len;
		char note[400] = "";
		char *text = NULL;
		if (j->state == SWEEP_JOB_DONE &&
		    !(text = read_whole_file(path, SWEEP_NODE_RESULT_MAX, &len, why, sizeof(why)))) {
			/* a device, a FIFO, a result too large: that node failed, said once here */
			char msg[600];
			snprintf(msg, sizeof(msg), "node '%s': %s", j->node, why);
			warn(arg, msg);
			snprintf(note, sizeof(note), "its result cannot be read: %.180s", why);
		}
		int rc = 0;
		if (text)
			(void)fleet_add_result(f, j->node, text, len, why, sizeof(why));
		else
			rc = fleet_add_missing(f, j->node, j->state == SWEEP_JOB_NOT_STARTED ? FLEET_NOT_STARTED : FLEET_FAILED,
					       note[0] ? note : j->note[0] ? j->note : "its result could not be read");
		free(text);
		if (rc)
			return snprintf(err, errlen, "out of memory"), EXIT_SOFTWARE;
	}
	if (fleet_analyze(f) != 0)
		return snprintf(err, errlen, "out of memory"), EXIT_SOFTWARE;
	return EXIT_OK;
}

static int by_node(const void *x, const void *y)
{
	return strcmp(((const struct sweep_job *)x)->node, ((const struct sweep_job *)y)->node);
}

int sweep_jobs_from_dir(const char *dir, struct sweep_job **jobs_out, size_t *n_out, sweep_warn_fn warn, void *arg,
			char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/nodes", dir);
	DIR *d = opendir(path);
	if (!d)
		return snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno)), EXIT_NOINPUT;
	struct sweep_job *jobs = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		/* the node's name is the file's: it reaches scontrol, so it is one node's name or no node */
		char name[FLEET_NAME_LEN];
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5 < sizeof(name) - 1 ? len - 5 : sizeof(name) - 1), e->d_name);
		if (len - 5 >= FLEET_NAME_LEN || !slurm_host_name_ok(name)) {
			char q[48], msg[4400];
			snprintf(msg, sizeof(msg), "ignored '%s/%s': not a node's name (letters, digits, '.', '-', '_'; "
				 "not ALL, no host list)", path, units_quoted(e->d_name, q));
			warn(arg, msg);
			continue;
		}
		struct sweep_job *p = realloc(jobs, (n + 1) * sizeof(*p));
		if (!p) {
			closedir(d);
			free(jobs);
			return snprintf(err, errlen, "out of memory"), EXIT_SOFTWARE;
		}
		jobs = p;
		memset(&jobs[n], 0, sizeof(jobs[n]));
		snprintf(jobs[n].node, sizeof(jobs[n].node), "%s", name);
		jobs[n++].state = SWEEP_JOB_DONE;
	}
	closedir(d);
	if (!n) {
		free(jobs);
		return snprintf(err, errlen, "no node result (NODE.json) in '%s'", path), EXIT_NOINPUT;
	}
	qsort(jobs, n, sizeof(*jobs), by_node);
	*jobs_out = jobs;
	*n_out = n;
	return EXIT_OK;
}

int sweep_fleet_load(const char *path, struct fleet *f, char *err, size_t errlen)
{
	size_t len;
	char why[400];
	char *text = read_whole_file(path, SWEEP_FLEET_MAX, &len, why, sizeof(why));
	if (!text)
		return snprintf(err, errlen, "%s", why), EXIT_NOINPUT;
	int rc = fleet_from_json(f, text, len, why, sizeof(why));
	free(text);
	if (rc)
		return snprintf(err, errlen, "'%s': %s", path, why), EXIT_DATAERR;
	return EXIT_OK;
}

void sweep_drain_node(const struct fleet *f, size_t i, enum fleet_drain_plan plan, struct sweep_drain_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *name = f->node[i].name;
	if (plan == FLEET_KEEP || !fleet_drain_reason(f, i, r->reason, sizeof(r->reason))) {
		r->outcome = SWEEP_DRAIN_NONE;
		return;
	}
	if (plan == FLEET_OVER_CAP || plan == FLEET_LAST_OF_MODEL) {
		r->outcome = plan == FLEET_OVER_CAP ? SWEEP_DRAIN_OVER_CAP : SWEEP_DRAIN_LAST_OF_MODEL;
		return;
	}
	if (!slurm_host_name_ok(name)) { /* checked where it came from; checked again before scontrol */
		r->outcome = SWEEP_DRAIN_BAD_NAME;
		return;
	}
	struct slurm_node_info ni;
	if (scontrol_show_node("scontrol", name, &ni, r->err, sizeof(r->err)) != 0) {
		r->outcome = SWEEP_DRAIN_UNREADABLE;
		return;
	}
	enum slurm_hc_action act = fleet_drain_decide(r->reason, &ni);
	if (act == SLURM_HC_DRAIN)
		r->outcome = scontrol_node_action("scontrol", name, act, r->reason, r->err, sizeof(r->err)) != 0
				     ? SWEEP_DRAIN_FAILED
				     : SWEEP_DRAIN_DRAINED;
	else if (act == SLURM_HC_KEEP_OTHERS) {
		r->outcome = SWEEP_DRAIN_OTHERS;
		term_clean(r->other, sizeof(r->other), ni.reason); /* anyone's words */
	} else {
		r->outcome = SWEEP_DRAIN_ALREADY;
	}
}

int sweep_spawn_read(char *const argv[], char **out, char *errline, size_t errlen)
{
	struct spawn_opts o = { .out_max = SWEEP_OUTPUT_MAX };
	return spawn_run(argv, &o, out, NULL, errline, errlen);
}

int sweep_list_nodes(const char *nodes, const char *partition, struct sweep_job **jobs, size_t *n, char *err,
		     size_t errlen)
{
	char *out = NULL, why[300];
	int rc;
	if (nodes) {
		char *argv[] = { (char *)"scontrol", (char *)"show", (char *)"hostnames", (char *)nodes, NULL };
		rc = sweep_spawn_read(argv, &out, why, sizeof(why));
	} else {
		char *argv[] = { (char *)"sinfo", (char *)"-h", (char *)"-N", (char *)"-o", (char *)"%N",
				 (char *)(partition ? "-p" : NULL), (char *)partition, NULL };
		rc = sweep_spawn_read(argv, &out, why, sizeof(why));
	}
	if (rc != 0 || !out) {
		snprintf(err, errlen, "cannot list the nodes (%s failed%s%s)", nodes ? "scontrol show hostnames" : "sinfo",
			 why[0] ? ": " : "", why);
		free(out);
		return EXIT_UNAVAILABLE;
	}
	rc = sweep_jobs_parse(out, jobs, n, err, errlen);
	free(out);
	if (!rc && *n == 0) {
		snprintf(err, errlen, "no node to sweep");
		rc = EXIT_USAGE;
	}
	return rc;
}

void sweep_cancel(const struct sweep_job *j)
{
	char err[200];
	char *argv[] = { (char *)"scancel", (char *)j->id, NULL };
	(void)sweep_spawn_read(argv, NULL, err, sizeof(err));
}

int sweep_poll(const char *dir, const char *name, struct sweep_job *jobs, size_t n, long long waited_ns,
	       long long start_timeout_ns, char *err, size_t errlen)
{
	char *out = NULL, why[300];
	char *argv[] = { (char *)"squeue", (char *)"-h", (char *)"-n", (char *)name, (char *)"-o", (char *)"%i %T %r", NULL };
	if (sweep_spawn_read(argv, &out, why, sizeof(why)) != 0 || !out) {
		free(out);
		snprintf(err, errlen, "squeue failed%s%s", why[0] ? ": " : "", why);
		return EXIT_UNAVAILABLE;
	}
	for (size_t i = 0; i < n; i++) {
		struct sweep_job *j = &jobs[i];
		if (j->state >= SWEEP_JOB_DONE)
			continue;
		enum sweep_action act = sweep_job_step(j, out, sweep_result_exists(dir, j->node), waited_ns, start_timeout_ns);
		if (act == SWEEP_CANCEL) {
			sweep_cancel(j);
		} else if (act == SWEEP_ENDED) {
			char tail[160];
			sweep_log_tail(dir, j->node, tail, sizeof(tail));
			sweep_job_ended(j, tail);
		}
	}
	free(out);
	return EXIT_OK;
}
