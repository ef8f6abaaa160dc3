#!/usr/bin/env bash
# Writes the fuzzers' seed corpus (committed in fuzz/corpus/): a tiny cppgrad-reverse checkpoint, the model
# state dict inside it, a few small safetensors files, and short texts for fuzz_text. The harnesses' configurations match these files.
#   bash fuzz/make_corpus.sh [BUILD_DIR]     (a build with cppgrad-reverse; default: build)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$repo/build}/bin/cppgrad-reverse
out=$repo/fuzz/corpus
mkdir -p "$out/checkpoint" "$out/load_state_dict" "$out/safetensors" "$out/text" "$out/gpt2_hf"
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
# fuzz_gpt2_hf: a GPT-2 in Hugging Face's layout (V 5, context 3, 1 layer, 2 heads, 4 wide; the harness's n_head),
# transformer.-prefixed, Conv1D weights [in, out], with the mask buffers; and the same without the prefix and buffers.
python3 - "$out/gpt2_hf" <<'PY'
import json, struct, sys
V, n_ctx, C = 5, 3, 4
shapes = {"wte.weight": [V, C], "wpe.weight": [n_ctx, C], "h.0.ln_1.weight": [C], "h.0.ln_1.bias": [C],
          "h.0.attn.bias": [1, 1, n_ctx, n_ctx], "h.0.attn.masked_bias": [],
          "h.0.attn.c_attn.weight": [C, 3 * C], "h.0.attn.c_attn.bias": [3 * C], "h.0.attn.c_proj.weight": [C, C],
          "h.0.attn.c_proj.bias": [C], "h.0.ln_2.weight": [C], "h.0.ln_2.bias": [C], "h.0.mlp.c_fc.weight": [C, 4 * C],
          "h.0.mlp.c_fc.bias": [4 * C], "h.0.mlp.c_proj.weight": [4 * C, C], "h.0.mlp.c_proj.bias": [C],
          "ln_f.weight": [C], "ln_f.bias": [C]}
def write(path, prefix, keep):
    header, blobs, offset, k = {}, [], 0, 0
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        values = [((k + i) % 7 - 3) / 8 for i in range(n)]  # small values, exact in float32; the same in both files
        k += n
        if not keep(name):
            continue
        blob = struct.pack(f"<{n}f", *values)
        header[prefix + name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
write(sys.argv[1] + "/tiny.safetensors", "transformer.", lambda name: True)
write(sys.argv[1] + "/tiny_bare.safetensors", "", lambda name: not name.endswith((".attn.bias", ".attn.masked_bias")))
# The same weights half precision (k/8 values: exact in both), and small versions of the hostile files of issue 40:
# the tiny model plus one extra tensor (there, 1 GiB), and plus 2,000 empty tensors (there, 1.55 million).
def to_half(blob, code):
    floats = struct.unpack(f"<{len(blob) // 4}f", blob)
    if code == "F16":
        return struct.pack(f"<{len(floats)}e", *floats)
    return b"".join(struct.pack("<f", x)[2:] for x in floats)  # bfloat16: float32's top two bytes
def rewrite(src, dst, change):
    raw = open(src, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    header, data = change(header, data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    open(dst, "wb").write(struct.pack("<Q", len(text)) + text + data)
def halved(code):
    def change(header, data):
        out, blobs, offset = {}, [], 0
        for name, e in header.items():
            if name == "__metadata__":
                out[name] = e
                continue
            blob = to_half(data[e["data_offsets"][0]:e["data_offsets"][1]], code)
            out[name] = {"dtype": code, "shape": e["shape"], "data_offsets": [offset, offset + len(blob)]}
            blobs.append(blob)
            offset += len(blob)
        return out, b"".join(blobs)
    return change
def extra(header, data):
    header["transformer.extra"] = {"dtype": "F32", "shape": [16], "data_offsets": [len(data), len(data) + 64]}
    return header, data + bytes(64)
def many_empty(header, data):
    for i in range(2000):
        header[f"e{i}"] = {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
    return header, data
tiny = sys.argv[1] + "/tiny.safetensors"
rewrite(tiny, sys.argv[1] + "/tiny_f16.safetensors", halved("F16"))
rewrite(tiny, sys.argv[1] + "/tiny_bf16.safetensors", halved("BF16"))
rewrite(tiny, sys.argv[1] + "/extra_tensor.safetensors", extra)
rewrite(tiny, sys.argv[1] + "/many_empty.safetensors", many_empty)
PY
cp "$out/gpt2_hf/tiny_f16.safetensors" "$out/gpt2_hf/many_empty.safetensors" "$out/safetensors/"
# fuzz_text: the first byte is the harness's knob (context and seed), the rest a data file: a word list with CRLF and
# an empty line, prose, multi-byte characters, an overlong form.
printf '\x00apple\nbanana\ncherry\r\n\ndate\n\xc3\xa9clair\nfig\n' > "$out/text/words.txt"
printf "\x05To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\nThe slings and arrows of outrageous fortune,\n" > "$out/text/prose.txt"
printf '\x02zw\xc3\xb6lf \xe2\x82\xac \xf0\x9f\x98\x80\n\xe6\x97\xa5\xe6\x9c\xac\nab\n' > "$out/text/unicode.txt"
printf '\x00ab\n\xc0\x80\ncd\n' > "$out/text/overlong.txt"
# fuzz_bpe_model: minbpe .model files: a trained one with a special token, one with a special id after a gap (as
# minbpe's register_special_tokens leaves it), and GPT-2's split pattern with no merges.
mkdir -p "$out/bpe_model"
printf 'minbpe v1\n%s\n1\n<|endoftext|> 262\n116 104\n256 101\n32 257\n97 110\n259 100\n32 119\n' \
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" \
  > "$out/bpe_model/gpt4_pattern.model"
printf 'minbpe v1\n\\p{L}+|\\s\n1\n<|endoftext|> 100257\n97 97\n256 97\n' > "$out/bpe_model/special_gap.model"
printf "minbpe v1\n's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+\n0\n" \
  > "$out/bpe_model/gpt2_pattern.model"
# ... and the shapes of file that once cost the reader far more than their size (tests/data/hostile_bpe_models.h makes
# the same for the tests): merges that double a token (2^40 bytes from 338), tokens one byte longer each (quadratic),
# many tokens of 2 KB, and many special tokens (once compared pairwise). Each is refused, or read, within the
# harness's -rss_limit_mb and -timeout (fuzz/run.sh).
python3 - "$out/bpe_model" <<'PY'
import sys
out = sys.argv[1]
def header(specials=0):
    return "minbpe v1\n\\p{L}+|\\s+|.\n%d\n" % specials
def doubling(merges):
    return header() + "97 97\n" + "".join("%d %d\n" % (255 + r, 255 + r) for r in range(1, merges))
def growing(merges):
    return header() + "97 97\n" + "".join("%d 97\n" % (255 + r) for r in range(1, merges))
def wide(pairs):
    return (doubling(10) + "".join("265 %d\n" % b for b in range(256))
            + "".join("%d %d\n" % (266 + p // 256, 266 + p % 256) for p in range(pairs)))
def specials(n):
    return header(n) + "".join("<s%d> %d\n" % (i, 256 + i) for i in range(n))
for name, text in [("doubling", doubling(40)), ("growing", growing(2000)), ("wide", wide(1000)),
                   ("specials", specials(2000))]:
    open("%s/hostile_%s.model" % (out, name), "w").write(text)
PY
ls -l "$out"/*
