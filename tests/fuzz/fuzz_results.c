/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_results.c - libFuzzer target for the bench results-file parser
 * (src/bench/results_file.c): any input must parse or fail with a message,
 * and whatever parses must write out and parse again to the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/results_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bench_run run;
	char err[256];
	if (bench_results_parse(&run, (const char *)data, size, err, sizeof(err)) != 0) {
		if (!err[0])
			abort(); /* a failure always says why */
		return 0;
	}
	char *text = bench_results_to_json(&run);
	if (text) {
		struct bench_run again;
		if (bench_results_parse(&again, text, strlen(text), err, sizeof(err)) != 0)
			abort(); /* what we write, we read */
		char *text2 = bench_results_to_json(&again);
		if (!text2 || strcmp(text, text2) != 0)
			abort();
		free(text2);
		bench_run_free(&again);
	}
	free(text);
	bench_run_free(&run);
	return 0;
}
