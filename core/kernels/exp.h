#pragma once
// e^x for float rows, in a form the compiler vectorises. libm's expf is a function call per element, so a
// softmax row loop calling it stays scalar; exp_float is inline straight-line arithmetic, and a loop of it
// becomes 8-wide AVX2 code.
//
// x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2 (Cody-Waite: ln2 split in two parts so r is exact),
// e^r from Cephes' degree-6 polynomial for expf, and 2^n written directly into the exponent bits. Within 2 ulp
// of std::exp (Kernels.ExpFloatMatchesLibm). Inputs below -87.3 (-inf included) give about 1e-38, not 0:
// callers that need exact zeros (masked entries) select them.
// exp_fast<double> is std::exp: float64 is for gradient checks and parity, which want libm's precision.
#include "core/bit_cast.h"
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/kernels/simd.h"

namespace cppgrad::kernels {

// The vector forms are static and always inlined, for the reason given in simd.h.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace detail {

// 2^n for whole n in [-126, 127], written into the exponent bits. F is float or a vector of floats of any width
// (8 lanes here, 16 in the AVX-512 kernels): a comparison of two float vectors has the type of their lanes as int32.
template <typename F>
[[gnu::always_inline]] static inline F pow2(F n) {
  if constexpr (std::is_same_v<F, float>) {
    if (n != n) return n;  // NaN in, NaN out: converting NaN to an integer is undefined (UBSan stops there)
    return std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
  } else {
    using I = decltype(n < n);  // the builtin, not std::bit_cast: a 16-lane instance of that would be AVX2 code
    return __builtin_bit_cast(F, (__builtin_convertvector(n, I) + 127) << 23);
  }
}

// F is float or a float vector; every step is lane-wise, and the clamps are selects, so the vector form has no branch.
template <typename F>
[[gnu::always_inline]] static inline F exp_cephes(F x) {
  x = x < -87.3f ? F{} - 87.3f : x;
  x = x > 88.3f ? F{} + 88.3f : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding then subtracting it rounds to the nearest integer
  const F n = (x * 1.44269504088896341f + kRound) - kRound;
  const F r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  F p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * pow2(n);  // times 2^n, n in [-126, 127]
}

}  // namespace detail

inline float exp_float(float x) { return detail::exp_cephes(x); }
// The same on 8 lanes at once, for loops the compiler would not vectorise by itself (rows of exactly 8).
[[gnu::always_inline]] static inline f32x8 exp_f32x8(f32x8 x) { return detail::exp_cephes(x); }
#pragma GCC diagnostic pop

template <typename T>
inline T exp_fast(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return exp_float(x);
  else return std::exp(x);
}

}  // namespace cppgrad::kernels
