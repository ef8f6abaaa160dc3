#!/usr/bin/env bash
# compare_ids_selftest.sh WORK_DIR: proves that compare_ids.sh, which the corpus comparison (corpus_gpt2.sh) judges
# cppgrad's ids with, catches a wrong answer: the committed reference ids of the hostile sample against themselves
# pass, and copies with one id changed, one id dropped, or one id added fail, each naming the id where they part.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$1
reference="$here/../golden/tokenizer/hostile_unicode.txt.ids"
mkdir -p "$work"

failures=0
expect() {  # expect <status> <text the message must hold> <ids file>
  local status=0 out
  out=$(bash "$here/compare_ids.sh" "$reference" "$3") || status=$?
  if [[ $status -ne $1 || "$out" != *"$2"* ]]; then
    echo "FAILED: compare_ids.sh on $(basename "$3"): status $status (expected $1), said: '$out' (expected '$2')"
    failures=$((failures + 1))
  fi
}

# The 500th id, changed to the next id; the 500th dropped; one id added at the end.
ids() { tr ' ' '\n' <"$reference"; }
joined() { paste -sd ' '; }
ids | awk 'NR == 500 { $0 = $0 + 1 } { print }' | joined >"$work/changed.ids"
ids | awk 'NR != 500' | joined >"$work/dropped.ids"
ids | awk '{ print } END { print 13 }' | joined >"$work/added.ids"
cp "$reference" "$work/same.ids"

expect 0 "" "$work/same.ids"
expect 1 "id 500: expected $(ids | sed -n 500p), got $(( $(ids | sed -n 500p) + 1 ))" "$work/changed.ids"
expect 1 "ids expected" "$work/dropped.ids"
expect 1 "id 1966: expected none, got 13" "$work/added.ids"
[[ $failures -eq 0 ]] || exit 1
echo "compare_ids.sh passes the same ids and fails a changed, a dropped and an added id"
