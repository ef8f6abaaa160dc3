#!/usr/bin/env bash
# cppgrad's GPT against PyTorch and llm.c, one after the other in one run (issue 25, "Speed, side by side"):
#   1. the machine's FMA peak, 1 and 2 threads (bench/gpt/fma_peak.c: independent FMA chains, the widest vector);
#   2. one training step (forward, backward, AdamW) at the words and large shapes, 1 and 2 threads each:
#      cppgrad (cppgrad-bench's BM_GptStep, the median of --repetitions means), PyTorch
#      (ANCHORS/gpt/gpt_pytorch.py, the median step) and llm.c's CPU trainer (ANCHORS/llmc/step_bench.c, built
#      into a temporary directory, the median step);
#   3. sampling, ms per token (context - 1 tokens after a 1-token prompt): cppgrad's KV cache (BM_GptSample) and
#      its full recompute (BM_GptSampleRecompute), and llm.c's (bench/gpt/llmc_sample.c against ANCHORS/llmc/src):
#      its sampling loop's gpt2_forward on all T positions per token, and on the growing prefix.
# It prints two Markdown tables (step: ms and model FLOPs utilisation; sampling: ms per token) and cppgrad's ratio
# to the best thread setting of each side.
#
#   bash bench/gpt/compare.sh [--bench PATH] [--anchors DIR] [--repetitions N] [--force]
#     --bench        cppgrad-bench (default: build/bin/cppgrad-bench; configure with -DCPPGRAD_BUILD_BENCH=ON and
#                    `cmake --build build --target cppgrad-bench`)
#     --anchors      the anchors: PyTorch's gpt/ and llm.c's llmc/ (default: $CPPGRAD_ANCHORS, or where CI keeps
#                    them, beside the clone); when missing, PyTorch and llm.c are skipped and the tables say so
#     --repetitions  cppgrad-bench's --benchmark_repetitions (default 5)
#     --force        run although the load average is above 0.5 (the figures are then preliminary)
# Takes a few minutes on a quiet machine (12 under load with PyTorch on netlib's BLAS). Needs gcc with OpenMP,
# python3 (to read cppgrad-bench's JSON), and for the PyTorch side /usr/bin/python3 with torch (python3-torch).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench=$repo/build/bin/cppgrad-bench
anchors=${CPPGRAD_ANCHORS:-$repo/../shared/anchors}  # unset: where CI keeps the anchors
repetitions=5
force=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --bench) bench=$2; shift 2 ;;
    --anchors) anchors=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "compare.sh: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done

# The shapes: name, then V LAYERS HEADS CHANNELS CONTEXT BATCH (the argument order of both anchors), then the
# anchors' step counts (PyTorch's median skips its first 2 steps; llm.c's counts every step) and llm.c's samples.
configs=(words large)
declare -A shape=([words]="70 4 4 64 24 32" [large]="64 4 4 256 128 8")
declare -A pytorch_steps=([words]=30 [large]=12) llmc_steps=([words]=30 [large]=9) llmc_samples=([words]=21 [large]=3)
threads_list=(1 2)

commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?')
echo "# cppgrad GPT speed, side by side ($(date -u '+%Y-%m-%d %H:%M UTC'), cppgrad $commit)"
echo
echo "    $(uptime)"
echo "    $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  if [[ $force -eq 0 ]]; then
    echo "compare.sh: the load average is $load (above 0.5): other processes would skew every figure." >&2
    echo "Wait for a quiet machine, or pass --force for preliminary numbers." >&2
    exit 3
  fi
  echo
  echo "**WARNING: load average $load at the start (above 0.5): these numbers are preliminary, not a measurement.**"
fi
echo

work=$(mktemp -d /tmp/cppgrad-gpt-compare.XXXXXX)
trap 'echo "compare.sh: failed; the figures so far are in $work/results.tsv" >&2' ERR
results=$work/results.tsv  # one row per figure: side, config, threads, value
notes=()
: >"$results"

