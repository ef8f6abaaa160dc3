// float16 and bfloat16 widened to float32 (core/half.h) against an independent reference: every one of the 65,536
// bit patterns of each format, decoded from the IEEE definition with ldexp (sign, biased exponent, mantissa; no bit
// shuffling), and the NaN bit patterns PyTorch 1.13's `.float()` gives (read off PyTorch, quoted below).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/half.h"  // and std::bit_cast (core/bit_cast.h)

namespace cppgrad {
namespace {

// The value of a binary floating format with `exponent_bits` and `mantissa_bits`, by its definition.
double ieee_value(std::uint32_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1u;
  const std::uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const std::uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  double magnitude;
  if (exponent == (1u << exponent_bits) - 1)
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0)  // subnormal: 0.mantissa * 2^(1 - bias)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  else  // 1.mantissa * 2^(exponent - bias)
    magnitude = std::ldexp(static_cast<double>(mantissa + (1u << mantissa_bits)), static_cast<int>(exponent) - bias - mantissa_bits);
  return negative ? -magnitude : magnitude;
}

TEST(Half, EveryFloat16PatternWidensToItsValue) {
  int subnormals = 0, nans = 0;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float got = float16_to_float(static_cast<std::uint16_t>(h));
    const double want = ieee_value(h, 5, 10);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      // PyTorch keeps the payload (the mantissa's 10 bits, shifted up) and sets the quiet bit
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got), ((h & 0x8000u) << 16) | 0x7FC00000u | ((h & 0x3FFu) << 13))
          << std::hex << h;
      ++nans;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << std::hex << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000u) != 0) << std::hex << h;  // -0 stays -0
    subnormals += (h & 0x7C00u) == 0 && (h & 0x3FFu) != 0;
  }
  EXPECT_EQ(subnormals, 2 * 1023);
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(Half, EveryBfloat16PatternWidensToItsValue) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float got = bfloat16_to_float(static_cast<std::uint16_t>(b));
    const double want = ieee_value(b, 8, 7);
    if (std::isnan(want)) {  // PyTorch: the bits shifted up, payload and quiet bit as they were
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got), b << 16) << std::hex << b;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
    ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << b;
  }
}

// The named edges, and the bit patterns PyTorch 1.13 gave for them (torch.tensor(bits, dtype=torch.int16)
// .view(torch.float16).float().view(torch.int32)).
TEST(Half, EdgesAsPyTorchGivesThem) {
  const auto f16 = [](std::uint16_t h) { return std::bit_cast<std::uint32_t>(float16_to_float(h)); };
  EXPECT_EQ(float16_to_float(0x0001), std::ldexp(1.0f, -24));        // smallest subnormal
  EXPECT_EQ(float16_to_float(0x03FF), 1023 * std::ldexp(1.0f, -24)); // largest subnormal
  EXPECT_EQ(float16_to_float(0x0400), std::ldexp(1.0f, -14));        // smallest normal
  EXPECT_EQ(float16_to_float(0x7BFF), 65504.0f);                     // largest finite
  EXPECT_EQ(float16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(float16_to_float(0xC000), -2.0f);
  EXPECT_EQ(f16(0x8000), 0x80000000u);                               // -0
  EXPECT_EQ(f16(0x7C00), 0x7F800000u);                               // inf
  EXPECT_EQ(f16(0xFC00), 0xFF800000u);                               // -inf
  EXPECT_EQ(f16(0x7C01), 0x7FC02000u);                               // a signalling NaN comes out quiet
  EXPECT_EQ(f16(0xFC01), 0xFFC02000u);
  EXPECT_EQ(f16(0x7E00), 0x7FC00000u);
  EXPECT_EQ(f16(0x7D55), 0x7FEAA000u);
  EXPECT_EQ(f16(0x8001), 0xB3800000u);
  EXPECT_EQ(f16(0x03FF), 0x387FC000u);
  const auto bf16 = [](std::uint16_t b) { return std::bit_cast<std::uint32_t>(bfloat16_to_float(b)); };
  EXPECT_EQ(bf16(0x7F81), 0x7F810000u);  // a signalling NaN stays as it is
  EXPECT_EQ(bf16(0xFF81), 0xFF810000u);
  EXPECT_EQ(bf16(0x0001), 0x00010000u);  // float32's subnormal 2^-133
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
}

}  // namespace
}  // namespace cppgrad
