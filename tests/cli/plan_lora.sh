#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plan_lora.sh - `gpuctl plan train --lora-rank R [--qlora]` (docs/plan.md "LoRA and
# QLoRA"): the model states of Llama-3-8B at rank 16 as computed by hand in
# tests/unit/test_plan_lora.c, in text and JSON, and the refusals (exit 64).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/plan_lora.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3

expect_exit 0 "$GPUCTL" plan train --model llama-3-8b --lora-rank 16
out_has "^LoRA rank 16: 41.94 M trainable parameters"
out_has "model states              16.73 GB"
out_has "not yet checked against a measured run"
expect_exit 0 "$GPUCTL" plan train --model llama-3-8b --lora-rank 16 --qlora --json
check "qlora json" python3 - "$out" <<'PY'
import json, sys
l = json.loads(sys.argv[1])["lora"]
assert l["rank"] == 16 and l["qlora"] is True and l["measured"] is False, l
assert l["adapter_params"] == 41943040, l
assert l["base_bytes"] == 3600416768 + 2101878784, l
assert l["model_states_bytes"] == 5702295552 + 41943040 * 16, l
PY
# without --lora-rank: no lora object
expect_exit 0 "$GPUCTL" plan train --model llama-3-8b --json
grep -q '"lora"' <<<"$out" && fail "plan train without --lora-rank has a lora object"

expect_exit 64 "$GPUCTL" plan train --model llama-3-8b --qlora
err_has "gpuctl plan train: --qlora needs --lora-rank R"
expect_exit 64 "$GPUCTL" plan train --params 7B --lora-rank 8
err_has "--lora-rank needs the model's architecture"
expect_exit 64 "$GPUCTL" plan train --model llama-3-8b --lora-rank 0
finish
