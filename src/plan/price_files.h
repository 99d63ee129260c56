/* SPDX-License-Identifier: Apache-2.0 */
/*
 * price_files.h - reading price tables from disk: one file (--prices FILE) or every
 * *.json file of a folder (the shipped data/prices/, one file per provider).
 *
 * Kept apart from plan.h, whose functions do no I/O. These read files but print
 * nothing: they return a status and a one-line message naming the file.
 */
#ifndef GPUCTL_PLAN_PRICE_FILES_H
#define GPUCTL_PLAN_PRICE_FILES_H

#include <stddef.h>

#include "plan.h"

enum plan_prices_status {
	PRICES_OK = 0,
	PRICES_NOINPUT,   /* a file or folder that cannot be read, or a folder without *.json */
	PRICES_BADDATA,   /* a file that is not a valid price table */
	PRICES_NOMEM,
};

/* Appends the rows of the price file at path to *pr (which may already hold rows).
 * On error *pr is unchanged and err says "'<path>': <why>". */
enum plan_prices_status plan_prices_load_file(struct plan_prices *pr, const char *path, char *err,
					      size_t errlen);

/* Appends the rows of every regular "*.json" file in dir (names starting with '.' are
 * skipped), in byte order of their names, so that the result does not depend on the
 * order readdir returns. *files (may be NULL) gets the number of files read. A folder
 * without any *.json file is PRICES_NOINPUT. On error *pr keeps the rows of the files
 * read before the failing one; the caller frees it either way. */
enum plan_prices_status plan_prices_load_dir(struct plan_prices *pr, const char *dir, size_t *files, char *err,
					     size_t errlen);

/* The shipped table: every *.json file of the data folder prices/, from the
 * first place that has it (core/data_path.h: env_dir, the installed copy, the
 * one compiled in), in byte order of their names, as plan_prices_load_dir. */
enum plan_prices_status plan_prices_load_default(struct plan_prices *pr, const char *env_dir, size_t *files,
						 char *err, size_t errlen);

#endif
