#!/usr/bin/env bash
# GPT-2 124M, one training step, side by side in one run (issue "real text, real tokens", item 4): the trainer
# `cppgrad-gpt train` (shards, replicas and all), PyTorch (nanoGPT's model: ANCHORS/gpt/gpt_pytorch.py, at every
# torch threads x OpenBLAS threads setting) and llm.c's CPU trainer (ANCHORS/llmc/step_bench.c, built into a
# temporary directory). Per program and thread count: the median step, its model FLOPs utilisation (nanoGPT's
# estimate_mfu: 6 N + 12 L C T FLOPs a token, N without the position embedding, over the FMA peak of as many cores
# as it ran on, bench/gpt/fma_peak.c; PyTorch's torch threads or OpenBLAS's, whichever is more) and the whole process's peak resident set (/usr/bin/time).
# cppgrad and PyTorch each run float32 and bfloat16 (cppgrad's --dtype bfloat16, PyTorch's torch.autocast bf16); a
# bf16 row's MFU is over bf16_peak below.
# Then, where BUILD_DIR has cppgrad-bench (-DCPPGRAD_BUILD_BENCH=ON), sampling with the KV cache at 124M, in ms per
# token, against llm.c's sampling loop.
#
#   bash bench/gpt/gpt2_124m.sh BUILD_DIR [ANCHORS_DIR [BATCH CONTEXT STEPS]]   (defaults 4 64 6: llm.c's quick start)
#   ANCHORS_DIR (gpt/ and llmc/): when empty or not given, $CPPGRAD_ANCHORS, or where CI keeps the anchors, beside the
#   clone; so `bash bench/gpt/gpt2_124m.sh build "$CPPGRAD_ANCHORS" 8 256 3` works either way.
#
# cppgrad's step is the difference of the trainer's own "training" seconds between a run of STEPS + 2 steps and one
# of 2, over STEPS: start-up, the first steps' warm-up and the final evaluation drop out. The text is the King James
# Bible's first 40 kB through GPT-2's tokenizer (a step's time does not depend on which tokens). Needs bible-kjv, gcc
# with OpenMP and /usr/bin/python3 with torch. About 3 minutes at the defaults on 2 quiet cores; check `uptime`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: gpt2_124m.sh BUILD_DIR [ANCHORS_DIR [BATCH CONTEXT STEPS]]}" && pwd)
anchors=$(cd "${2:-${CPPGRAD_ANCHORS:-$repo/../shared/anchors}}" && pwd)  # the anchors: gpt/ and llmc/
B=${3:-4} T=${4:-64} S=${5:-6}
V=50257 L=12 H=12 C=768
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bible -f gen1:1-rev22:21 > "$work/kjv.txt" && head -c 40000 "$work/kjv.txt" > "$work/text.txt"  # not a pipe: head would end bible with SIGPIPE
gcc -Ofast -march=native -fopenmp -DOMP -I"$anchors/llmc/src" "$anchors/llmc/step_bench.c" -lm -o "$work/llmc_step"
gcc -O2 -fopenmp "$repo/bench/gpt/fma_peak.c" -o "$work/fma_peak"
"$work/fma_peak" 1 2 > "$work/fma.txt"
peak() { awk -v t="$1" '$2 == "threads" && $3 == t":" {print $4; exit}' "$work/fma.txt"; }  # widest vector first
# A bfloat16 run's peak: the faster of float32 FMAs (which carry cppgrad's bf16 products on Intel) and vdpbf16ps
# (where the CPU has AVX512_BF16). AMX, which PyTorch's oneDNN may use on Intel, is not measured: its MFU can pass 100%.
bf16_peak() { awk -v t="$1" '$2 == "threads" && $3 == t":" && $4 > best {best = $4} END {print best}' "$work/fma.txt"; }
# nanoGPT's estimate: N = every parameter but wpe (wte counted once, tied to the head).
N=$(( V * C + L * (12 * C * C + 13 * C) + 2 * C ))
flops=$(( (6 * N + 12 * L * C * T) * B * T ))
# PyTorch's best setting: OpenBLAS's kernels for this CPU (bench/gpt/torch_blas.sh).
source "$repo/bench/gpt/torch_blas.sh" && use_openblas_kernels
echo "# $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p')), $(nproc) cores; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# PyTorch's OpenBLAS kernels: $openblas_kernels (bench/gpt/torch_blas.sh --coretype)"
echo "# FMA peak $(peak 1) GFLOP/s on 1 thread, $(peak 2) on 2; GPT-2 124M at batch $B, context $T: $(awk -v f=$flops 'BEGIN {printf "%.1f", f / 1e9}') GFLOP a step"
echo
echo "# bf16 peak (the faster of FMA and vdpbf16ps): $(bf16_peak 1) GFLOP/s on 1 thread, $(bf16_peak 2) on 2"
echo
echo "| program | dtype | threads | median step | MFU | peak RSS |"
echo "|---|---|---|---|---|---|"
row() {  # name threads ms [cores, when more than the threads: OpenBLAS's own] [dtype]
  local cores=${4:-$2} dtype=${5:-fp32} p
  if [[ $dtype == bf16 ]]; then p=$(bf16_peak "$cores"); else p=$(peak "$cores"); fi
  awk -v n="$1" -v d="$dtype" -v t="$2" -v ms="$3" -v f=$flops -v p="$p" -v r="$(awk '/Maximum resident/ {print $6}' "$work/time.txt")" \
    'BEGIN {printf "| %s | %s | %d | %.0f ms | %.0f%% | %.2f GB |\n", n, d, t, ms, f / (ms / 1000) / (p * 1e9) * 100, r * 1024 / 1e9}'
}
median() { grep -o 'median [0-9.]*' | awk '{print $2}'; }
cppgrad_training_s() {  # THREADS STEPS DTYPE -> the trainer's "training" seconds
  /usr/bin/time -v -o "$work/time.txt" "$build/bin/cppgrad-gpt" train --data "$work/text.txt" --format text \
    --tokenizer gpt2 --d-model $C --heads $H --layers $L --context "$T" --batch-size "$B" --steps "$2" \
    --eval-every 1000000 --samples 0 --threads "$1" --dtype "$3" --quiet | sed -n 's/.*; \([0-9.]*\)s training.*/\1/p'
}
for dtype in float32 bfloat16; do for th in 1 2; do
  a=$(cppgrad_training_s $th 2 $dtype); b=$(cppgrad_training_s $th $((S + 2)) $dtype)
  row "cppgrad-gpt train" $th "$(awk -v a="$a" -v b="$b" -v s="$S" 'BEGIN {print (b - a) / s * 1000}')" $th \
    "$([[ $dtype == bfloat16 ]] && echo bf16 || echo fp32)"
