#!/usr/bin/env bash
# Two builds of one program, timed in turn: a whole process at a time (start-up and set-up included), B then A, then
# B, A, ... so a drift in the machine's speed moves both sides of a pair alike; the ratio A/B is taken pair by pair
# and the median of the pairs is what to quote. One unmeasured pair first (page cache, CPU frequency).
#
#   bash bench/ab.sh [-n PAIRS] OLD_BIN NEW_BIN -- PROGRAM [ARG ...]
#     OLD_BIN, NEW_BIN  the bin/ folders of the two builds (B: the baseline, A: the change)
#     PROGRAM ARG ...   a program of those folders and its arguments, e.g. cppgrad-gpt train --steps 40 --quiet
#     -n PAIRS          measured pairs (default 5)
# Prints each pair's cpu (user + system) and wall seconds, then the median A/B of each and A's and B's peak resident
# memory. The programs run in the current folder; their output is thrown away. Needs GNU time (/usr/bin/time, Debian's `time`).
set -euo pipefail
pairs=5
if [[ ${1:-} == -n ]]; then pairs=$2; shift 2; fi
if [[ $# -lt 4 || $3 != -- ]]; then
  echo "usage: bash bench/ab.sh [-n PAIRS] OLD_BIN NEW_BIN -- PROGRAM [ARG ...]" >&2
  exit 2
fi
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
shift 3
program=$1
shift
for dir in "$old" "$new"; do
  [[ -x $dir/$program ]] || { echo "ab.sh: $dir/$program is not a program" >&2; exit 2; }
done
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: -n $pairs: give a number of pairs, 1 or more" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run of DIR's program with the arguments, in the current folder: leaves "cpu_s wall_s peak_kb" in $work/run.txt.
run() {
  local dir=$1
  shift
  /usr/bin/time -f '%U %S %e %M' -o "$work/time.txt" "$dir/$program" "$@" >"$work/out.txt" 2>&1 ||
    { echo "ab.sh: $dir/$program failed: $(tail -n 3 "$work/out.txt")" >&2; exit 1; }
  awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' "$work/time.txt" >"$work/run.txt"
}

run "$old" "$@"
run "$new" "$@"
for ((i = 1; i <= pairs; ++i)); do
  run "$old" "$@"
  read -r bc bw bm <"$work/run.txt"
  run "$new" "$@"
  read -r ac aw am <"$work/run.txt"
  echo "$i $bc $ac $bw $aw $bm $am" >>"$work/pairs.txt"
done
printf 'pair  B cpu  A cpu  A/B cpu  B wall  A wall  A/B wall\n'
awk '{ printf "%4d %6.2f %6.2f %8.3f %7.2f %7.2f %9.3f\n", $1, $2, $3, $3 / $2, $4, $5, $5 / $4 }' "$work/pairs.txt"
awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { cpu[NR] = $3 / $2; wall[NR] = $5 / $4; bm[NR] = $6; am[NR] = $7 }
  END {
    printf "median A/B: cpu %.3f, wall %.3f (%d pairs); peak RSS: B %.0f MB, A %.0f MB\n",
           median(cpu, NR), median(wall, NR), NR, median(bm, NR) / 1024, median(am, NR) / 1024
  }' "$work/pairs.txt"
