#!/usr/bin/env bash
# A real finetune (issue "finetune on your own text: LoRA"): the README's King James Bible model, finetuned on
# Debian's fortunes with LoRA and in full for the same steps; bits per byte on held-out fortunes before and after,
# the training time and the peak resident set of each run (/usr/bin/time). docs/performance.md shows the table.
#
#   bash bench/gpt/lora_fortunes.sh BUILD_DIR [OUT_DIR]
#
# The base is the README's run (a 4,096-token BPE trained on the KJV, 1.3M parameters, 3,000 steps). fortunes.txt
# (docs/text.md) is cut at the first '%' line after 90% of its bytes: the finetunes read the first part, and every
# model is scored on the second, which no run trains on (`cppgrad-gpt eval --data`). Both finetunes use the base's
# flags (batch 16 x context 64, warm-up then cosine to a tenth, beta2 0.95), STEPS steps, and each learning rate of
# LORA_LRS or FULL_LRS; LoRA is rank RANK on GPT-2's four matrices of every block (alpha 8).
# Environment (defaults): STEPS [1000] RANK [8] LORA_LRS ["1e-3 3e-3 1e-2 3e-2"] FULL_LRS ["3e-4 1e-3 3e-3 1e-2"]
# THREADS [2]; the best of each kind was inside its range (2026-12-07: LoRA 1e-2, full 3e-3).
# About 15 minutes on 2 quiet cores (check `uptime`). Needs bible-kjv and fortunes.
set -euo pipefail
build=$(cd "${1:?usage: lora_fortunes.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$(mktemp -d)}; mkdir -p "$out"; out=$(cd "$out" && pwd)
STEPS=${STEPS:-1000} RANK=${RANK:-8} THREADS=${THREADS:-2}
LORA_LRS=${LORA_LRS-1e-3 3e-3 1e-2 3e-2} FULL_LRS=${FULL_LRS-3e-4 1e-3 3e-3 1e-2}  # set but empty: no run of that kind
gpt=$build/bin/cppgrad-gpt
cd "$out"
[[ -s kjv.txt ]] || bible -f gen1:1-rev22:21 > kjv.txt
if [[ ! -s fortunes_test.txt ]]; then
  find /usr/share/games/fortunes -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' | sort | xargs cat > fortunes.txt
  cut=$(awk -v limit=$(( $(wc -c < fortunes.txt) * 9 / 10 )) '{bytes += length($0) + 1} bytes > limit && $0 == "%" {print NR; exit}' fortunes.txt)
  head -n "$cut" fortunes.txt > fortunes_train.txt && tail -n +"$((cut + 1))" fortunes.txt > fortunes_test.txt
fi
[[ -s kjv4096.model ]] || "$gpt" tokenize train --vocab-size 4096 --data kjv.txt --out kjv4096.model > /dev/null
schedule=(--batch-size 16 --context 64 --schedule cosine --warmup-steps 100 --beta2 0.95 --samples 0 --threads "$THREADS")
seconds() { sed -n 's/.*; \([0-9.]*\)s training.*/\1/p' "$1"; }
rss() { awk '/Maximum resident/ {printf "%.2f", $6 * 1024 / 1e9}' "$1"; }
held_out_bpb() {  # CHECKPOINT -> bits per byte on fortunes_test.txt
  "$gpt" eval --checkpoint "$1" --data fortunes_test.txt --threads "$THREADS" --metrics-out eval.jsonl > /dev/null
  sed -n 's/.*"bpb": *\([0-9.]*\).*/\1/p' eval.jsonl | tail -n 1 | xargs printf '%.3f'; rm eval.jsonl
}
if [[ ! -s kjv.ckpt ]]; then
  /usr/bin/time -v -o kjv.time "$gpt" train --data kjv.txt --format text --tokenizer bpe:kjv4096.model --d-model 128 \
    --steps 3000 --lr 2e-3 --min-lr 2e-4 "${schedule[@]}" --eval-every 1000 --save kjv.ckpt > kjv.log
fi
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $THREADS threads; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# fortunes: $(wc -c < fortunes_train.txt) bytes to finetune on, $(wc -c < fortunes_test.txt) held out; $STEPS steps of 16 x 64 tokens"
echo
echo "| model | learning rate | trained parameters | held-out bits/byte | training | peak RSS |"
echo "|---|---|---|---|---|---|"
echo "| KJV base (3,000 steps on the KJV) | | | $(held_out_bpb kjv.ckpt) | $(seconds kjv.log) s | $(rss kjv.time) GB |"
for kind in lora full; do
  lrs=$FULL_LRS flags=(); [[ $kind == lora ]] && lrs=$LORA_LRS flags=(--lora-rank "$RANK")
  for lr in $lrs; do
    name=$kind-$lr
    /usr/bin/time -v -o "$name.time" "$gpt" train --init kjv.ckpt --data fortunes_train.txt --format text \
      --steps "$STEPS" --lr "$lr" --min-lr "$(awk -v l="$lr" 'BEGIN {print l / 10}')" "${schedule[@]}" \
      --eval-every "$STEPS" "${flags[@]}" --save "$name.ckpt" > "$name.log"
    trained=$(sed -n 's/.*: \([0-9]*\) parameters learn.*/\1/p' "$name.log" | head -n 1)
    echo "| $kind finetune | $lr | ${trained:-all} | $(held_out_bpb "$name.ckpt") | $(seconds "$name.log") s | $(rss "$name.time") GB |"
  done
done
