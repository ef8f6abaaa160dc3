#!/usr/bin/env bash
# PyTorch reads a LoRA finetune's merged Hugging Face file and gets the adapted model's loss (issue "finetune on your
# own text: LoRA"). On the committed GPT-2 file (tests/golden/gpt2_hf/model.safetensors: 2 layers, 2 heads, 64 wide,
# context 32, a vocabulary of 97 characters; docs/gpt2-hf.md's worked example):
#
#   import -> train --init --lora-rank 4 -> eval (the adapters on their base) -> merge -> eval (the merged model)
#          -> export (merges, then writes Hugging Face's layout) -> PyTorch's loss on the same ids, float64 and float32
#
#   bash tools/lora_export_check.sh BUILD_DIR [CHECKPOINT TEXT]
#
# With CHECKPOINT and TEXT it checks that LoRA checkpoint instead (its base must be where it was trained), scored on
# TEXT (for a character model, the text it was trained on). Prints the base's loss, then the adapted model's four, in
# nats per token: the four agree to float32 rounding. Needs /usr/bin/python3 with torch.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: lora_export_check.sh BUILD_DIR [CHECKPOINT TEXT]}" && pwd)
gpt=$build/bin/cppgrad-gpt
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if [[ $# -ge 3 ]]; then
  lora=$(realpath "$2") text=$(realpath "$3")
else
  text=$work/text97.txt lora=$work/lora.ckpt
  { printf '\t\n'; printf '%b' "$(printf '\\%03o' $(seq 32 126))"; cat "$repo/nn/gpt.cpp"; } > "$text"
  "$gpt" import --hf "$repo/tests/golden/gpt2_hf/model.safetensors" --heads 2 --tokenizer char --data "$text" \
    --out "$work/base.ckpt" > /dev/null
  "$gpt" train --init "$work/base.ckpt" --data "$text" --lora-rank 4 --steps 100 --batch-size 16 --lr 1e-2 \
    --eval-every 100 --samples 0 --quiet --save "$lora" > /dev/null
fi
loss() {  # CHECKPOINT -> its eval loss on TEXT, as --metrics-out records it
  "$gpt" eval --checkpoint "$1" --data "$text" --metrics-out "$work/eval.jsonl" > /dev/null
  sed -n 's/.*"loss": *\([-0-9.e]*\).*/\1/p' "$work/eval.jsonl" | tail -n 1; rm "$work/eval.jsonl"
}
read -r context heads tokenizer base < <(/usr/bin/python3 - "$lora" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:  # the checkpoint's header: its model's heads, its run's context and tokenizer
    meta = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))["__metadata__"]
model, config = json.loads(meta["model"]), json.loads(meta["config"])
print(config.get("context") or model["block_size"], model["n_head"], config.get("tokenizer", "char"),
      json.loads(meta["lora_base"])["path"])
PY
)
echo "cppgrad eval of the base, without the adapters:            $(loss "$base") nats/token"
echo "cppgrad eval of the LoRA checkpoint (adapters on their base): $(loss "$lora") nats/token"
"$gpt" merge --checkpoint "$lora" --out "$work/merged.ckpt" > /dev/null
echo "cppgrad eval of the merged checkpoint:                      $(loss "$work/merged.ckpt") nats/token"
"$gpt" export --checkpoint "$lora" --out "$work/model.safetensors" > /dev/null
"$gpt" tokenize encode --tokenizer "$tokenizer" --data "$text" > "$work/ids.txt"
/usr/bin/python3 "$repo/tests/golden/gpt2_hf/make_gpt2_hf.py" --loss "$work/model.safetensors" --ids "$work/ids.txt" \
  --context "$context" --n-head "$heads" --out "$work" | sed "s|$work/||"
