#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plan.sh - `gpuctl plan` end to end: the guide's C10 arithmetic from the shipped price
# table, the published checks through the CLI (DeepSpeed 112 GB / 15.75 GB, Llama-3-70B
# KV cache), the JSON documented in docs/plan.md, MIG layouts and the one-line errors
# with their exit codes. No GPU needed.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/plan.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
jqe() { jq -e "$@" >/dev/null; } # a jq condition, quietly
# expect_error CODE PATTERN ARGS...: exit code CODE, exactly one line on stderr matching PATTERN
expect_error() {
	local code="$1" pat="$2"; shift 2
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = "$code" ] || { fail "plan $*: exit $rc, wanted $code"; return; }
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "plan $*: error is not one line: $(cat "$tmp/err")"
	grep -q -- "$pat" "$tmp/err" || fail "plan $*: error '$(cat "$tmp/err")' lacks '$pat'"
}

# C10: 1x V100 72 h = $66.96, 8x A100 12 h = $393.31, from the price rows
"$GPUCTL" plan cost --instance 'guide-2023 1x V100' --hours 72 >"$tmp/c1" 2>&1
check "C10 V100: exit 0" [ $? = 0 ]
check "C10 V100 72 h = 66.96 USD" grep -q '66.96 USD' "$tmp/c1"
"$GPUCTL" plan cost --instance 'p4d.24xlarge' --hours 12 >"$tmp/c2" 2>&1
check "C10 p4d 12 h = 393.31 USD" grep -q '393.31 USD' "$tmp/c2"
check "C10 p4d 1-year 12 h = 235.99 USD" grep -q '235.99 USD' "$tmp/c2"
check "today's p4d on-demand 12 h = 263.52 USD" grep -q '263.52 USD' "$tmp/c2"
"$GPUCTL" plan cost --instance 'p4d.24xlarge (2023)' --hours 12 --json >"$tmp/c3"
check "cost JSON: on_demand 393.312" [ "$(jq '.cost[0].on_demand' "$tmp/c3")" = "393.312" ]
check "cost JSON: spot null, not 0" [ "$(jq '.cost[0].spot' "$tmp/c3")" = "null" ]

# the default table is every data/prices/*.json: AWS, Azure and Google Cloud rows, each cited and dated
"$GPUCTL" plan cost --hours 1 --json >"$tmp/c4"
check "default prices: all three providers (and the guide's unnamed one)" \
	[ "$(jq -c '[.cost[].provider] | unique' "$tmp/c4")" = '["aws","azure","gcp","unnamed"]' ]
check "default prices: every row has a source and a date" jqe '.cost | length > 20 and all(.source != "" and .date != "")' "$tmp/c4"
# a row with all four prices: a3-highgpu-8g (8x H100), 100 h; spot with the default 10% more hours
"$GPUCTL" plan cost --instance a3-highgpu-8g --hours 100 >"$tmp/c5" 2>&1
check "a3-highgpu-8g: exit 0" [ $? = 0 ]
check "a3-highgpu-8g: on-demand, 1-year, 3-year and spot listed" \
	grep -Eq '^a3-highgpu-8g +1 x 8 +H100 SXM +us-central1 +2024-11-07 +8849\.00 USD +6138\.37 USD +3886\.44 USD +3915\.23 USD +n/a *$' "$tmp/c5"
"$GPUCTL" plan cost --instance a3-highgpu-8g --hours 100 --json >"$tmp/c6"
check "cost JSON: four prices for a3-highgpu-8g" jqe '.cost | length == 1 and (.[0] | .on_demand == 8849 and
	(.reserved_1y - 6138.3672 | fabs) < 1e-6 and (.reserved_3y - 3886.4381 | fabs) < 1e-6 and
	(.spot - 3915.2311 | fabs) < 1e-6 and (.source | test("pricing.yml")))' "$tmp/c6"
"$GPUCTL" plan cost --gpu 'A100 SXM 80GB' --hours 1 --json >"$tmp/c7"
check "--gpu 'A100 SXM 80GB': AWS, Azure and GCP rows" \
	[ "$(jq -c '[.cost[].instance] | sort' "$tmp/c7")" = '["Standard_ND96amsr_A100_v4","a2-ultragpu-8g","p4de.24xlarge (before 2025-06)"]' ]
