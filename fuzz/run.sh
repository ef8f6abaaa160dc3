#!/usr/bin/env bash
# Runs every libFuzzer harness for SECONDS each, starting from the committed seed corpus (copied, so the
# repository is not written to). Exit status 0 when no harness found a crash, a leak, a timeout or an
# out-of-memory input; otherwise 1, with the input that triggered it saved in the work directory it prints.
#   bash fuzz/run.sh BUILD_DIR [SECONDS]        (BUILD_DIR configured with CXX=clang++-16 -DCPPGRAD_FUZZ=ON)
# Longer: bash fuzz/run.sh build-fuzz 3600; or one harness by hand with its own flags, e.g.
#   build-fuzz/fuzz/fuzz_safetensors -max_total_time=600 -jobs=2 my_corpus fuzz/corpus/safetensors
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$1" && pwd)
seconds=${2:-20}
work=$(mktemp -d /tmp/cppgrad-fuzz.XXXXXX)
status=0
for harness in safetensors load_state_dict checkpoint text gpt2_hf bpe_model; do
  corpus=$work/$harness
  mkdir -p "$corpus"
  cp "$repo/fuzz/corpus/$harness"/* "$corpus/"
  echo "-- fuzz_$harness: ${seconds}s from $(ls "$corpus" | wc -l) seeds"
  # The fuzzers hunt for size, not only for crashes: an input that makes a reader use over 512 MB (or ask for it in one
  # malloc), or over 5 s, is a finding. The shapes that once got through cost 1-3 GB or 11-150 s; a reader's own bound
  # is 200 MB and 2 s natively (tests/cli/run_program.h), and ASan's shadow, redzones and quarantine add the rest.
  # CPPGRAD_FUZZ_DETECT_LEAKS=0 where LeakSanitizer cannot run (.ci/run probes for it).
  # ASan's quarantine of freed memory (256 MB by default) counts in the RSS too: 64 MB keeps the limit about the input.
  if ! (cd "$work" && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64" \
          "$build/fuzz/fuzz_$harness" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=512 \
          -detect_leaks="${CPPGRAD_FUZZ_DETECT_LEAKS:-1}" \
          -print_final_stats=1 "$corpus" >"$work/$harness.log" 2>&1); then
    status=1
    echo "FAILED: fuzz_$harness found a problem; its log and the input are in $work:"
    tail -40 "$work/$harness.log"
  else
    grep -E "stat::number_of_executed_units|cov:" "$work/$harness.log" | tail -2
  fi
done
[[ $status -eq 0 ]] && rm -rf "$work"
exit $status
