#!/usr/bin/env bash
# Writes the fuzzers' seed corpus (committed in fuzz/corpus/): a tiny cppgrad-reverse checkpoint, the model
# state dict inside it, and a few small safetensors files. The harnesses' configurations match these files.
#   bash fuzz/make_corpus.sh [BUILD_DIR]     (a build with cppgrad-reverse; default: build)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$repo/build}/bin/cppgrad-reverse
out=$repo/fuzz/corpus
mkdir -p "$out/checkpoint" "$out/load_state_dict" "$out/safetensors"
"$bin" train --vocab 5 --seq-len 3 --train-size 32 --test-size 8 --d-model 4 --heads 1 --encoder-layers 1 \
  --decoder-layers 1 --d-ff 4 --epochs 1 --batch-size 8 --threads 1 --quiet --save "$out/checkpoint/tiny.safetensors" >/dev/null
# The state dict: the checkpoint's model.* tensors without the prefix (standard library only).
python3 - "$out/checkpoint/tiny.safetensors" "$out/load_state_dict/tiny.safetensors" <<'PY'
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
out, blobs, offset = {}, [], 0
for name in sorted(k for k in header if k.startswith("model.")):
    e = header[name]
    b = data[e["data_offsets"][0]:e["data_offsets"][1]]
    out[name[len("model."):]] = {"dtype": e["dtype"], "shape": e["shape"], "data_offsets": [offset, offset + len(b)]}
    blobs.append(b)
    offset += len(b)
text = json.dumps(out, sort_keys=True, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
PY
# Regression seeds: checkpoints that once got through Trainer::load. A global_step that is not a number was read
# only after the model and optimizer had been overwritten; an optimizer step of INT64_MAX was converted to double
# and back out of range.
python3 - "$out/checkpoint/tiny.safetensors" "$out/checkpoint" <<'PY'
import json, struct, sys
src, out = sys.argv[1], sys.argv[2]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header, data = json.loads(raw[8:8 + n]), bytearray(raw[8 + n:])
def write(name, header, data):
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    open(f"{out}/{name}", "wb").write(struct.pack("<Q", len(text)) + text + bytes(data))
bad = json.loads(json.dumps(header))
bad["__metadata__"]["global_step"] = "x"
write("global_step_not_a_number.safetensors", bad, data)
step = header["optim.step"]
assert step["dtype"] == "I64" and step["shape"] == []
big = bytearray(data)
big[step["data_offsets"][0]:step["data_offsets"][1]] = struct.pack("<q", 2**63 - 1)
write("optim_step_int64_max.safetensors", header, big)
PY
for case in softmax cross_entropy_ignore_index multi_head_attention_cross clip_grad_norm; do
  cp "$repo/tests/golden/$case.safetensors" "$out/safetensors/"
done
ls -l "$out"/*
