#pragma once
// float16 and bfloat16 widened to float32, as PyTorch's `.float()` does it. cppgrad computes in float32 and float64
// only, so half-precision files (many shared GPT-2 models are F16 or BF16) are widened when read. Every value of
// either format is a float32 value, so the conversion is exact; these functions are it, bit for bit:
//   bfloat16 is float32's top 16 bits: the bits shifted up, NaN payloads and all (c10::BFloat16 does the same);
//   float16 (1 sign, 5 exponent, 10 mantissa bits): normal numbers re-biased (15 -> 127), subnormals
//   (mantissa * 2^-24) normalised, +-0 and +-inf kept, and a NaN keeps its payload with the quiet bit set, as
//   PyTorch's CPU conversion (F16C's vcvtph2ps and c10's scalar fp16_ieee_to_fp32_value) gives it.
#include <cstdint>

#include "core/bit_cast.h"  // std::bit_cast, where the standard library (libc++ 14: the WebAssembly build) has none

namespace cppgrad {

constexpr float bfloat16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

constexpr float float16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)  // inf (mantissa 0) or NaN: quiet bit 22 set, payload in bits 21..13
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa != 0 ? 0x400000u : 0u) | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);  // +-0
    // A subnormal, mantissa * 2^-24: shift the leading 1 up to bit 10 (the implicit bit), lowering the exponent
    // once per shift from float16's smallest normal exponent, 2^-14.
    std::int32_t e = -14;
    while ((mantissa & 0x400u) == 0) mantissa <<= 1, --e;
    return std::bit_cast<float>(sign | static_cast<std::uint32_t>(e + 127) << 23 | (mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(sign | (exponent - 15 + 127) << 23 | mantissa << 13);
}

}  // namespace cppgrad
