/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_monparse.c - libFuzzer target for the small parsers of dmon and top:
 * -s GROUPS / --columns LIST (moncol_select) and /proc/PID/stat lines
 * (proc_stat_parse); -d is a duration, fuzzed in fuzz_options (core/units.h).
 * The input is split at the first two newlines into the three strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "view/moncol.h"
#include "core/proc_stat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *groups = buf, *columns = strchr(buf, '\n'), *rest = NULL;
	if (columns) {
		*columns++ = '\0';
		rest = strchr(columns, '\n');
		if (rest)
			*rest++ = '\0';
	}
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[256];
	int n = moncol_select(*groups ? groups : NULL, columns, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	if (n > MONCOL_MAX_SELECTED || (n < 0 && memchr(err, '\n', strnlen(err, sizeof(err)))))
		abort();
	if (n > 0)
		moncol_sampler_groups(cols, (unsigned)n);
	struct proc_stat ps;
	if (proc_stat_parse(rest ? rest : buf, &ps) == 0 && ps.state == '\0')
		abort(); /* a parsed line has a state */
	free(buf);
	return 0;
}
