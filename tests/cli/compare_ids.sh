#!/usr/bin/env bash
# compare_ids.sh EXPECTED GOT: exit 0 when two files of token ids (as `cppgrad-gpt tokenize encode` and
# tests/golden/tokenizer/reference_ids.js print them) are the same; else exit 1 and say where they part: the first
# differing id's position (1-based) and both ids, and how many ids each file has.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: compare_ids.sh EXPECTED GOT" >&2; exit 2; }
expected=$1 got=$2
for f in "$expected" "$got"; do
  [[ -f "$f" && -r "$f" ]] || { echo "compare_ids.sh: cannot read $f" >&2; exit 2; }
done
cmp -s "$expected" "$got" && exit 0
count() { wc -w <"$1" | tr -d ' '; }
first=$(paste -d , <(tr -s ' \n' '\n\n' <"$expected") <(tr -s ' \n' '\n\n' <"$got") |
        awk -F, '$1 != $2 { printf "id %d: expected %s, got %s", NR, ($1 == "" ? "none" : $1), ($2 == "" ? "none" : $2); exit }' || true)
echo "token ids differ: $got against $expected: ${first:-same ids, other spacing}; $(count "$expected") ids expected, $(count "$got") got"
exit 1
