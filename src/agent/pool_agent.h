/* SPDX-License-Identifier: Apache-2.0 */
/* pool_agent.h - the calls the agent makes into the pool (pool_agent.c). */
#ifndef GPUCTL_POOL_AGENT_H
#define GPUCTL_POOL_AGENT_H

#include <stdbool.h>
#include <stddef.h>

struct agent;
struct agent_config;

/* A pool setting: 0 set, -1 bad value (message), 1 not a pool key. */
int pool_agent_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen);
/* Starts the pool when the configuration enables it (a->cfg.pool). 0 or -1 with a message. */
int pool_agent_start(struct agent *a, char *err, size_t errlen);
void pool_agent_stop(struct agent *a);
/* The agent's stop (agent_stop_noted): the pool's state first (pool_flush),
 * then its threads, note(arg, WHAT) before each wait; holder: who holds the
 * pool's lock (pool_lock_holder), "" without a pool. */
void pool_agent_flush(struct agent *a);
void pool_agent_stop_noted(struct agent *a, void (*note)(void *arg, const char *what), void *arg);
const char *pool_agent_lock_holder(struct agent *a);
struct pool_status;
/* The pool's status; false when the agent runs no pool. */
bool pool_agent_status(struct agent *a, struct pool_status *st);
/* /api/v1/pool's document (pool_queue_doc) into *doc, which the caller
 * frees (NULL when out of memory); false when the agent runs no pool. */
bool pool_agent_queue(struct agent *a, char **doc);

#endif
