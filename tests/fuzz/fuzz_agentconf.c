/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_agentconf.c - the agent's configuration file parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/agent_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config c;
	char err[256];
	agent_config_default(&c);
	if (agent_config_parse(&c, (const char *)data, size, "fuzz", err, sizeof(err)) != 0) {
		/* an error is one line */
		if (!err[0] || strchr(err, '\n'))
			__builtin_trap();
		return 0;
	}
	/* what parsed is within bounds */
	if (c.port > 65535 || c.nlabels > METRICS_MAX_LABELS || !c.interval_ns || !c.groups)
		__builtin_trap();
	/* the idle allocation settings: a percent in (0, 100], a window of 1 s to 30 days or off */
	if (c.pool_idle_threshold_set && !(c.pool_idle_threshold_pct > 0 && c.pool_idle_threshold_pct <= 100))
		__builtin_trap();
	if (c.pool_idle_window_ns && c.pool_idle_window_ns != UINT64_MAX &&
	    (c.pool_idle_window_ns < 1000000000ull || c.pool_idle_window_ns > 30ull * 86400 * 1000000000ull))
		__builtin_trap();
	for (unsigned i = 0; i < c.nlabels; i++)
		if (!metrics_label_name_ok(c.labels[i].key))
			__builtin_trap();
	return 0;
}