# 1. FMA peak: rows "peak - THREADS GFLOP/s" of the widest vector the CPU has (fma_peak prints it first).
gcc -O2 -fopenmp "$repo/bench/gpt/fma_peak.c" -o "$work/fma_peak"
"$work/fma_peak" "${threads_list[@]}" | tee "$work/fma.txt" | sed 's/^/    /'
awk '!seen[$3]++ { sub(":", "", $3); print "peak\t-\t" $3 "\t" $4; print "peak_isa\t-\t" $3 "\t" $1 }' \
  "$work/fma.txt" >>"$results"

# 2a, 3a. cppgrad: the median aggregate's real time per step; for sampling, 1000 / its tokens per second.
if [[ -x $bench ]] && "$bench" --benchmark_list_tests=true >"$work/tests.txt"; then
  for filter in '^BM_GptStep/(words|large)/' '^BM_GptSample(Recompute)?/(words|large)/'; do
    if ! grep -Eq "$filter" "$work/tests.txt"; then
      notes+=("cppgrad skipped where $bench has no benchmark matching $filter")
      continue
    fi
    echo "    cppgrad-bench --benchmark_filter='$filter' --benchmark_repetitions=$repetitions"
    "$bench" --benchmark_filter="$filter" --benchmark_repetitions="$repetitions" \
      --benchmark_report_aggregates_only=true --benchmark_format=json 2>/dev/null >"$work/cppgrad.json" ||
      { echo "compare.sh: cppgrad-bench failed on $filter" >&2; exit 1; }
    python3 - "$work/cppgrad.json" >>"$results" <<'PY'
import json, re, sys
chosen = {}  # run name -> the median aggregate, or with one repetition (no aggregates) the run itself
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median" or (b["run_type"] == "iteration" and b["run_name"] not in chosen):
        chosen[b["run_name"]] = b
for b in chosen.values():
    m = re.match(r"BM_(GptStep|GptSampleRecompute|GptSample)/(\w+)/threads:(\d+)", b["run_name"])
    side = {"GptStep": "cppgrad", "GptSample": "cppgrad_kv", "GptSampleRecompute": "cppgrad_recompute"}[m[1]]
    assert b["time_unit"] == "ms", b["time_unit"]
    ms = 1e3 / b["tokens"] if "tokens" in b else b["real_time"]  # sampling: tokens per second
    print(f"{side}\t{m[2]}\t{m[3]}\t{ms:.4f}")
PY
  done
else
  notes+=("cppgrad skipped: $bench is missing (configure with -DCPPGRAD_BUILD_BENCH=ON, build cppgrad-bench)")
fi

# 2b. PyTorch
if [[ ! -f $anchors/gpt/gpt_pytorch.py ]]; then
  notes+=("PyTorch skipped: $anchors/gpt/gpt_pytorch.py is missing")
elif ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  notes+=("PyTorch skipped: /usr/bin/python3 cannot import torch (Debian: apt-get install python3-torch)")
else
  # Debian's python3-torch calls whichever libblas.so.3 is installed: say which one this PyTorch runs on.
  blas=$(bash "$repo/bench/gpt/torch_blas.sh" 2>&1) || notes+=("**$(tail -n 1 <<<"$blas")**")
  # PyTorch's best setting: OpenBLAS's kernels for this CPU (bench/gpt/torch_blas.sh).
  source "$repo/bench/gpt/torch_blas.sh" && use_openblas_kernels
  echo "    PyTorch's BLAS: $(head -n 1 <<<"$blas"), kernels: $openblas_kernels"
  for c in "${configs[@]}"; do
    for n in "${threads_list[@]}"; do
      # shellcheck disable=SC2086  # the shape is six words
      line=$(/usr/bin/python3 "$anchors/gpt/gpt_pytorch.py" ${shape[$c]} "${pytorch_steps[$c]}" "$n")
      echo "    $line"
      printf 'pytorch\t%s\t%s\t%s\n' "$c" "$n" "$(sed -E 's/.*step median ([0-9.]+) ms.*/\1/' <<<"$line")" >>"$results"
      if [[ $c == words && $n == 1 ]]; then
        printf 'torch_version\t-\t-\t%s\n' "$(awk '{print $2}' <<<"$line")" >>"$results"
      fi
    done
  done
