#!/usr/bin/env bash
# The page's training speed in headless Chromium against native cppgrad on one thread, on this machine, for the same
# config (cppgrad-gpt train's defaults: the words GPT), in one run; prints a Markdown table (docs/browser.md).
#   bash bench/wasm/browser_speed.sh [--native build/bin/cppgrad-gpt] [--dist build-wasm/web/dist] [--runs 3]
# Needs build-wasm/web/dist (cmake --build --preset wasm --target web_dist), Chromium and web/test's puppeteer-core
# (bash .ci/install-deps.sh --web). Both sides: 100 warm-up steps, then 200 steps timed, without evaluations:
#   - the page: web/test/speed.mjs, one worker, the page's clock between the progress reports at steps 100 and 300;
#   - native: `cppgrad-gpt train --threads 1 --steps 300 --eval-every 100`, the training time between its
#     evaluations at steps 100 and 300 (elapsed_s in --metrics-out counts steps only, not evaluations).
# Run it on a quiet machine: the table shows `uptime`'s load averages. Each run is a pair, the page then native right
# after it, so that both see the same machine; the ratio is taken within each pair and the median of the pairs' ratios
# is the result (a shared machine's speed drifts by 20% and more between minutes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

native=build/bin/cppgrad-gpt dist=build-wasm/web/dist runs=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --native) native=${2:?--native needs a path}; shift 2 ;;
    --dist) dist=${2:?--dist needs a folder}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    *) echo "browser_speed: unknown argument '$1' (expected --native PATH, --dist DIR or --runs N)" >&2; exit 2 ;;
  esac
done
if [[ ! "$runs" =~ ^[1-9][0-9]?$ ]]; then
  echo "browser_speed: --runs must be a whole number from 1 to 99, got '$runs'" >&2
  exit 2
fi
warmup=100 steps=200
if [[ ! -x "$native" ]]; then
  echo "browser_speed: no native cppgrad-gpt at '$native': cmake -S . -B build && cmake --build build --target cppgrad-gpt" >&2
  exit 2
fi
native=$(realpath "$native")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

load_before=$(uptime | sed 's/.*load average: //')
for ((run = 1; run <= runs; run++)); do
  node web/test/speed.mjs --dist "$dist" --warmup "$warmup" --steps "$steps" > "$scratch/page$run.json"
  (cd "$scratch" && "$native" train --threads 1 --steps $((warmup + steps)) --eval-every "$warmup" --samples 0 --quiet \
     --metrics-out "$scratch/native$run.jsonl" >/dev/null)
done
load_after=$(uptime | sed 's/.*load average: //')

# node reads both: the page's JSON and native's metrics lines (elapsed_s at the evaluations of steps 100 and 300).
node - "$scratch" "$runs" "$warmup" "$steps" "$load_before" "$load_after" <<'EOF'
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const [scratch, runs, warmup, steps, loadBefore, loadAfter] = process.argv.slice(2);
const pairs = [];
for (let run = 1; run <= Number(runs); ++run) {
  const p = JSON.parse(fs.readFileSync(path.join(scratch, `page${run}.json`), 'utf8'));
  const evals = fs.readFileSync(path.join(scratch, `native${run}.jsonl`), 'utf8').trim().split('\n').map(JSON.parse)
    .filter((e) => 'step' in e);
  const at = (s) => evals.find((e) => e.step === s).elapsed_s;
  const nativeRate = Number(steps) / (at(Number(warmup) + Number(steps)) - at(Number(warmup)));
  pairs.push({ page: p, nativeRate, ratio: p.steps_per_s / nativeRate });
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1] / 2 + s[s.length >> 1] / 2; };
const p = pairs[0].page;
const lscpu = execFileSync('lscpu', { encoding: 'utf8' });
const model = (lscpu.match(/^Model name:\s*(.*)$/m) ?? [, os.cpus()[0].model])[1].trim();
const flags = (lscpu.match(/^Flags:\s*(.*)$/m) ?? [, ''])[1].split(/\s+/);
const simd = flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : 'neither AVX2 nor AVX-512';
const ratio = median(pairs.map((q) => q.ratio));
const list = (f) => pairs.map((q) => f(q).toFixed(2)).join(', ');
console.log(`CPU: ${model} (${simd}; ${os.cpus().length} logical CPUs); ${p.chromium}; node ${process.version}`);
console.log(`load averages (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after`);
console.log('');
console.log(`| words GPT, one thread, 200 steps after 100 of warm-up; ${runs} runs, each the page then native | steps/s | page / native |`);
console.log('|---|---:|---:|');
console.log(`| native cppgrad-gpt train --threads 1 (${simd}) | ${list((q) => q.nativeRate)} | 1 |`);
console.log(`| the page in headless Chromium, one Web Worker (WebAssembly SIMD, 128 bits) | ${list((q) => q.page.steps_per_s)} | ` +
            `${list((q) => q.ratio)} |`);
console.log('');
console.log(`median of the ${runs} runs' ratios: ${ratio.toFixed(3)}`);
console.log(`the worker's own ms/step at the end of run 1 (its last chunk, performance.now()): ${p.ms_per_step_page.toFixed(1)}`);
console.log(`target: at least a third of native (0.333): ${ratio >= 1 / 3 ? 'met' : 'missed'}`);
EOF
