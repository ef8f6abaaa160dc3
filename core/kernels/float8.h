#pragma once
// 8 lanes of float as one value, and the few lane operations the float kernels share (attention, layer_norm,
// softmax): whole-vector loads and stores, sums and maxima across lanes, eight sums at once, and an 8 x 8
// transpose in registers.
//
// GCC vector extensions compile to AVX where the build enables it and to narrower vectors or scalar code elsewhere.
// The library is built with AVX2 and a file including this header may not be (the tests): every function here is
// static and always inlined, so no two files can share a copy compiled for different vector ABIs, and GCC's warning
// about that ABI difference does not apply.
#include <cstdint>
#include <cstring>

namespace cppgrad::kernels {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using float8 = float __attribute__((vector_size(32)));
using int8 = std::int32_t __attribute__((vector_size(32)));

// Unaligned whole-vector load and store: a fixed-size copy is one instruction (a variable-size one, a memcpy call).
[[gnu::always_inline]] static inline float8 load8(const float* p) {
  float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] static inline void store8(float* p, float8 v) { std::memcpy(p, &v, sizeof v); }

// The sum of v's lanes in a fixed order, ((0+1)+(2+3))+((4+5)+(6+7)): the order lane_sums uses, so a row summed
// either way gives the same bits.
[[gnu::always_inline]] static inline float lane_total(float8 v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

// Every lane set to the largest (or the sum) of v's lanes: three shuffle steps instead of seven scalar ones.
[[gnu::always_inline]] static inline float8 all_lanes_max(float8 v) {
  using idx = int8;
  v = v > __builtin_shuffle(v, idx{4, 5, 6, 7, 0, 1, 2, 3}) ? v : __builtin_shuffle(v, idx{4, 5, 6, 7, 0, 1, 2, 3});
  v = v > __builtin_shuffle(v, idx{2, 3, 0, 1, 6, 7, 4, 5}) ? v : __builtin_shuffle(v, idx{2, 3, 0, 1, 6, 7, 4, 5});
  return v > __builtin_shuffle(v, idx{1, 0, 3, 2, 5, 4, 7, 6}) ? v : __builtin_shuffle(v, idx{1, 0, 3, 2, 5, 4, 7, 6});
}
[[gnu::always_inline]] static inline float8 all_lanes_sum(float8 v) {
  using idx = int8;
  v += __builtin_shuffle(v, idx{4, 5, 6, 7, 0, 1, 2, 3});
  v += __builtin_shuffle(v, idx{2, 3, 0, 1, 6, 7, 4, 5});
  return v + __builtin_shuffle(v, idx{1, 0, 3, 2, 5, 4, 7, 6});
}

// Lane r of the result = lane_total(p[r]), for 8 vectors at once: three rounds of pairwise merges (two shuffles and
// an add each), 7 merges in all instead of 8 separate sums across lanes.
[[gnu::always_inline]] static inline float8 lane_sums(const float8 (&p)[8]) {
  using idx = int8;
  auto merge = [](float8 a, float8 b, idx m1, idx m2) { return __builtin_shuffle(a, b, m1) + __builtin_shuffle(a, b, m2); };
  const idx pairs_lo{0, 8, 2, 10, 4, 12, 6, 14}, pairs_hi{1, 9, 3, 11, 5, 13, 7, 15};
  const idx quads_lo{0, 1, 8, 9, 4, 5, 12, 13}, quads_hi{2, 3, 10, 11, 6, 7, 14, 15};
  const idx halves_lo{0, 1, 2, 3, 8, 9, 10, 11}, halves_hi{4, 5, 6, 7, 12, 13, 14, 15};
  const float8 x01 = merge(p[0], p[1], pairs_lo, pairs_hi), x23 = merge(p[2], p[3], pairs_lo, pairs_hi);
  const float8 x45 = merge(p[4], p[5], pairs_lo, pairs_hi), x67 = merge(p[6], p[7], pairs_lo, pairs_hi);
  const float8 y0 = merge(x01, x23, quads_lo, quads_hi), y1 = merge(x45, x67, quads_lo, quads_hi);
  return merge(y0, y1, halves_lo, halves_hi);
}

// Eight vectors read as an 8 x 8 matrix (r[i] is row i), transposed in registers: the classic AVX sequence of
// unpacks, shuffles and 128-bit permutes, written as GCC shuffles.
[[gnu::always_inline]] static inline void transpose8(float8 (&r)[8]) {
  using idx = int8;
  float8 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], idx{0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], idx{2, 10, 3, 11, 6, 14, 7, 15});
  }
  float8 u[8];
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + h] = __builtin_shuffle(t[i + h], t[i + h + 2], idx{0, 1, 8, 9, 4, 5, 12, 13});
      u[i + h + 2] = __builtin_shuffle(t[i + h], t[i + h + 2], idx{2, 3, 10, 11, 6, 7, 14, 15});
    }
  // u[0], u[2], u[1], u[3] hold columns 0-3 of rows 0-3 (low half) and columns 4-7 (high half); u[4..7] rows 4-7.
  const int order[4] = {0, 2, 1, 3};
  for (int c = 0; c < 4; ++c) {
    const float8 lo = u[order[c]], hi = u[4 + order[c]];
    r[c] = __builtin_shuffle(lo, hi, idx{0, 1, 2, 3, 8, 9, 10, 11});
    r[c + 4] = __builtin_shuffle(lo, hi, idx{4, 5, 6, 7, 12, 13, 14, 15});
  }
}

#pragma GCC diagnostic pop

}  // namespace cppgrad::kernels
