#!/usr/bin/env bash
# Installs the build and test dependencies of cppgrad on Debian 12 with apt-get (with --ci, also what CI's
# Clang stages and the distributed layer's tests need).
# Each package is checked first, so on a machine that has them all this does nothing and needs no network.
# Quiet on success; on failure it says which step failed and shows apt's output.
set -euo pipefail

packages=(cmake g++ make ninja-build pkg-config libgtest-dev libgmock-dev libfmt-dev libcxxopts-dev nlohmann-json3-dev libbenchmark-dev
          libpcre2-dev wamerican)  # wamerican: the word list cppgrad-gpt trains on by default (never read by a test)
# --ci: also Clang 16 with its OpenMP runtime and its sanitizer and libFuzzer runtimes, for CI's Clang stages, and
# Open MPI (its headers and library, and mpirun), for the distributed layer (distributed/) and its tests under mpirun.
# Without Open MPI everything else builds and passes; CMake says the distributed layer is skipped.
if [[ "${1:-}" == "--ci" ]]; then
  packages+=(clang-16 libomp-16-dev libclang-rt-16-dev libopenmpi-dev openmpi-bin)
fi

# `dpkg -s` also succeeds for a removed package whose config files remain, so check the status itself.
installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages: ${missing[*]}, and apt-get is not available (this script targets Debian 12)" >&2
  exit 1
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing packages: ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

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

run "apt-get update" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
run "installing ${missing[*]}" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"

for p in "${missing[@]}"; do
  if ! installed "$p"; then
    echo "install-deps: $p is still not installed after apt-get install" >&2
    exit 1
  fi
done
