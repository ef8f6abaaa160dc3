#!/usr/bin/env bash
# The page's training speed in headless Chromium against native cppgrad on one thread, on this machine, for the same
# config (cppgrad-gpt train's defaults: the words GPT), in one run; prints a Markdown table (docs/browser.md).
#   bash bench/wasm/browser_speed.sh [--native build/bin/cppgrad-gpt] [--dist web/dist]
# Needs web/dist (cmake --build --preset wasm --target web_dist), Chromium and web/test's puppeteer-core
# (bash .ci/install-deps.sh --web). Both sides: 100 warm-up steps, then 200 steps timed, without evaluations:
#   - the page: web/test/speed.mjs, one worker, the page's clock between the progress reports at steps 100 and 300;
#   - native: `cppgrad-gpt train --threads 1 --steps 300 --eval-every 100`, the training time between its
#     evaluations at steps 100 and 300 (elapsed_s in --metrics-out counts steps only, not evaluations).
# Run it on a quiet machine: the table shows `uptime`'s load averages.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

native=build/bin/cppgrad-gpt dist=web/dist
while [[ $# -gt 0 ]]; do
  case "$1" in
    --native) native=${2:?--native needs a path}; shift 2 ;;
    --dist) dist=${2:?--dist needs a folder}; shift 2 ;;
    *) echo "browser_speed: unknown argument '$1' (expected --native PATH or --dist DIR)" >&2; exit 2 ;;
  esac
done
warmup=100 steps=200
if [[ ! -x "$native" ]]; then
  echo "browser_speed: no native cppgrad-gpt at '$native': cmake -S . -B build && cmake --build build --target cppgrad-gpt" >&2
  exit 2
fi
native=$(realpath "$native")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

load_before=$(uptime | sed 's/.*load average: //')
page=$(node web/test/speed.mjs --dist "$dist" --warmup "$warmup" --steps "$steps")
(cd "$scratch" && "$native" train --threads 1 --steps $((warmup + steps)) --eval-every "$warmup" --samples 0 --quiet \
   --metrics-out "$scratch/native.jsonl" >/dev/null)
load_after=$(uptime | sed 's/.*load average: //')

# node reads both: the page's JSON and native's metrics lines (elapsed_s at the evaluations of steps 100 and 300).
node - "$page" "$scratch/native.jsonl" "$warmup" "$steps" "$load_before" "$load_after" <<'EOF'
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const [page, nativeFile, warmup, steps, loadBefore, loadAfter] = process.argv.slice(2);
const p = JSON.parse(page);
const evals = fs.readFileSync(nativeFile, 'utf8').trim().split('\n').map(JSON.parse).filter((e) => 'step' in e);
const at = (s) => evals.find((e) => e.step === s).elapsed_s;
const nativeSeconds = at(Number(warmup) + Number(steps)) - at(Number(warmup));
const nativeRate = Number(steps) / nativeSeconds;
const lscpu = execFileSync('lscpu', { encoding: 'utf8' });
const model = (lscpu.match(/^Model name:\s*(.*)$/m) ?? [, os.cpus()[0].model])[1].trim();
const flags = (lscpu.match(/^Flags:\s*(.*)$/m) ?? [, ''])[1].split(/\s+/);
const simd = flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : 'neither AVX2 nor AVX-512';
const ratio = p.steps_per_s / nativeRate;
console.log(`CPU: ${model} (${simd}; ${os.cpus().length} logical CPUs); ${p.chromium}; node ${process.version}`);
console.log(`load averages (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after`);
console.log('');
console.log('| words GPT, one thread, 200 steps after 100 of warm-up | steps/s | ms/step | page / native |');
console.log('|---|---:|---:|---:|');
console.log(`| native cppgrad-gpt train --threads 1 (${simd}) | ${nativeRate.toFixed(2)} | ${(1000 / nativeRate).toFixed(1)} | 1 |`);
console.log(`| the page in headless Chromium, one Web Worker (WebAssembly SIMD, 128 bits) | ${p.steps_per_s.toFixed(2)} | ` +
            `${(1000 / p.steps_per_s).toFixed(1)} | ${ratio.toFixed(2)} |`);
console.log('');
console.log(`the worker's own ms/step at the end (its last chunk, performance.now()): ${p.ms_per_step_page.toFixed(1)}`);
console.log(`target: at least a third of native (0.33): ${ratio >= 1 / 3 ? 'met' : 'missed'}`);
EOF
