#!/usr/bin/env bash
# Times a contributor's builds at one commit, as docs/performance.md's build-time table reports them: a clean clone, CMake's
# default generator (make), Release, -j2, no compiler cache.
#   bash tools/contributor_build_times.sh [COMMIT]        (default: HEAD; run from the repository; takes ~10 minutes)
#   CPPGRAD_GENERATOR=Ninja bash tools/contributor_build_times.sh    (the Contributing section's generator)
# It prints one line per step: the wall time, the objects compiled and the CPU time. The steps:
#   first_dev     the contributor's targets (cppgrad_tests cppgrad-gradcheck) from an empty build directory
#   op_all        adding an op as docs/add-an-op.md does (`square`: its declaration, its definition, a registry
#                 entry, a value test; not the guide's softplus, whose pasted copy the docs tests build beside the
#                 real tree), then `cmake --build build -j2` (everything)
#   op_dev        the same change, then only the contributor's targets
#   body_dev      an edit to one op's body (core/ops/elementwise.cpp touched), the contributor's targets
#   first_all     the whole build from an empty build directory
# At commits before the op headers were split (core/ops/unary.h), the op is declared in core/ops.h and defined in
# core/ops/elementwise.cpp, where the guide put it then. Check `uptime` first: another busy process skews every figure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=${1:-HEAD}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/src"
cd "$work/src"
git checkout -q "$commit"

step() {  # step NAME COMMAND...: runs it, prints its wall time, objects and CPU time
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
  end=$(date +%s.%N)
  read -r user sys <"$work/$name.time"
  printf '%-10s %6.1f s  %3d objects  CPU %.0f s  (load %s)\n' "$name" "$(echo "$end - $start" | bc)" \
    "$(grep -c 'Building CXX' "$work/$name.log")" "$(echo "$user + $sys" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
}

add_op() {  # square, written where docs/add-an-op.md says an op goes
  local decl=core/ops/unary.h def=core/ops/unary.cpp
  [[ -f $decl ]] || decl=core/ops.h def=core/ops/elementwise.cpp
  python3 - "$decl" "$def" <<'PY'
import sys
decl, deff = sys.argv[1:]
def insert(path, anchor, text, after=False, last=False):
    s = open(path).read()
    i = s.rindex(anchor) if last else s.index(anchor)
    if after: i = s.index('\n', i) + 1
    open(path, 'w').write(s[:i] + text + s[i:])
insert(decl, 'Tensor erf(', 'Tensor square(const Tensor& x, std::source_location where = std::source_location::current());\n', after=True)
insert(deff, '}  // namespace cppgrad', '''// out = x^2;  dx = 2 g x
Tensor square(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "square", [](auto v) { return v * v; });
  return record_op(out, "square", {x}, [x](const Tensor& g) { return TensorList{mul(mul(g, x), 2.0)}; }, where);
}

''', last=True)
insert('core/checks/elementwise_cases.cpp', '  check("Relu"', '''  check("Square", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return square(in[0]); }, Inputs{leaf({2, 3}, seed + 20, -3, 3)}};
  });
''')
insert('tests/core/test_ops_values.cpp', '}  // namespace\n', '''TEST(OpValues, SquareForTiming) {
  Tensor x = Tensor::from_vector<double>({-1, 0, 2}, {3});
  EXPECT_THAT(square(x).to_vector<double>(), ElementsAre(1.0, 0.0, 4.0));
}

''', last=True)
PY
}

dev=(--target cppgrad_tests cppgrad-gradcheck)
generator=()
[[ -n ${CPPGRAD_GENERATOR:-} ]] && generator=(-G "$CPPGRAD_GENERATOR")
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log"
step first_dev cmake --build build -j2 "${dev[@]}"
cmake --build build -j2 >"$work/rest.log" 2>&1
add_op
step op_all cmake --build build -j2
git checkout -q . && cmake --build build -j2 >"$work/undo.log" 2>&1
add_op
step op_dev cmake --build build -j2 "${dev[@]}"
./build/bin/cppgrad_tests --gtest_filter='*Square*' >"$work/square.log" || { cat "$work/square.log"; exit 1; }
git checkout -q . && cmake --build build -j2 "${dev[@]}" >"$work/undo.log" 2>&1
touch core/ops/elementwise.cpp
step body_dev cmake --build build -j2 "${dev[@]}"
cmake -S . -B build-all "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >"$work/configure-all.log"
step first_all cmake --build build-all -j2
