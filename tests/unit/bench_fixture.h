/* SPDX-License-Identifier: Apache-2.0 */
/* bench_fixture.h - for unit tests (include after cmocka.h): a saved bench run from
 * tests/data/ and the catalog, loaded or the test fails. */
#ifndef GPUCTL_TEST_BENCH_FIXTURE_H
#define GPUCTL_TEST_BENCH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "bench/results_file.h"
#include "core/catalog.h"

/* tests/data/<file> into *run, the shipped catalog into *cat; returns the catalog's H200 SXM. */
static inline const struct cat_gpu *bench_fixture_load(const char *file, struct bench_run *run, struct catalog *cat)
{
	char path[4096], err[512];
	const char *dir = getenv("GPUCTL_TEST_DIR");
	snprintf(path, sizeof(path), "%s/data/%s", dir ? dir : "tests", file);
	if (bench_results_load(run, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	if (catalog_load_default(cat, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const struct cat_gpu *h200 = catalog_find(cat, "H200 SXM");
	assert_non_null(h200);
	return h200;
}

#endif
