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
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace cppgrad::kernels {

inline float exp_float(float x) {
  x = std::min(std::max(x, -87.3f), 88.3f);
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding then subtracting it rounds to the nearest integer
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);  // times 2^n, n in [-126, 127]
}

template <typename T>
inline T exp_fast(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return exp_float(x);
  else return std::exp(x);
}

}  // namespace cppgrad::kernels
