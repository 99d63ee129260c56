/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_sweep.c - the fleet sweep's state machine (src/slurm/sweep.h):
 * the node list, sbatch's answer, each look at squeue and the result files,
 * the start timeout and the sweep's timeout; the sbatch command; the result
 * directory (src/slurm/sweep_files.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/exitcodes.h"
#include "slurm/sweep.h"
#include "slurm/sweep_files.h"

#include <stdio.h>
#include <unistd.h>

#define SEC 1000000000LL

static void test_parse(void **state)
{
	(void)state;
	struct sweep_job *jobs;
	size_t n;
	char err[200];
	/* sinfo -N: a node once per partition, swept once; blank lines and trailing words ignored */
	char text[] = "gpu01\ngpu02 extra\n\ngpu01\n  \ngpu03\n";
	assert_int_equal(sweep_jobs_parse(text, &jobs, &n, err, sizeof(err)), EXIT_OK);
	assert_int_equal(n, 3);
	assert_string_equal(jobs[0].node, "gpu01");
	assert_string_equal(jobs[1].node, "gpu02");
	assert_string_equal(jobs[2].node, "gpu03");
	assert_int_equal(jobs[2].state, SWEEP_JOB_PENDING);
	assert_string_equal(jobs[2].id, "");
	free(jobs);
	char empty[] = "\n\n";
	assert_int_equal(sweep_jobs_parse(empty, &jobs, &n, err, sizeof(err)), EXIT_OK);
	assert_int_equal(n, 0);
	free(jobs);
	/* a name that would reach scontrol as an option or a host list */
	char bad[] = "gpu01\n-x\n";
	assert_int_equal(sweep_jobs_parse(bad, &jobs, &n, err, sizeof(err)), EXIT_DATAERR);
	assert_string_equal(err, "bad node name '-x' from Slurm");
	assert_null(jobs);
	assert_int_equal(n, 0);
	char list[] = "gpu[01-02]\n";
	assert_int_equal(sweep_jobs_parse(list, &jobs, &n, err, sizeof(err)), EXIT_DATAERR);
}

static void test_submitted(void **state)
{
	(void)state;
	struct sweep_job j = { .node = "gpu01" };
	assert_true(sweep_job_submitted(&j, 0, "1234;cluster\n", ""));
	assert_string_equal(j.id, "1234");
	struct sweep_job k = { .node = "gpu02" };
	assert_true(sweep_job_submitted(&k, 0, "77\n", ""));
	assert_string_equal(k.id, "77");
	struct sweep_job f = { .node = "gpu03" };
	assert_false(sweep_job_submitted(&f, 1, NULL, "sbatch: error: invalid partition"));
	assert_int_equal(f.state, SWEEP_JOB_FAILED);
	assert_string_equal(f.note, "sbatch failed: sbatch: error: invalid partition");
	struct sweep_job e = { .node = "gpu04" };
	assert_false(sweep_job_submitted(&e, 0, "", ""));
	assert_string_equal(e.note, "sbatch failed: no job id");
}

static void test_step(void **state)
{
	(void)state;
	const char *queue = "10 PENDING Resources\n11 RUNNING None\n";
	struct sweep_job p = { .node = "a", .id = "10" }, r = { .node = "b", .id = "11" }, g = { .node = "c", .id = "12" };
	assert_int_equal(sweep_job_step(&p, queue, false, 5 * SEC, 60 * SEC), SWEEP_KEEP);
	assert_int_equal(p.state, SWEEP_JOB_PENDING);
	assert_string_equal(p.reason, "Resources");
	assert_int_equal(sweep_job_step(&r, queue, false, 5 * SEC, 60 * SEC), SWEEP_KEEP);
	assert_int_equal(r.state, SWEEP_JOB_RUNNING);
	/* "1" is not "10": the id is matched with its space */
	struct sweep_job one = { .node = "d", .id = "1" };
	assert_int_equal(sweep_job_step(&one, queue, false, 5 * SEC, 60 * SEC), SWEEP_ENDED);
	/* gone without a result: failed, with its log's last line */
	assert_int_equal(sweep_job_step(&g, queue, false, 5 * SEC, 60 * SEC), SWEEP_ENDED);
	assert_int_equal(g.state, SWEEP_JOB_FAILED);
	assert_string_equal(g.note, "job 12 ended without a result");
	sweep_job_ended(&g, "srun: error: gpu03: task 0: Exited with exit code 69");
	assert_string_equal(g.note, "job 12 ended without a result: srun: error: gpu03: task 0: Exited with exit code 69");
	/* a result is done, in the queue or not; done stays done */
	assert_int_equal(sweep_job_step(&r, queue, true, 6 * SEC, 60 * SEC), SWEEP_KEEP);
	assert_int_equal(r.state, SWEEP_JOB_DONE);
	assert_int_equal(sweep_job_step(&r, "", false, 7 * SEC, 60 * SEC), SWEEP_KEEP);
	assert_int_equal(r.state, SWEEP_JOB_DONE);
	/* pending at the start timeout: cancel, not started */
	assert_int_equal(sweep_job_step(&p, queue, false, 60 * SEC, 60 * SEC), SWEEP_CANCEL);
	assert_int_equal(p.state, SWEEP_JOB_NOT_STARTED);
	assert_string_equal(p.note, "job 10 still pending after 60 s (Resources); cancelled");
	assert_int_equal(sweep_job_step(&p, queue, false, 61 * SEC, 60 * SEC), SWEEP_KEEP);
}

static void test_timeout_counts(void **state)
{
	(void)state;
	struct sweep_job jobs[4] = {
		{ .node = "a", .id = "1", .state = SWEEP_JOB_PENDING },
		{ .node = "b", .id = "2", .state = SWEEP_JOB_RUNNING },
		{ .node = "c", .id = "3", .state = SWEEP_JOB_DONE },
		{ .node = "d", .id = "4", .state = SWEEP_JOB_RUNNING },
	};
	size_t c[SWEEP_JOB_NSTATES];
	sweep_counts(jobs, 4, c);
	assert_int_equal(c[SWEEP_JOB_PENDING], 1);
	assert_int_equal(c[SWEEP_JOB_RUNNING], 2);
	assert_int_equal(c[SWEEP_JOB_DONE], 1);
	assert_true(sweep_job_timeout(&jobs[0], 3600 * SEC));
	assert_int_equal(jobs[0].state, SWEEP_JOB_NOT_STARTED);
	assert_string_equal(jobs[0].note, "job 1 still pending at the sweep's timeout (3600 s); cancelled");
	assert_true(sweep_job_timeout(&jobs[1], 3600 * SEC));
	assert_int_equal(jobs[1].state, SWEEP_JOB_FAILED);
	assert_string_equal(jobs[1].note, "job 2 still running at the sweep's timeout (3600 s); cancelled");
	assert_false(sweep_job_timeout(&jobs[2], 3600 * SEC));
	assert_int_equal(jobs[2].state, SWEEP_JOB_DONE);
	sweep_counts(jobs, 4, c);
	assert_int_equal(c[SWEEP_JOB_PENDING] + c[SWEEP_JOB_RUNNING], 1);
	assert_int_equal(c[SWEEP_JOB_NOT_STARTED], 1);
	assert_int_equal(c[SWEEP_JOB_FAILED], 1);
}

static void test_sbatch_argv(void **state)
{
	(void)state;
	struct sweep_sbatch sb;
	sweep_sbatch_argv(&sb, "/opt/gpuctl", "diag1", 1500000000LL, "/shared/sw", "gpu", "gpuctl-sweep-7", "n01");
	const char *want[] = { "sbatch", "--parsable", "--exclusive", "-N1", "-J", "gpuctl-sweep-7", "-w", "n01", "-o",
			       "/shared/sw/logs/n01.out", "-p", "gpu", "--wrap",
			       "exec '/opt/gpuctl' slurm sweep --run-node --level diag1 --window 1.500s --out '/shared/sw'",
			       NULL };
	for (unsigned k = 0; want[k]; k++)
		assert_string_equal(sb.argv[k], want[k]);
	assert_null(sb.argv[14]);
	sweep_sbatch_argv(&sb, "g", "health", 0, "d", NULL, "j", "n"); /* no partition: no -p */
	assert_string_equal(sb.argv[10], "--wrap");
	assert_null(sb.argv[12]);
}

static void warned(void *arg, const char *msg)
{
	snprintf(arg, 200, "%s", msg);
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_result_dir(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_slurm_sweep_XXXXXX", err[4400], said[200] = "";
	assert_non_null(mkdtemp(dir));
	struct sweep_job *jobs = NULL;
	size_t n = 0;
	assert_int_equal(sweep_jobs_from_dir(dir, &jobs, &n, warned, said, err, sizeof(err)), EXIT_NOINPUT);
	assert_int_equal(sweep_dir_make(dir, err, sizeof(err)), 0);
	assert_int_equal(sweep_dir_make(dir, err, sizeof(err)), 0); /* there already: fine */
	assert_int_equal(sweep_jobs_from_dir(dir, &jobs, &n, warned, said, err, sizeof(err)), EXIT_NOINPUT);
	assert_non_null(strstr(err, "no node result (NODE.json) in"));
	put(dir, "nodes/n2.json", "{}");
	put(dir, "nodes/n1.json", "{}");
	put(dir, "nodes/a,b.json", "{}"); /* not one node's name: skipped, said */
	put(dir, "logs/n1.out", "first\nlast line\n\n");
	assert_int_equal(sweep_jobs_from_dir(dir, &jobs, &n, warned, said, err, sizeof(err)), EXIT_OK);
	assert_int_equal(n, 2);
	assert_string_equal(jobs[0].node, "n1"); /* sorted */
	assert_string_equal(jobs[1].node, "n2");
	assert_int_equal(jobs[0].state, SWEEP_JOB_DONE);
	assert_non_null(strstr(said, "not a node's name"));
	assert_true(sweep_result_exists(dir, "n1"));
	char tail[64];
	sweep_log_tail(dir, "n1", tail, sizeof(tail));
	assert_string_equal(tail, "last line");
	sweep_log_tail(dir, "n2", tail, sizeof(tail));
	assert_string_equal(tail, "");
	sweep_results_forget(dir, jobs, n);
	assert_false(sweep_result_exists(dir, "n1"));
	assert_false(sweep_result_exists(dir, "n2"));
	free(jobs);
	struct fleet f;
	char path[600];
	snprintf(path, sizeof(path), "%s/none.json", dir);
	assert_int_equal(sweep_fleet_load(path, &f, err, sizeof(err)), EXIT_NOINPUT);
	put(dir, "bad.json", "[1]");
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	assert_int_equal(sweep_fleet_load(path, &f, err, sizeof(err)), EXIT_DATAERR);
	assert_non_null(strstr(err, "bad.json': "));
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_submitted),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_timeout_counts),
		cmocka_unit_test(test_sbatch_argv),
		cmocka_unit_test(test_result_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