done; done
torch_version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')
# On netlib's reference BLAS PyTorch's float32 step is 30x slower than on OpenBLAS: its rows would not be its speed.
if ! blas=$(bash "$repo/bench/gpt/torch_blas.sh" 2>&1); then
  echo "| PyTorch $torch_version | skipped: $(tail -n 1 <<<"$blas") | | | | |"
else for dtype in fp32 bf16; do for th in 1 2; do for ob in 1 2; do
  ms=$(OPENBLAS_NUM_THREADS=$ob /usr/bin/time -v -o "$work/time.txt" /usr/bin/python3 "$anchors/gpt/gpt_pytorch.py" \
    $V $L $H $C "$T" "$B" "$S" $th $dtype 2>&1 | median)
  row "PyTorch $torch_version, OpenBLAS on $ob" $th "$ms" $((th > ob ? th : ob)) $dtype  # MFU over the cores it used
done; done; done; fi
for th in 1 2; do
  ms=$(OMP_NUM_THREADS=$th /usr/bin/time -v -o "$work/time.txt" "$work/llmc_step" $V $L $H $C "$T" "$B" "$S" 2>&1 | median)
  row "llm.c train_gpt2.c" $th "$ms" $th fp32
done

# Sampling with the KV cache at 124M, ms per token: 63 tokens after a 1-token prompt, context 64 (train_gpt2.c's
# genT). cppgrad: cppgrad-bench's BM_GptSample/gpt2 (configure with -DCPPGRAD_BUILD_BENCH=ON), the median of 3;
# llm.c: its sampling loop, a forward over the whole context for every token (bench/gpt/llmc_sample.c), one sample.
if [[ -x $build/bin/cppgrad-bench ]]; then
  gcc -Ofast -march=native -fopenmp -DOMP -I"$anchors/llmc/src" "$repo/bench/gpt/llmc_sample.c" -lm -o "$work/llmc_sample" 2>/dev/null
  echo
  echo "| sampling, context 64 | threads | ms per token |"
  echo "|---|---|---|"
  for th in 1 2; do
    "$build/bin/cppgrad-bench" --benchmark_filter="BM_GptSample/gpt2/threads:$th/" --benchmark_repetitions=3 \
      --benchmark_format=json --benchmark_out="$work/sample.json" > /dev/null
    /usr/bin/python3 - "$work/sample.json" "$th" <<'PY'
import json, sys
runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("aggregate_name") == "median"]
print(f"| cppgrad, KV cache | {sys.argv[2]} | {1000 / runs[0]['tokens']:.1f} |")
PY
  done
  for th in 1 2; do
    OMP_NUM_THREADS=$th "$work/llmc_sample" $V $L $H $C 64 1 "$work/llmc_sample_ckpt.bin" |
      awk -v t=$th '{for (i = 1; i < NF; i++) if ($i == "full") printf "| llm.c'"'"'s loop | %d | %.1f |\n", t, $(i + 1)}'
  done
fi
