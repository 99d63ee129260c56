/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h - the pool's durable state: SQLite in WAL mode (jobs, accounting).
 *
 * Every change of a job's state is one committed transaction before the
 * agent acts on it or answers, so a kill -9 of the agent loses nothing it
 * had acknowledged (synchronous=NORMAL in WAL mode: durable across process
 * crashes and clean reboots; a power cut can lose the last commits, see
 * docs/pool.md). Functions return 0 or -1 with a one-line message in the
 * store (store_error()).
 */
#ifndef GPUCTL_POOL_STORE_H
#define GPUCTL_POOL_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "pool/acct.h"
#include "pool/job.h"

struct store;

int store_open(struct store **out, const char *path, char *err, size_t errlen);
void store_close(struct store *st);
const char *store_error(const struct store *st);

/* Inserts a new job and sets j->id (ids are never reused). */
int store_insert(struct store *st, struct pool_job *j);
/* Writes every column of j (by id). */
int store_update(struct store *st, const struct pool_job *j);
/* 1 found (into *out, spec_json on the heap), 0 not found, -1 error. */
int store_get(struct store *st, uint64_t id, struct pool_job *out);

/* Calls cb for each job: active (pending/starting/running) in id order, or
 * with history the newest first, at most limit (0: all). uid UINT32_MAX: all
 * users. The job passed is the callback's to keep (spec_json included); a
 * callback returning non-zero stops the walk. */
typedef int (*store_job_cb)(void *arg, struct pool_job *j);
int store_walk(struct store *st, bool history, uint32_t uid, unsigned limit, store_job_cb cb, void *arg);

int store_put_acct(struct store *st, uint64_t job, const struct acct_summary *s);
/* Up to max rows of a job's accounting. */
int store_get_acct(struct store *st, uint64_t job, struct acct_summary *out, unsigned max, unsigned *n);

#endif