# a broken file among the shipped ones is named (exit 65); the other files are not enough
mkdir -p "$tmp/data/prices"
cp "$GPUCTL_DATA_DIR"/prices/*.json "$tmp/data/prices/"
echo '{"rows": 1}' >"$tmp/data/prices/zz-broken.json"
GPUCTL_DATA_DIR="$tmp/data" expect_error 65 "zz-broken.json.*missing array 'rows'" plan cost --hours 1

# published checks through the CLI
"$GPUCTL" plan train --params 7B --framework deepspeed --json >"$tmp/t1"
check "7B mixed AdamW unsharded = 112e9 bytes" \
	[ "$(jq '.memory_per_gpu | .weights_bytes + .gradients_bytes + .optimizer_bytes' "$tmp/t1")" = "112000000000" ]
check "size-only model: activations null" [ "$(jq '.memory_per_gpu.activations_bytes' "$tmp/t1")" = "null" ]
# --cuda-context is a size in bytes: K/M/G are powers of 1024 (docs/units.md), as bench --sizes
"$GPUCTL" plan train --params 7B --cuda-context 1G --json >"$tmp/t1c"
check "--cuda-context 1G = 1073741824 bytes" [ "$(jq '.memory_per_gpu.cuda_context_bytes' "$tmp/t1c")" = "1073741824" ]
expect_error 64 "option '--cuda-context': size '2T' out of range (0 to 1T)" plan train --params 7B --cuda-context 2T
"$GPUCTL" plan train --params 7B --framework deepspeed --zero 3 --dp 8 --json >"$tmp/t2"
check "7B ZeRO-3 on 8 GPUs = 15.75e9 bytes per GPU" \
	[ "$(jq '.memory_per_gpu | .weights_bytes + .gradients_bytes + .optimizer_bytes' "$tmp/t2")" = "15750000000" ]
check "size-only ZeRO-3: the gathered layer unknown, so what sets the peak is null" \
	jqe '.memory_per_gpu | .peak_term == null and .peak_parts.weights_bytes == null and .peak_parts.optimizer_bytes > 0' "$tmp/t2"
"$GPUCTL" plan serve --model llama-3-70b --tp 8 --context 8192 >"$tmp/s1"
check "Llama-3-70B KV cache 327680 bytes/token" grep -q 'KV cache per token: *327680 bytes (40960 bytes per GPU)' "$tmp/s1"
"$GPUCTL" plan serve --model llama-3-70b --tp 8 --context 8192 --batch 16 --json >"$tmp/s2"
check "serve JSON: kv per token" [ "$(jq '.per_gpu.kv_bytes_per_token' "$tmp/s2")" = "327680" ]
check "serve JSON: 16 sequences of 8192 x 40960" \
	[ "$(jq '.per_gpu.kv_cache_bytes' "$tmp/s2")" = "$(jq -n '16*8192*40960 | . * 1.0')" ]
check "serve JSON: decode bound present" jqe '.per_gpu.decode_tokens_per_s_bound > 0' "$tmp/s2"
check "serve JSON: 16 sequences fit over 8 GPUs" jqe '.fit.fits and .fit.sequences_asked == 16' "$tmp/s2"
# issue 40: the weights fitting is not serving; on one H200 Llama-3-70B in BF16 leaves no room
# for one 4096-token sequence at the 90% kept, and two GPUs would hold it
"$GPUCTL" plan serve --model llama-3-70b --gpu 'H200 SXM' >"$tmp/s4"
check "serve 70B on one H200: does not fit, tp 2 would" \
	grep -qE '^verdict \(one sequence\): +does not fit \(0 x 4096-token sequences\); would: tp 2 \([0-9]+ sequences\)$' "$tmp/s4"
"$GPUCTL" plan serve --model llama-3-70b --gpu 'H200 SXM' --json >"$tmp/s4j"
check "serve 70B on one H200, JSON: fits false, tp_alt 2" \
	jqe '(.fit.fits | not) and .fit.sequences_that_fit == 0 and .fit.tp_alt == 2 and .fit.max_context == null' "$tmp/s4j"
"$GPUCTL" plan serve --model llama-3-70b --tp 2 --batch 120 --json >"$tmp/s5"
check "serve: a batch larger than fits says what would (fewer, shorter, FP8 KV, more GPUs)" \
	jqe '(.fit.fits | not) and .fit.sequences_that_fit < 120 and .fit.max_context < 4096 and .fit.kv_alt == "fp8|int8"
		and .fit.kv_alt_sequences >= 120 and .fit.tp_alt == 4' "$tmp/s5"

# measured cases: GPT-2 medium, BF16 autocast, seq 1024, micro-batch 8: 27.37 GB from
# transformers (the default framework, vocabulary 50304), 17.29 GB in plain torch.nn
"$GPUCTL" plan train --model gpt2-medium --vocab 50304 --seq 1024 --micro-batch 8 --max-pos 1024 \
	--gpu 'H200 SXM' --json >"$tmp/t3"
check "gpt2-medium (transformers) peak within 5% of 27.37 GB" \
	jqe '.memory_per_gpu.peak_allocated_bytes | . > 27.37e9*0.97 and . < 27.37e9*1.05' "$tmp/t3"
"$GPUCTL" plan train --model gpt2-medium --framework pytorch --seq 1024 --micro-batch 8 --max-pos 1024 --json >"$tmp/t3p"
check "gpt2-medium (torch.nn) peak within 10% of 17.29 GB" \
	jqe '.memory_per_gpu.peak_allocated_bytes | . > 17.29e9*0.9 and . < 17.29e9*1.1' "$tmp/t3p"
"$GPUCTL" plan train --model llama-3-8b --precision bf16-pure --optimizer adamw-fused --checkpointing full \
	--seq 2048 --micro-batch 4 --explain >"$tmp/t3e"
check "train --explain (transformers): each term with its formula" grep -q 'log-probabilities.*4 B x 8192 tokens x vocab 128256' "$tmp/t3e"
check "train --explain (transformers): the peak phase named" grep -q 'backward end.*<- the peak' "$tmp/t3e"
# which term sets the peak (issue 34): a Qwen2-0.5B shape (vocabulary 151,936, tied) with
# checkpointing, measured 37.70 GB at the start of the backward, 30 GB of it the logits
qwen=(--layers 24 --hidden 896 --heads 14 --kv-heads 2 --ffn 4864 --vocab 151936 --tied --gated-mlp
	--seq 4096 --micro-batch 4 --checkpointing full)
"$GPUCTL" plan train "${qwen[@]}" >"$tmp/t9"
check "train: the term that sets the peak named" grep -q 'peak allocated (backward start, set by logits)' "$tmp/t9"
check "train: the peak by cause" grep -q '^peak 37.70 GB: set by logits; it holds weights .*logits 29.87 GB, recompute' "$tmp/t9"
"$GPUCTL" plan train "${qwen[@]}" --json >"$tmp/t9j"
check "train JSON: peak_term and the parts summing to the peak" jqe '.memory_per_gpu |
	.peak_term == "logits" and (.peak_parts | keys == ["activations_bytes", "grads_bytes", "logits_bytes",
	"optimizer_bytes", "recompute_bytes", "weights_bytes"]) and
	(([.peak_parts[]] | add) - .peak_allocated_bytes | fabs) < 16' "$tmp/t9j"
# the 3B Llama shape of the same run, peak in the optimizer step (foreach AdamW's temporary)
"$GPUCTL" plan train --layers 28 --hidden 3072 --heads 24 --kv-heads 8 --ffn 8192 --vocab 128256 --tied \
	--gated-mlp --seq 4096 --checkpointing full --json >"$tmp/t10"
check "train JSON: a 3B model's step set by the optimizer (64.33 GB measured)" jqe '.memory_per_gpu |
	.peak_term == "optimizer" and .peak_phase == "optimizer step" and
	(.peak_allocated_bytes | . > 64.33e9*0.97 and . < 64.33e9*1.05)' "$tmp/t10"
expect_error 64 "pure 16-bit weights need --framework transformers" plan train --params 7B --framework pytorch --precision bf16-pure
"$GPUCTL" plan serve --model llama-3-8b --engine hf --batch 4 --context 4112 --json >"$tmp/s3"
check "serve --engine hf: prefill of the whole prompt (measured 20.2 GB peak)" \
	jqe '.config.engine == "hf" and (.per_gpu.peak_allocated_bytes | . > 20.2e9*0.97 and . < 20.2e9*1.05)' "$tmp/s3"
expect_error 64 "--engine must be one of hf, chunked" plan serve --model llama-3-8b --engine vllm
check "train JSON: H200 SXM fits" jqe '.gpus[] | select(.gpu == "H200 SXM") | .fits' "$tmp/t3"
check "train JSON: max micro-batch > 8" jqe '.max_micro_batch > 8' "$tmp/t3"
"$GPUCTL" plan train --model llama-2-70b --framework deepspeed --zero 3 --dp 64 --checkpointing full \
	--gpu 'H100 SXM' --tokens 2T --mfu 0.45 --explain >"$tmp/t4"
check "train: time line" grep -q '^time for 2T tokens' "$tmp/t4"
check "train: --explain shows the formulas" grep -q 'Korthikanti' "$tmp/t4"
check "train: cost table for H100 rows" grep -q 'p5.48xlarge (Capacity Block)' "$tmp/t4"

# the peak from a saved bench run: the GEMM BF16 figure of the results fixture
"$GPUCTL" plan train --model llama-2-7b --gpu 'H200 SXM' --tokens 100B \
	--bench-results "$here/../data/results-h200x2.json" --json >"$tmp/t5"
gemm=$(jq '[.results[] | select(.suite == "compute" and .test == "cublas" and .variant == "bf16") | .value.median][0]' \
	"$here/../data/results-h200x2.json")
check "bench results: the file's GEMM BF16 is the peak" \
	jqe --argjson g "$gemm" '.time.peak_from == "bench results" and (.time.peak_tflops_per_gpu - $g | fabs < 1e-6)' "$tmp/t5"
check "bench results: no train row, the GEMM x transformers' calibrated share of it" \
	jqe '.time.mfu == 0.1912 and .time.mfu_from == "calibrated" and .time.basis == "GEMM measured here, calibrated on H200 runs"' "$tmp/t5"
# no results file: the datasheet x the share calibrated on H200 runs, said (issue 40: at MFU 0.40
# the BF16 step was planned 35% under the measured one and the FP32 step 70% over); gpt2-small
# at 16 x 1024 in gpuctl's step: the measured 298,272 (bf16) and 50,685 (fp32) tokens/s within 15%
for pm in "bf16 298271.8" "fp32 50685.0"; do
	set -- $pm
	"$GPUCTL" plan train --model gpt2-small --framework gpuctl --precision "$1" --micro-batch 16 --seq 1024 \
		--gpu 'H200 SXM' --tokens 1B --json >"$tmp/tc-$1"
	check "no results: $1 time from the calibrated catalog, within 15% of the measured step" \
		jqe --argjson t "$2" '.time.basis == "catalog, calibrated on H200 runs" and .time.peak_from == "datasheet" and
			(.time.seconds / (1e9 / $t) - 1 | fabs < 0.15)' "$tmp/tc-$1"
	"$GPUCTL" plan train --model gpt2-small --framework gpuctl --precision "$1" --micro-batch 16 --seq 1024 \
		--gpu 'H200 SXM' --tokens 1B >"$tmp/tc-$1.txt"
	check "no results: $1 text says its basis" grep -q "^  basis: catalog, calibrated on H200 runs (gpuctl $1: " "$tmp/tc-$1.txt"
done
# a run with the train suite (one H200, 2026-12-01): gpt2-small at the measured step's
# 298,272 tokens/s (its MFU in the planner's FLOP counting, over the measured GEMM), for
# the framework the row measured (gpuctl's own step), in the plan's precision
"$GPUCTL" plan train --model gpt2-small --framework gpuctl --micro-batch 16 --seq 1024 --gpu 'H200 SXM' --tokens 1B \
	--bench-results "$here/../data/results-h200-train.json" --json >"$tmp/t6"
check "bench results: the measured step's MFU" \
	jqe '.time.mfu_from == "bench results (train 124M bf16)" and (.time.seconds - 1e9 / 298271.8 | fabs < 1)' "$tmp/t6"
"$GPUCTL" plan train --model gpt2-small --framework gpuctl --precision fp32 --micro-batch 16 --seq 1024 \
	--gpu 'H200 SXM' --tokens 1B --bench-results "$here/../data/results-h200-train.json" --json >"$tmp/t6b"
check "bench results: fp32 from the fp32 row over the fp32 GEMM" \
	jqe '.time.mfu_from == "bench results (train 124M fp32)" and (.time.peak_tflops_per_gpu - 49.75 | fabs < 0.01) and (.time.seconds - 1e9 / 50685.0 | fabs < 1)' "$tmp/t6b"
"$GPUCTL" plan train --model gpt2-small --micro-batch 16 --seq 1024 --gpu 'H200 SXM' --tokens 1B \
	--bench-results "$here/../data/results-h200-train.json" --json >"$tmp/t6c"
check "bench results: another framework takes its calibrated share of the GEMM and says why not the step" \
	jqe '.time.mfu_from == "calibrated" and .time.mfu == 0.1912 and (.time.bench_mfu_not_used | test("not transformers"))' "$tmp/t6c"
"$GPUCTL" plan train --model gpt2-small --gpu 'H200 SXM' --tokens 1B --mfu 0.5 \
	--bench-results "$here/../data/results-h200-train.json" --json >"$tmp/t7"
check "bench results: --mfu wins" jqe '.time.mfu == 0.5 and .time.mfu_from == "option"' "$tmp/t7"
echo '{"schema":"nope"}' >"$tmp/badbench.json"
expect_error 65 "badbench.json" plan train --model gpt2-small --gpu 'H200 SXM' --tokens 1B --bench-results "$tmp/badbench.json"
jq '.results |= map(select(.suite == "train"))' "$here/../data/results-h200-train.json" >"$tmp/trainonly.json"
expect_error 65 "no GEMM bf16 result and no training step for this plan" plan train --model gpt2-small --gpu 'H200 SXM' \
	--tokens 1B --bench-results "$tmp/trainonly.json"
"$GPUCTL" plan train --model gpt2-small --framework gpuctl --gpu 'H200 SXM' --tokens 1B \
	--bench-results "$tmp/trainonly.json" --json >"$tmp/t8"
check "bench results: train rows alone, over the datasheet peak" \
	jqe '.time.peak_from == "datasheet" and (.time.mfu_from | test("train 124M bf16"))' "$tmp/t8"

# MIG
"$GPUCTL" plan mig --gpu 'H200 SXM' --request 3x1g.18gb,1x3g.71gb >"$tmp/m1"
check "mig: layout exit 0" [ $? = 0 ]
check "mig: 3g at 0" grep -q '3g.71gb *start 0' "$tmp/m1"
check "mig: three 1g" [ "$(grep -c '1g.18gb *start' "$tmp/m1")" = 3 ]
# the commands that apply the layout: MIG mode, then every instance at its start, -C for the compute instances
check "mig: apply enables MIG" grep -qx '  nvidia-smi -i 0 -mig 1' "$tmp/m1"
check "mig: apply creates at the positions" \
	grep -qE '^  nvidia-smi mig -i 0 -cgi 3g\.71gb:0,1g\.18gb:[4-6],1g\.18gb:[4-6],1g\.18gb:[4-6] -C$' "$tmp/m1"
"$GPUCTL" plan mig --gpu 'H200 SXM' --request 2x2g.35gb,3g.71gb -i 5 --json >"$tmp/m4"
check "mig JSON: commands for GPU 5" [ "$(jq -r '.commands[1]' "$tmp/m4")" = 'nvidia-smi mig -i 5 -cgi 3g.71gb:4,2g.35gb:0,2g.35gb:2 -C' ]
check "mig JSON: enable for GPU 5" [ "$(jq -r '.commands[0]' "$tmp/m4")" = 'nvidia-smi -i 5 -mig 1' ]
"$GPUCTL" plan mig --gpu 'H200 SXM' --request 3x1g.18gb -i 64 >/dev/null 2>&1
check "mig: -i 64 is a usage error" [ $? = 64 ]
"$GPUCTL" plan mig --gpu 'H200 SXM' --request 2x4g.71gb >"$tmp/m2"
check "mig: no layout exits 1" [ $? = 1 ]
check "mig: says why" grep -q 'at most 1 fit on one H200 SXM' "$tmp/m2"
checks=$((checks + 1))
grep -q 'nvidia-smi mig' "$tmp/m2" && fail "mig: commands printed without a layout"
"$GPUCTL" plan mig --gpu 'A100 SXM 80GB' --json >"$tmp/m3"
"$GPUCTL" plan mig --gpu 'A100 SXM 80GB' --request 7x1g >/dev/null
check "C11: an A100 splits into 7 instances" [ $? = 0 ]
check "mig JSON: 7 positions for 1g.10gb" [ "$(jq '.profiles[] | select(.name=="1g.10gb") | .starts | length' "$tmp/m3")" = 7 ]

# errors: one line naming the field, documented exit codes
expect_error 64 "unknown GPU 'H300'" plan train --model llama-2-7b --gpu H300
expect_error 64 "option '--params': '-7B' is not a number from 0 to 1000T" plan train --params -7B
expect_error 64 "heads 7 do not divide hidden 4096" plan train --layers 32 --hidden 4096 --heads 7 --vocab 32000
expect_error 64 "micro-batch must be positive" plan train --model gpt2-small --micro-batch 0
expect_error 64 "unknown model 'gpt9'" plan serve --model gpt9
expect_error 64 "tp 3 does not divide heads 64" plan serve --model llama-3-70b --tp 3
expect_error 64 "unknown MIG profile '5g'" plan mig --gpu 'H200 SXM' --request 5g
expect_error 64 "'L40S' does not support MIG" plan mig --gpu L40S
expect_error 64 "unknown option '--frobnicate'" plan train --model gpt2-small --frobnicate
# the subcommand: one line when it is missing or unknown (cmd/help.c help_sub_find, shared by plan, slurm, cdi)
expect_error 64 "gpuctl plan: a subcommand is needed (train, serve, cost or mig); see 'gpuctl plan --help'" plan
expect_error 64 "gpuctl plan: unknown subcommand 'frob'; see 'gpuctl plan --help'" plan frob
printf '{"rows":[{"instance":"x","provider":"p","gpus":1,"gpu_model":"H100 SXM","region":"r","on_demand":1,"reserved_1y":null,"reserved_3y":null,"currency":"USD","source":"s","date":"2025"}]}' >"$tmp/bad.json"
expect_error 65 "missing column 'spot'" plan cost --hours 3 --prices "$tmp/bad.json"
expect_error 66 "cannot open" plan cost --hours 3 --prices "$tmp/none.json"

# a user price file adds rows; break-even from it
cat >"$tmp/mine.json" <<'EOF'
{"rows":[{"instance":"my-h200","provider":"me","gpus":8,"gpu_model":"H200 SXM","region":"eu","on_demand":30,
 "reserved_1y":20,"reserved_3y":15,"spot":12,"currency":"EUR","source":"contract","date":"2026-11"}]}
EOF
"$GPUCTL" plan cost --prices "$tmp/mine.json" --instance my-h200 --hours 100 --spot-overhead 20 --json >"$tmp/u1"
check "user prices: spot with 20% overhead" [ "$(jq '.cost[0].spot' "$tmp/u1")" = "1440" ]
"$GPUCTL" plan cost --prices "$tmp/mine.json" --instance my-h200 --buy 300000 --power-kw 10 --pue 1.5 \
	--kwh-price 0.2 --utilization 100 --rent-pricing 1-year --json >"$tmp/u2"
check "break-even: 300000 / (20 - 3) busy hours" \
	jqe '.breakeven.breakeven_busy_hours | . > 17647 and . < 17648' "$tmp/u2"


# a job that does not fit one GPU is not timed or priced, but told what would make it fit
"$GPUCTL" plan train --model llama-2-7b --gpu 'H100 SXM' --tokens 1B >"$tmp/nofit" 2>&1
check "no fit: exit 0" [ $? = 0 ]
check "no fit: micro-batch 0" grep -q '^largest micro-batch on H100 SXM: 0$' "$tmp/nofit"
check "no fit: says so" grep -q 'it does not fit one H100 SXM as given, so it has no time or cost' "$tmp/nofit"
check "no fit: 8-bit optimizer" grep -q '^  8-bit optimizer states (--optimizer adam8bit): micro-batch up to [1-9]' "$tmp/nofit"
check "no fit: ZeRO-3 over more GPUs" grep -qE '^  ZeRO-3 \(or FSDP\) shards over [2-9] GPUs \(--framework deepspeed --zero 3 --dp [2-9]\)' "$tmp/nofit"
checks=$((checks + 1))
grep -qE '^time for|USD' "$tmp/nofit" && fail "no fit: still timed or priced: $(grep -E '^time for|USD' "$tmp/nofit" | head -2)"
"$GPUCTL" plan train --model llama-2-7b --gpu 'H100 SXM' --tokens 1B --json >"$tmp/nofit.json"
check "no fit JSON: fits false, hints, no time, no cost" \
	[ "$(jq -c '[.fits, (.fit_hints | length > 0), .time, (.cost | length)]' "$tmp/nofit.json")" = '[false,true,null,0]' ]
# each hint, taken, fits: the 8-bit optimizer's flags give a micro-batch of 1 or more
"$GPUCTL" plan train --model llama-2-7b --gpu 'H100 SXM' --tokens 1B --optimizer adam8bit >"$tmp/fit8"
check "the 8-bit hint fits when taken" grep -q '^largest micro-batch on H100 SXM: [1-9]' "$tmp/fit8"
check "the 8-bit hint is timed and priced when taken" grep -q '^time for 1B tokens' "$tmp/fit8"

# a 1-GPU job on 8-GPU instances: priced for the instance, the 7 idle GPUs said
"$GPUCTL" plan cost --hours 2 --gpus 1 --gpu 'H200 SXM' >"$tmp/idle"
check "idle GPUs: the column" grep -qE '^p5en\.48xlarge \(before 2025-06\) +1 x 8 +7 +H200 SXM ' "$tmp/idle"
check "idle GPUs: the line" grep -q '^a job of 1 GPU is priced for whole instances: on one of 8 GPUs, 7 stay idle' "$tmp/idle"
check "price dates stated" grep -q '^prices as of ' "$tmp/idle"
"$GPUCTL" plan cost --hours 2 --gpus 8 --gpu 'H200 SXM' >"$tmp/noidle"
checks=$((checks + 1))
grep -q 'stay idle' "$tmp/noidle" && fail "8 GPUs on 8-GPU instances: idle GPUs said"
"$GPUCTL" plan cost --hours 2 --gpus 1 --gpu 'H200 SXM' --json >"$tmp/idle.json"
check "idle GPUs JSON" jqe '[.cost[].idle_gpus] | all(. == 7)' "$tmp/idle.json"
# Capacity Block rates in their own column, not on-demand
check "capacity block JSON" jqe '.cost[] | select(.instance | test("Capacity Block")) | .on_demand == null and .capacity_block == 86.52' "$tmp/idle.json"
check "capacity block column" grep -qE '^p5e\.48xlarge \(Capacity Block\) +1 x 8 +7 +H200 SXM +us-east-2 +2024-12 +n/a +n/a +n/a +n/a +86\.52 USD *$' "$tmp/idle"

# each subcommand's help ends with what concerns it: MODEL only for train and serve
for sub in cost mig; do
	checks=$((checks + 1))
	"$GPUCTL" plan $sub --help | grep -q '^MODEL:' && fail "plan $sub --help ends with the MODEL footer"
done
check "plan train --help explains MODEL" bash -c "'$GPUCTL' plan train --help | grep -q '^MODEL:'"

# --hf-config: the shape from a Hugging Face config.json gives the preset's parameter count
hf="$src/tests/data/hf"
for pair in "llama-2-7b llama-2-7b" "gpt2 gpt2-small" "mixtral-8x7b mixtral-8x7b"; do
	set -- $pair
	a=$("$GPUCTL" plan train --hf-config "$hf/$1.json" --json | jq '.model.params')
	b=$("$GPUCTL" plan train --model "$2" --json | jq '.model.params')
	check "--hf-config $1: $a parameters, as the preset $2 ($b)" test -n "$a" -a "$a" = "$b"
done
a=$("$GPUCTL" plan serve --hf-config "$hf/mixtral-8x7b.json" --tp 2 --json | jq '.model.active_params')
b=$("$GPUCTL" plan serve --model mixtral-8x7b --tp 2 --json | jq '.model.active_params')
check "serve --hf-config: active parameters as the preset" test -n "$a" -a "$a" = "$b"
check "--hf-config with --layers: the option wins" \
	[ "$("$GPUCTL" plan train --hf-config "$hf/llama-2-7b.json" --layers 16 --json | jq '.model.layers')" = 16 ]
echo '{"model_type": "llama", "hidden_size": 4096}' >"$tmp/nolayers.json"
expect_error 65 "config.json: no 'num_hidden_layers'" plan train --hf-config "$tmp/nolayers.json"
echo '{"num_hidden_layers": 2,' >"$tmp/trunc.json"
expect_error 65 "config.json: line" plan train --hf-config "$tmp/trunc.json"
expect_error 66 "$tmp/none.json" plan train --hf-config "$tmp/none.json"
expect_error 64 "--model and --hf-config exclude each other" plan train --model llama-2-7b --hf-config "$hf/gpt2.json"
finish