fi

# 2c, 3b. llm.c: its sources stay in ANCHORS; the binaries live in the temporary directory.
llmc=$anchors/llmc
if [[ ! -f $llmc/step_bench.c || ! -f $llmc/src/train_gpt2.c ]]; then
  notes+=("llm.c skipped: $llmc/step_bench.c or $llmc/src/train_gpt2.c is missing")
else
  gcc -Ofast -march=native -fopenmp -DOMP -I"$llmc/src" "$llmc/step_bench.c" -lm -o "$work/llmc_step" 2>/dev/null
  gcc -Ofast -march=native -fopenmp -DOMP -I"$llmc/src" "$repo/bench/gpt/llmc_sample.c" -lm \
    -o "$work/llmc_sample" 2>/dev/null
  for c in "${configs[@]}"; do
    for n in "${threads_list[@]}"; do
      # step_bench writes its checkpoint to /tmp/llmc_anchor_ckpt.bin; run from the work directory all the same.
      # shellcheck disable=SC2086
      line=$(cd "$work" && OMP_NUM_THREADS=$n ./llmc_step ${shape[$c]} "${llmc_steps[$c]}" | tail -1)
      echo "    OMP_NUM_THREADS=$n $line"
      printf 'llmc\t%s\t%s\t%s\n' "$c" "$n" "$(sed -E 's/.*step median ([0-9.]+) ms.*/\1/' <<<"$line")" >>"$results"
      read -r V L NH C T _ <<<"${shape[$c]}"
      line=$(OMP_NUM_THREADS=$n "$work/llmc_sample" "$V" "$L" "$NH" "$C" "$T" "${llmc_samples[$c]}" \
        "$work/llmc_sample_ckpt.bin" | tail -1)
      echo "    OMP_NUM_THREADS=$n $line"
      printf 'llmc_full\t%s\t%s\t%s\n' "$c" "$n" "$(sed -E 's/.*full ([0-9.]+) ms.*/\1/' <<<"$line")" >>"$results"
      printf 'llmc_grow\t%s\t%s\t%s\n' "$c" "$n" "$(sed -E 's/.*grow ([0-9.]+) ms.*/\1/' <<<"$line")" >>"$results"
    done
  done
fi

echo
echo "    $(uptime)"
printf 'load_end\t-\t-\t%s\n' "$(cut -d' ' -f1 /proc/loadavg)" >>"$results"
printf 'load_start\t-\t-\t%s\n' "$load" >>"$results"
for n in "${notes[@]}"; do printf 'note\t-\t-\t%s\n' "$n" >>"$results"; done
for c in "${configs[@]}"; do printf 'shape\t%s\t-\t%s\n' "$c" "${shape[$c]}" >>"$results"; done

# The tables. Model FLOPs per step, the same for all three sides (nanoGPT's estimate_mfu): per token 6 N (each
# weight one multiply-add forward, two backward) plus 12 L H Q T (attention's scores and weighted sum, forward and
# backward, over all T keys: the causal half is not subtracted), N the parameters but wpe (a lookup), times B T.
python3 - "$results" <<'PY'
import sys
from collections import defaultdict

rows = [line.rstrip("\n").split("\t", 3) for line in open(sys.argv[1])]
val = {(side, config, threads): value for side, config, threads, value in rows}
notes = [value for side, _, _, value in rows if side == "note"]
shapes = {config: list(map(int, value.split())) for side, config, _, value in rows if side == "shape"}
THREADS = ["1", "2"]


def ms(side, config, threads):
    v = val.get((side, config, threads))
    return float(v) if v not in (None, "") else None


