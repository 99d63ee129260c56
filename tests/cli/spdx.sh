#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spdx.sh - every source file says its license, Apache-2.0 (LICENSE), in an
# SPDX-License-Identifier line (issue 37): scripts/spdx.sh --check over the
# source tree; and the script itself, on a small tree: it finds each kind of
# source file without the line, passes over data, and --fix puts the line first
# (after #!, after <!DOCTYPE html>) without touching the header below it.
#
# Run by CTest. By hand:
#   GPUCTL=build/gpuctl bash tests/cli/spdx.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
spdx="$src/scripts/spdx.sh"

"$spdx" --check "$src" >"$tmp/tree.out" 2>&1 ||
	fail "source files without an SPDX-License-Identifier line (scripts/spdx.sh --fix adds it): $(cat "$tmp/tree.out")"
checks=$((checks + 1))

t="$tmp/t"
mkdir -p "$t/src" "$t/web" "$t/data" "$t/tests/fuzz/corpus/x" "$t/bench/runs/r"
printf '/* a.c - a thing */\nint a;\n' >"$t/src/a.c"
printf '#!/usr/bin/env bash\n# b.sh - b\necho b\n' >"$t/b.sh"
printf '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(1)\n' >"$t/tool"
printf 'cmake_minimum_required(VERSION 3.20)\n' >"$t/CMakeLists.txt"
printf '<!DOCTYPE html>\n<html></html>\n' >"$t/web/index.html"
printf '"use strict";\n' >"$t/web/app.js"
printf '/* SPDX-License-Identifier: Apache-2.0 */\n/* done.h */\n' >"$t/src/done.h"
printf '{"a": 1}\n' >"$t/data/x.json"
printf 'corpus\n' >"$t/tests/fuzz/corpus/x/a.c"
printf '#!/bin/sh\n' >"$t/bench/runs/r/loop.sh"
"$spdx" --check "$t" >"$tmp/t.out" 2>&1
check "--check: a tree with files lacking the line fails" [ $? = 1 ]
sort "$tmp/t.out" >"$tmp/t.sorted"
printf 'no SPDX-License-Identifier line: %s\n' CMakeLists.txt b.sh src/a.c tool web/app.js web/index.html | sort >"$tmp/t.want"
check "--check: names exactly the source files without it" diff "$tmp/t.want" "$tmp/t.sorted"
"$spdx" --fix "$t" >/dev/null
"$spdx" --fix "$t" >/dev/null # twice: nothing added the second time
check "--fix: then --check passes" "$spdx" --check "$t"
check "C: the line first, the header comment below" \
	diff <(printf '/* SPDX-License-Identifier: Apache-2.0 */\n/* a.c - a thing */\nint a;\n') "$t/src/a.c"
check "shell: after #!" diff <(printf '#!/usr/bin/env bash\n# SPDX-License-Identifier: Apache-2.0\n# b.sh - b\necho b\n') "$t/b.sh"
check "python: after #! and the coding line" \
	diff <(printf '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# SPDX-License-Identifier: Apache-2.0\nprint(1)\n') "$t/tool"
check "CMake" diff <(printf '# SPDX-License-Identifier: Apache-2.0\ncmake_minimum_required(VERSION 3.20)\n') "$t/CMakeLists.txt"
check "html: after the doctype" \
	diff <(printf '<!DOCTYPE html>\n<!-- SPDX-License-Identifier: Apache-2.0 -->\n<html></html>\n') "$t/web/index.html"
check "js" diff <(printf '// SPDX-License-Identifier: Apache-2.0\n"use strict";\n') "$t/web/app.js"
check "a file that has it is left alone" diff <(printf '/* SPDX-License-Identifier: Apache-2.0 */\n/* done.h */\n') "$t/src/done.h"
check "data, corpora and recorded runs are not source" \
	diff <(printf '{"a": 1}\ncorpus\n#!/bin/sh\n') <(cat "$t/data/x.json" "$t/tests/fuzz/corpus/x/a.c" "$t/bench/runs/r/loop.sh")
finish
