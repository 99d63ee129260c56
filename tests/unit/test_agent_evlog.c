/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_evlog.c - the agent's log lines (agent/evlog.h): a GPU that stops
 * answering and comes back, XIDs named from the catalog, jobs that start and end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/evlog.h"

struct lines {
	unsigned n;
	char l[8][EVLOG_LINE];
};

static void keep(void *arg, const char *line)
{
	struct lines *L = arg;
	assert_true(L->n < 8);
	snprintf(L->l[L->n++], EVLOG_LINE, "%s", line);
}

static void test_gpus(void **state)
{
	(void)state;
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	struct evlog *st = calloc(1, sizeof(*st));
	struct health_rules *rules = calloc(1, sizeof(*rules));
	assert_non_null(s);
	assert_non_null(st);
	assert_non_null(rules);
	rules->nxids = 1;
	rules->xids[0].code = 79;
	snprintf(rules->xids[0].name, sizeof(rules->xids[0].name), "GPU_HAS_FALLEN_OFF_THE_BUS");
	snprintf(rules->xids[0].meaning, sizeof(rules->xids[0].meaning), "GPU has fallen off the bus");
	s->n = 3;
	for (unsigned g = 0; g < 3; g++)
		s->gpu[g].up = true;
	s->gpu[1].st.pci_bus_id = (strv){ "00000000:18:00.0", VAL_OK };
	/* an XID from before the first look is the baseline; GPU 2 down at start is said once */
	s->gpu[0].nxid = 1;
	s->gpu[0].xid[0].code = 48;
	s->gpu[0].xid[0].count = 2;
	s->gpu[2].up = false;
	snprintf(s->gpu[2].last_error, sizeof(s->gpu[2].last_error), "GPU is lost");
	struct lines L = { 0 };
	assert_int_equal(evlog_gpus(st, s, rules, keep, &L), 1);
	assert_string_equal(L.l[0], "GPU 2 is not answering: GPU is lost");
	/* nothing changed: nothing said (GPU 2 still down is not said again) */
	L.n = 0;
	assert_int_equal(evlog_gpus(st, s, rules, keep, &L), 0);
	/* GPU 1 falls off the bus with XID 79; GPU 0's XID 48 once more (not in the catalog) */
	s->gpu[1].up = false;
	snprintf(s->gpu[1].last_error, sizeof(s->gpu[1].last_error), "GPU is lost");
	s->gpu[1].nxid = 1;
	s->gpu[1].xid[0].code = 79;
	s->gpu[1].xid[0].count = 1;
	s->gpu[0].xid[0].count = 3;
	assert_int_equal(evlog_gpus(st, s, rules, keep, &L), 3);
	assert_string_equal(L.l[0], "GPU 0: XID 48, 1 new, 3 in all");
	assert_string_equal(L.l[1], "GPU 1 (00000000:18:00.0) stopped answering: GPU is lost");
	assert_string_equal(L.l[2], "GPU 1 (00000000:18:00.0): XID 79 (GPU_HAS_FALLEN_OFF_THE_BUS: GPU has fallen "
				    "off the bus), 1 new, 1 in all");
	/* both come back */
	L.n = 0;
	s->gpu[1].up = s->gpu[2].up = true;
	assert_int_equal(evlog_gpus(st, s, NULL, keep, &L), 2);
	assert_string_equal(L.l[0], "GPU 1 (00000000:18:00.0) answers again");
	assert_string_equal(L.l[1], "GPU 2 answers again");
	/* without the catalog, an XID is its number */
	L.n = 0;
	s->gpu[1].xid[0].count = 4;
	assert_int_equal(evlog_gpus(st, s, NULL, keep, &L), 1);
	assert_string_equal(L.l[0], "GPU 1 (00000000:18:00.0): XID 79, 3 new, 4 in all");
	free(rules);
	free(st);
	free(s);
}

static void test_jobs(void **state)
{
	(void)state;
	char line[EVLOG_LINE];
	struct evlog_job j = { 12, "alice", "train", "running", 0x3, -1, -1, -1, 0, "running" };
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice: train) started on GPUs 0,1");
	j.gpus = 1u << 5;
	j.name = "";
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice) started on GPU 5");
	j.gpus = 0;
	j.mig_gpu = 3;
	j.mig_gi = 2;
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice) started on GPU 3, MIG instance 2");
	j.name = "train";
	j.state = "failed";
	j.exit_code = 3;
	j.reason = "exited with status 3";
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice: train) ended: failed, exit 3 (exited with status 3)");
	j.state = "cancelled";
	j.exit_code = -1;
	j.exit_signal = 15;
	j.reason = "";
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice: train) ended: cancelled, signal 15");
	j.state = "done";
	j.exit_signal = 0;
	j.exit_code = 0;
	j.reason = "done";
	evlog_job_line(&j, line, sizeof(line));
	assert_string_equal(line, "job 12 (alice: train) ended: done, exit 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
