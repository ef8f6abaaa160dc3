#!/usr/bin/env bash
# Installs cppgrad from a build directory into a fresh prefix and builds examples/consumer against that prefix
# alone, twice, as a stranger's project would: with CMake's find_package(cppgrad) and with pkg-config. Runs both.
#   bash examples/consumer/check.sh [BUILD_DIR]      (default: build; it must already be built)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# Out of the source tree, so nothing but the installed files can be found.
cp -r "$repo/examples/consumer" "$work/src"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
echo "installed into a fresh prefix: $(find "$prefix" -type f | wc -l) files"

echo "-- find_package(cppgrad CONFIG REQUIRED)"
cmake -S "$work/src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cmake-build/consumer"

echo "-- c++ main.cpp \$(pkg-config --cflags --libs cppgrad)"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "   pkg-config: $(pkg-config --cflags --libs cppgrad)"
# shellcheck disable=SC2046  # the flags are meant to split
"${CXX:-c++}" -O2 "$work/src/main.cpp" -o "$work/pc-consumer" $(pkg-config --cflags --libs cppgrad)
LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/pc-consumer"  # for a shared libcppgrad
