#!/usr/bin/env bash
# Validation bits per byte on the King James Bible, cppgrad-gpt against PyTorch, for three tokenizers (docs/text.md):
# characters, a 1,024-token BPE trained on the text's first 90% of bytes, and GPT-2's. Both sides read the same token
# ids (`cppgrad-gpt tokenize encode`), count the same bytes per token (`tokenize lengths`), hold out the last 10% of
# tokens (nanoGPT's split), train the same model (nanoGPT's: pre-LN, GELU tanh, tied head, GPT-2 init) with the same
# hyperparameters for seeds 0, 1, 2, and score every validation token once (non-overlapping windows of the context).
# The PyTorch side is ANCHORS/gpt/text_pytorch.py (nanoGPT's model and loop, torch 1.13, /usr/bin/python3).
#
#   bash bench/text_quality.sh [--build DIR] [--anchors DIR] [--out DIR]
#     --build    the build with bin/cppgrad-gpt (default: build)
#     --anchors  the anchors, PyTorch's gpt/ (default: $CPPGRAD_ANCHORS, or where CI keeps them, beside the clone);
#                when missing, only the cppgrad side runs and the table says so
#     --out      where kjv.txt, the tokenizations and the runs' logs go (default: a new temporary directory); files
#                already there (kjv.txt, the BPE, the ids) are reused
# The model and the budget come from the environment (defaults in brackets): C [64] L [4] NH [4] T [64] B [8]
# STEPS [250] LR [2e-3] WARMUP [25] SEEDS ["0 1 2"] TOKENIZERS ["char bpe1024 gpt2"]. The schedule is nanoGPT's
# (warm-up, cosine to LR / 10), AdamW betas 0.9 / 0.95, no weight decay (cppgrad decays every parameter, nanoGPT the
# matrices only: with none the two agree), no dropout, no clipping. Every process runs on one thread under nice -n 10
# (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1), one after the other. Not a ctest: the defaults take about half an hour.
# Needs the Debian packages bible-kjv (`bible`) and, for the PyTorch side, python3-torch.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
anchors=${CPPGRAD_ANCHORS:-$repo/../shared/anchors}  # unset: where CI keeps the anchors
out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --anchors) anchors=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "text_quality.sh: unknown argument '$1' (--build DIR, --anchors DIR, --out DIR)" >&2; exit 2 ;;
  esac
done
gpt=$build/bin/cppgrad-gpt
anchor=$anchors/gpt/text_pytorch.py
[[ -x $gpt ]] || { echo "text_quality.sh: no $gpt (build cppgrad-gpt first)" >&2; exit 2; }
command -v bible > /dev/null || { echo "text_quality.sh: no 'bible' (apt-get install bible-kjv)" >&2; exit 2; }
[[ -n $out ]] || out=$(mktemp -d -t text_quality.XXXXXX)
mkdir -p "$out"
C=${C:-64} L=${L:-4} NH=${NH:-4} T=${T:-64} B=${B:-8} STEPS=${STEPS:-250} LR=${LR:-2e-3} WARMUP=${WARMUP:-25}
SEEDS=${SEEDS:-0 1 2} TOKENIZERS=${TOKENIZERS:-char bpe1024 gpt2}
MIN_LR=$(python3 -c "print($LR / 10)")
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# PyTorch's best setting: OpenBLAS's kernels for this CPU (bench/gpt/torch_blas.sh).
source "$repo/bench/gpt/torch_blas.sh" && use_openblas_kernels
cd "$out"

# The text, and a BPE trained on its first 90% of bytes (about the training split: the last 10% of tokens validate).
[[ -s kjv.txt ]] || bible -f gen1:1-rev22:21 > kjv.txt
if [[ ! -s kjv1024.model ]]; then
  head -c $(( $(stat -c %s kjv.txt) * 9 / 10 )) kjv.txt > kjv_first90.txt
  "$gpt" tokenize train --vocab-size 1024 --data kjv_first90.txt --out kjv1024.model > /dev/null