def model_flops(V, L, NH, C, T, B):
    n_no_wpe = V * C + L * (12 * C * C + 13 * C) + 2 * C  # wte (= lm_head), blocks, ln_f
    return n_no_wpe + T * C, (6 * n_no_wpe + 12 * L * NH * (C // NH) * T) * B * T


def best(side, config):
    times = [t for t in (ms(side, config, n) for n in THREADS) if t is not None]
    return min(times) if times else None


def ratio(other, mine, target):
    if other is None or mine is None:
        return "—"
    return f"{other / mine:.2f}x (target {target}x)"


peak = {n: ms("peak", "-", n) for n in THREADS}
print("\n## Training step: median ms per step (model FLOPs utilisation)\n")
print("| config | cppgrad 1 thr | cppgrad 2 thr | PyTorch 1 thr | PyTorch 2 thr | llm.c 1 thr | llm.c 2 thr "
      "| cppgrad vs PyTorch | cppgrad vs llm.c |")
print("|---|---|---|---|---|---|---|---|---|")
targets = {"words": (3, 3), "large": (2, 3)}
for config, (V, L, NH, C, T, B) in shapes.items():
    params, flops = model_flops(V, L, NH, C, T, B)
    cells = []
    for side in ("cppgrad", "pytorch", "llmc"):
        for n in THREADS:
            t = ms(side, config, n)
            mfu = f" ({flops / (t / 1e3) / (peak[n] * 1e9):.0%})" if t is not None and peak[n] else ""
            cells.append("skipped" if t is None else f"{t:.1f}{mfu}")
    mine = best("cppgrad", config)
    label = f"{config} (V{V} d{C} L{L} H{NH} T{T} B{B}, {params / 1e6:.2f}M params, {flops / 1e9:.3g} GFLOP)"
    print(f"| {label} | " + " | ".join(cells) + f" | {ratio(best('pytorch', config), mine, targets[config][0])} "
          f"| {ratio(best('llmc', config), mine, targets[config][1])} |")

print("\n## Sampling: ms per token (context - 1 tokens after a 1-token prompt, batch 1)\n")
print("| config | cppgrad KV cache 1 thr | 2 thr | cppgrad recompute 1 thr | 2 thr | llm.c's loop 1 thr | 2 thr "
      "| llm.c growing prefix 1 thr | 2 thr | KV cache vs llm.c's loop | KV cache vs llm.c growing |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for config, (V, L, NH, C, T, B) in shapes.items():
    cells = []
    for side in ("cppgrad_kv", "cppgrad_recompute", "llmc_full", "llmc_grow"):
        for n in THREADS:
            t = ms(side, config, n)
            cells.append("skipped" if t is None else f"{t:.3f}")
    mine = best("cppgrad_kv", config)
    print(f"| {config} (T{T}: {T - 1} tokens) | " + " | ".join(cells) +
          f" | {ratio(best('llmc_full', config), mine, 10)} | {ratio(best('llmc_grow', config), mine, 10)} |")

isa = val.get(("peak_isa", "-", "1"), "?")
torch = val.get(("torch_version", "-", "-"), "")
peaks = ", ".join(f"{peak[n]:.1f} GFLOP/s at {n} thread{'s' if n != '1' else ''}" for n in THREADS if peak[n])
print(f"""
- Times: cppgrad, the median of cppgrad-bench's repetition means (wall time); PyTorch {torch} and llm.c, the
  median step of one run each. Ratios: the other side's best thread setting over cppgrad's best (above 1: cppgrad
  is faster). Sampling: cppgrad's time per sample over its tokens; "llm.c's loop" is train_gpt2.c's sampling
  (gpt2_forward on all T positions for every token, here at B = 1), "growing prefix" the same forward on the
  tokens so far (nanoGPT's generate).
- Model FLOPs per step (nanoGPT's estimate_mfu, the same for all three sides): (6 N + 12 L H Q T) per token times
  B T tokens, N the parameters without wpe, Q the head size. llm.c pads the vocabulary to a multiple of 64 (70 ->
  128 at words) and computes the padded logits: work it does that is not counted.
- MFU: model FLOP/s over the FMA peak of as many cores as threads, {isa}: {peaks}
  (bench/gpt/fma_peak.c, the best of 300 short runs of 12 independent FMA chains).""")
print(f"- Load average at the start {val[('load_start', '-', '-')]}, at the end {val[('load_end', '-', '-')]}.")
for note in notes:
    print(f"- {note}")
PY
rm -rf "$work"
