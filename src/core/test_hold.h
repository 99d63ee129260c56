/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hold.h - test-only hooks that wedge a thread on purpose, so that a CLI
 * test can show what the program does when that thread never comes back
 * (tests/cli/agent_stop.sh: the agent's stop is bounded whatever its threads
 * do). Off unless the test sets the variable; nothing else sets them.
 */
#ifndef GPUCTL_CORE_TEST_HOLD_H
#define GPUCTL_CORE_TEST_HOLD_H

/* With $ENV naming a file (created if missing): takes an exclusive flock on
 * it and lets it go at once. A test that holds that lock (flock PATH ...)
 * wedges the caller in a real lock wait until it lets go; the caller then
 * creates PATH.waiting before it waits, so the test knows it got there.
 * Without $ENV: nothing. */
void test_hold(const char *env);

#endif
