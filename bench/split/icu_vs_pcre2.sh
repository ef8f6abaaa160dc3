#!/usr/bin/env bash
# Builds bench/split/icu_vs_pcre2.cpp (with data/text_split.cpp, PCRE2 and ICU; needs libicu-dev, which cppgrad does
# not otherwise use) into a temporary directory and runs it on FILE: GPT-2's split on each library, the same pieces
# checked, the best of REPEATS runs each, interleaved.
#   bash bench/split/icu_vs_pcre2.sh FILE [REPEATS]       e.g. bible -f gen1:1-rev22:21 > kjv.txt; ... kjv.txt 7
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
file=${1:?usage: icu_vs_pcre2.sh FILE [REPEATS]}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
g++ -std=c++20 -O2 -I"$repo" "$repo/bench/split/icu_vs_pcre2.cpp" "$repo/data/text_split.cpp" "$repo/data/text_split_shared.cpp" \
  $(pkg-config --cflags --libs libpcre2-8 icu-i18n icu-uc) -lfmt -o "$work/icu_vs_pcre2"
echo "# $(lscpu | sed -n 's/^Model name: *//p'); $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/icu_vs_pcre2" "$file" "${2:-5}"