fi
flag_of() { case $1 in char) echo char ;; bpe1024) echo "bpe:$out/kjv1024.model" ;; gpt2) echo gpt2 ;; esac; }
for tok in $TOKENIZERS; do
  [[ -s ids.$tok.txt ]] || "$gpt" tokenize encode --tokenizer "$(flag_of "$tok")" --data kjv.txt > ids.$tok.txt
  if [[ $tok == char ]]; then "$gpt" tokenize lengths --tokenizer char --data kjv.txt > bytes.$tok.txt
  else "$gpt" tokenize lengths --tokenizer "$(flag_of "$tok")" > bytes.$tok.txt; fi
done

now() { date +%s.%N; }
# One run of each side; prints "bpb wall_s" (the final validation bits per byte, the run's whole wall time).
run_cppgrad() {  # tokenizer seed
  local log=cppgrad.$1.$2 t0; t0=$(now)
  nice -n 10 "$gpt" train --data kjv.txt --format text --tokenizer "$(flag_of "$1")" --context "$T" --d-model "$C" \
    --layers "$L" --heads "$NH" --batch-size "$B" --steps "$STEPS" --lr "$LR" --schedule cosine \
    --warmup-steps "$WARMUP" --min-lr "$MIN_LR" --beta2 0.95 --weight-decay 0 --dropout 0 --seed "$2" --threads 1 \
    --eval-every "$STEPS" --eval-tokens 1000000000 --samples 0 --metrics-out "$log.jsonl" > "$log.log"
  python3 -c "import json,sys; print(json.loads(open('$log.jsonl').read().splitlines()[-1])['val_bpb'], end=' ')"
  python3 -c "print(f'{$(now) - $t0:.1f}')"
}
run_pytorch() {  # tokenizer seed
  local log=pytorch.$1.$2 t0 v; t0=$(now); v=$(wc -w < bytes.$1.txt)
  nice -n 10 /usr/bin/python3 "$anchor" ids.$1.txt bytes.$1.txt "$v" "$STEPS" 1 C="$C" L="$L" NH="$NH" T="$T" \
    B="$B" lr="$LR" wd=0 warmup="$WARMUP" schedule=cosine seed="$2" eval_tokens=1000000000 eval_every="$STEPS" \
    dropout=0 > "$log.log"
  sed -n 's/.*final_bpb=\([0-9.]*\).*/\1/p' "$log.log" | tr '\n' ' '
  python3 -c "print(f'{$(now) - $t0:.1f}')"
}

# mean ± half the range, of the numbers on stdin
mean_of() { python3 -c "import sys; v=[float(x) for x in sys.stdin.read().split()]; print(f'{sum(v)/len(v):.0f}')"; }
stats() { python3 -c "import sys; v=[float(x) for x in sys.stdin.read().split()]; print(f'{sum(v)/len(v):.4f} ± {(max(v)-min(v))/2:.4f}')"; }
# Seed by seed, both sides in turn, so that a run stopped early has pairs.
declare -A bpbs walls
for tok in $TOKENIZERS; do
  for seed in $SEEDS; do
    for side in cppgrad pytorch; do
      [[ $side == pytorch && ! -f $anchor ]] && continue
      read -r bpb wall < <(run_$side "$tok" "$seed")
      echo "$tok $side seed $seed: val_bpb $bpb, ${wall}s" >&2
      bpbs[$tok.$side]+="$bpb " walls[$tok.$side]+="$wall "
    done
  done
done
echo
echo "KJV, last 10% of tokens validate; C=$C L=$L NH=$NH T=$T B=$B, $STEPS steps, lr $LR (warm-up $WARMUP, cosine to" \
     "$MIN_LR), AdamW 0.9/0.95, wd 0, seeds $SEEDS, 1 thread each; $(date -u +%Y-%m-%d), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tokenizer | side | val bits/byte (mean ± half range) | steps | tokens seen | wall per run (mean) |"
echo "|---|---|---|---|---|---|"
for tok in $TOKENIZERS; do
  v=$(wc -w < bytes.$tok.txt); n=$(wc -w < ids.$tok.txt)
  for side in cppgrad pytorch; do
    if [[ -z ${bpbs[$tok.$side]:-} ]]; then echo "| $tok ($v) | $side | (not run: no $anchor) | | | |"; continue; fi
    echo "| $tok (V $v, $n tokens) | $side | $(echo "${bpbs[$tok.$side]}" | stats) | $STEPS | $((STEPS * B * T)) |" \
         "$(echo "${walls[$tok.$side]}" | mean_of) s |"
  done
done
