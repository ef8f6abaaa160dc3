#!/usr/bin/env bash
# Checks the installed package as a stranger's project would use it. Installs cppgrad from a build directory into a
# fresh prefix, then:
#   1. every installed header compiles on its own against the prefix (a header whose includes are not installed
#      fails), with -Wall -Wextra -Werror, and the gradient-check registry (whose library is not installed) is not there;
#   2. examples/consumer is built against the prefix alone with -Wall -Wextra -Werror, twice (CMake's
#      find_package(cppgrad) and pkg-config), and both programs run: each defines an op of its own, gradchecks it,
#      trains with it and draws its loss curve with the training layer (cppgrad::train);
#   3. `cmake --install` refuses a program older than the library: with cppgrad-reverse made to look stale (its time
#      put back afterwards) it must fail with the one-line reason and install nothing; and `--component library`
#      installs the library all the same, without the programs.
#   bash examples/consumer/check.sh [BUILD_DIR]      (default: build; it must already be built)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
cxx=${CXX:-c++}
warnings="-Wall -Wextra -Werror"
work=$(mktemp -d)
stale_program=$build/bin/cppgrad-reverse
cleanup() {
  if [ -e "$work/stamp" ]; then touch -r "$work/stamp" "$stale_program"; fi  # step 3's program gets its time back
  rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
# Out of the source tree, so nothing but the installed files can be found.
cp -r "$repo/examples/consumer" "$work/src"

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
echo "installed into a fresh prefix: $(find "$prefix" -type f | wc -l) files"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

echo "-- every installed header on its own: echo '#include <cppgrad/...>' | c++ -fsyntax-only \$(pkg-config --cflags cppgrad)"
# One compiler per header, as many at once as there are CPUs; a failure prints the header and its first errors.
compile_alone() {
  # shellcheck disable=SC2086  # the flags are meant to split
  if ! errors=$(echo "#include <$1>" | "$cxx" -x c++ -fsyntax-only $warnings $cflags - 2>&1); then
    printf '   FAILED: <%s>\n%s\n' "$1" "$(echo "$errors" | head -n 5 | sed 's/^/     /')"
    return 1
  fi
}
export -f compile_alone
cflags=$(pkg-config --cflags cppgrad)
export cxx warnings cflags
headers=$(cd "$prefix/include" && find . -name '*.h' | sed 's|^\./||' | sort)
failed=0
# shellcheck disable=SC2016  # $1 is expanded by the inner bash
echo "$headers" | xargs -P "$(nproc)" -I{} bash -c 'compile_alone "$1"' _ {} || failed=1
if find "$prefix/include" -path '*/checks/*' | grep -q .; then
  echo "   FAILED: the gradient-check registry's headers (core/checks/, nn/checks/) are installed; its library is not"
  failed=1
fi
[ "$failed" = 0 ] || exit 1
echo "   $(echo "$headers" | wc -l) headers compile"

echo "-- find_package(cppgrad CONFIG REQUIRED)"
cmake -S "$work/src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$warnings" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cmake-build/consumer" "$work/loss.svg"
if ! grep -q '<polyline' "$work/loss.svg"; then echo "   FAILED: $work/loss.svg holds no curve"; exit 1; fi

echo "-- c++ main.cpp \$(pkg-config --cflags --libs cppgrad)"
echo "   pkg-config: $(pkg-config --cflags --libs cppgrad)"
# shellcheck disable=SC2046,SC2086  # the flags are meant to split
"$cxx" -O2 $warnings "$work/src/main.cpp" -o "$work/pc-consumer" $(pkg-config --cflags --libs cppgrad)
LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/pc-consumer"  # for a shared libcppgrad

echo "-- cmake --install refuses a program older than the library"
touch -r "$stale_program" "$work/stamp"
touch -d '2000-01-01' "$stale_program"
if cmake --install "$build" --prefix "$work/stale-prefix" >"$work/stale.log" 2>&1; then
  echo "   FAILED: it installed $stale_program, older than the library"
  exit 1
fi
if ! grep -q 'run `cmake --build' "$work/stale.log"; then
  echo "   FAILED: it failed without saying why:"; cat "$work/stale.log"; exit 1
fi
if [ -e "$work/stale-prefix" ]; then
  echo "   FAILED: it refused, but only after installing: $(find "$work/stale-prefix" -type f | wc -l) files"; exit 1
fi
echo "   refused, nothing installed: $(grep -m1 'run `cmake --build' "$work/stale.log" | sed 's/^ *//')"
echo "-- cmake --install --component library installs the library beside that stale program"
cmake --install "$build" --component library --prefix "$work/library-prefix" >"$work/library.log" 2>&1 \
  || { echo "   FAILED: the library's component was refused:"; cat "$work/library.log"; exit 1; }
if [ -e "$work/library-prefix/bin" ] || [ ! -e "$work/library-prefix/lib/cmake/cppgrad/cppgradConfig.cmake" ]; then
  echo "   FAILED: the library's component installed programs, or no CMake package:"
  find "$work/library-prefix" -maxdepth 3 | head; exit 1
fi
touch -r "$work/stamp" "$stale_program" && rm "$work/stamp"
echo "   installed $(find "$work/library-prefix" -type f | wc -l) files, no program"
