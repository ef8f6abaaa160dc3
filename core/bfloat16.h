#pragma once
// bfloat16: float32's sign and 8 exponent bits with 7 of its 23 mantissa bits. It keeps float32's range (about
// 1e-38 to 3e38) and loses precision: 8 significant bits, about 3 decimal digits (rounding errs by at most 2^-8 of
// the value, 0.4%), so 257 is not a bfloat16 value (it rounds to 256) and 1 + 2^-9 rounds back to 1. The linear
// layers' products read their inputs in it under the bfloat16 precision (core/precision.h); core/half.h widens stored
// bfloat16 values back.
//
// round_to_bfloat16 is the rounding, bit for bit as the CPU's vcvtneps2bf16 (AVX512_BF16) gives it for each of the
// 2^32 float32 inputs: round to nearest, ties to even; a NaN stays a NaN (quieted); and a subnormal float32
// (below 2^-126 in magnitude) becomes a zero of its sign, as that instruction and vdpbf16ps read them. So a rounded
// value is never subnormal.
#include <cstdint>

#include "core/half.h"

namespace cppgrad {

// Always inlined, with no call inside (the builtin, not std::bit_cast): an AVX-512 target region calls it too
// (core/kernels/gemm_bf16_avx512.cpp), and an out-of-line copy compiled there could be the one the linker keeps.
[[gnu::always_inline]] constexpr std::uint16_t round_to_bfloat16(float x) {
  const std::uint32_t bits = __builtin_bit_cast(std::uint32_t, x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // NaN, quieted
  if ((bits & 0x7F800000u) == 0) return static_cast<std::uint16_t>((bits >> 16) & 0x8000u);        // 0, subnormal
  // Adding 0x7FFF rounds the lower half up when it is over half; the kept half's lowest bit breaks the tie (to even).
  // A carry may ripple into the exponent: the next power of two, or infinity past the largest finite value.
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// x rounded to the nearest bfloat16 value, as a float32 (exactly that value).
constexpr float bfloat16_round(float x) { return bfloat16_to_float(round_to_bfloat16(x)); }

}  // namespace cppgrad
