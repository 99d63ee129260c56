/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pooljscan.c - the tree-free reader of the agent's answers (jscan.h,
 * queue_view.h) on arbitrary bytes, against jansson: no crash, the queue
 * reader accepts exactly the objects jansson loads, and what jscan_pretty
 * re-indents is byte for byte what `queue --json` printed through jansson. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jscan.h"
#include "pool/queue_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	/* jansson is no reference for a NUL byte outside a string: it loads
	 * {"r":[1.5<NUL>,2]} (found by this target in CI), which is not JSON and
	 * which jscan refuses; such inputs must only not crash */
	bool nul = memchr(data, 0, size) != NULL;
	json_t *doc = json_loadb(text, size, 0, NULL);
	struct queue_view v;
	int vr = queue_view_read(text, size, &v);
	if (!nul && (doc && json_is_object(doc)) != (vr == 0))
		__builtin_trap();
	if (vr == 0 && v.n && !v.rows)
		__builtin_trap();
	queue_view_free(&v);

	struct abuf out;
	abuf_init(&out);
	enum jscan_tok dropped;
	if (jscan_pretty(text, size, "ok", &out, &dropped) == 0 && !nul) {
		if (!doc)
			__builtin_trap();
		json_object_del(doc, "ok");
		char *want = json_dumps(doc, JSON_INDENT(2));
		size_t n = strlen(want);
		if (out.len != n + 1 || memcmp(out.p, want, n) != 0 || out.p[n] != '\n')
			__builtin_trap();
		free(want);
	}
	abuf_free(&out);
	json_decref(doc);
	return 0;
}
