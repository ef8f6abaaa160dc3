#pragma once
// The SIMD types of the float kernels: f32x8 (8 lanes of 32-bit float, one AVX register), i32x8 (8 lanes of
// int32, for masks and shuffle indices) and f64x4 (4 lanes of double); and the few lane operations the float
// kernels share (attention, layer_norm, softmax): whole-vector loads and stores, sums and maxima across lanes,
// eight sums at once, and an 8 x 8 transpose in registers (of vectors, or of a block of memory).
//
// Vector extensions (GCC and Clang alike: vector_size, __builtin_shufflevector, __builtin_convertvector) compile to
// AVX where the build enables it and to narrower vectors or scalar code elsewhere.
// The library is built with AVX2 and a file including this header may not be (the tests): every function here is
// static and always inlined, so no two files can share a copy compiled for different vector ABIs, and GCC's warning
// about that ABI difference does not apply.
#include <cstdint>
#include <cstring>

namespace cppgrad::kernels {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));
using f64x4 = double __attribute__((vector_size(32)));

// Lane i of the result is lane I[i] of the 8 (one vector) or 16 (two vectors: a's lanes, then b's) lanes given.
#define CPPGRAD_SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)

// Unaligned whole-vector load and store: a fixed-size copy is one instruction (a variable-size one, a memcpy call).
[[gnu::always_inline]] static inline f32x8 load8(const float* p) {
  f32x8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] static inline void store8(float* p, f32x8 v) { std::memcpy(p, &v, sizeof v); }

// The sum of v's lanes in a fixed order, ((0+1)+(2+3))+((4+5)+(6+7)): the order lane_sums uses, so a row summed
// either way gives the same bits.
[[gnu::always_inline]] static inline float lane_total(f32x8 v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

// Every lane set to the largest (or the sum) of v's lanes: three shuffle steps instead of seven scalar ones.
[[gnu::always_inline]] static inline f32x8 lane_max(f32x8 a, f32x8 b) { return a > b ? a : b; }
[[gnu::always_inline]] static inline f32x8 all_lanes_max(f32x8 v) {
  v = lane_max(v, CPPGRAD_SHUFFLE8(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
  v = lane_max(v, CPPGRAD_SHUFFLE8(v, v, 2, 3, 0, 1, 6, 7, 4, 5));
  return lane_max(v, CPPGRAD_SHUFFLE8(v, v, 1, 0, 3, 2, 5, 4, 7, 6));
}
[[gnu::always_inline]] static inline f32x8 all_lanes_sum(f32x8 v) {
  v += CPPGRAD_SHUFFLE8(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
  v += CPPGRAD_SHUFFLE8(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
  return v + CPPGRAD_SHUFFLE8(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
}

// Lane r of the result = lane_total(p[r]), for 8 vectors at once: three rounds of pairwise merges (two shuffles and
// an add each), 7 merges in all instead of 8 separate sums across lanes.
[[gnu::always_inline]] static inline f32x8 lane_sums(const f32x8 (&p)[8]) {
  // Each merge adds the even-indexed and odd-indexed pairs (then quads, then halves) of a and b side by side.
  auto pairs = [](f32x8 a, f32x8 b) {
    return CPPGRAD_SHUFFLE8(a, b, 0, 8, 2, 10, 4, 12, 6, 14) + CPPGRAD_SHUFFLE8(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
  };
  auto quads = [](f32x8 a, f32x8 b) {
    return CPPGRAD_SHUFFLE8(a, b, 0, 1, 8, 9, 4, 5, 12, 13) + CPPGRAD_SHUFFLE8(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  auto halves = [](f32x8 a, f32x8 b) {
    return CPPGRAD_SHUFFLE8(a, b, 0, 1, 2, 3, 8, 9, 10, 11) + CPPGRAD_SHUFFLE8(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
  };
  const f32x8 x01 = pairs(p[0], p[1]), x23 = pairs(p[2], p[3]), x45 = pairs(p[4], p[5]), x67 = pairs(p[6], p[7]);
  return halves(quads(x01, x23), quads(x45, x67));
}

// Eight vectors read as an 8 x 8 matrix (r[i] is row i), transposed in registers: the classic AVX sequence of
// unpacks, shuffles and 128-bit permutes, written as portable shuffles.
[[gnu::always_inline]] static inline void transpose8(f32x8 (&r)[8]) {
  f32x8 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = CPPGRAD_SHUFFLE8(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = CPPGRAD_SHUFFLE8(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  f32x8 u[8];
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + h] = CPPGRAD_SHUFFLE8(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + h + 2] = CPPGRAD_SHUFFLE8(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  // u[0], u[2], u[1], u[3] hold columns 0-3 of rows 0-3 (low half) and columns 4-7 (high half); u[4..7] rows 4-7.
  const int order[4] = {0, 2, 1, 3};
  for (int c = 0; c < 4; ++c) {
    const f32x8 lo = u[order[c]], hi = u[4 + order[c]];
    r[c] = CPPGRAD_SHUFFLE8(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11);
    r[c + 4] = CPPGRAD_SHUFFLE8(lo, hi, 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// 8 rows of 8 floats (rows rs apart) transposed into 8 rows of out (rows out_rs apart), through registers.
[[gnu::always_inline]] static inline void transpose8x8(const float* src, std::int64_t rs, float* out,
                                                       std::int64_t out_rs) {
  f32x8 r[8];
  for (int i = 0; i < 8; ++i) r[i] = load8(src + i * rs);
  transpose8(r);
  for (int i = 0; i < 8; ++i) store8(out + i * out_rs, r[i]);
}

#undef CPPGRAD_SHUFFLE8
#pragma GCC diagnostic pop

}  // namespace cppgrad::kernels
