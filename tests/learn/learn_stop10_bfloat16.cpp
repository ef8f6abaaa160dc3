// Stop 10 (docs/learn.md): bfloat16. Read core/bfloat16.h, then the definition in core/kernels/gemm_bf16.h, and
// docs/bfloat16.md.
//
// Question: why does an FMA of two bfloat16 values, added to a float32 sum, give the bits vdpbf16ps gives? Each has 8
// significant bits, so their product has at most 16: float32's 24 hold it exactly, and the only rounding left is the
// addition's, which both make the same way.
// Exercise: write the rounding yourself (float32's top 16 bits, rounded to nearest, ties to even; a NaN stays a NaN,
// a subnormal becomes a zero of its sign) and check it against cppgrad's on every kind of value.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "learn.h"

namespace cppgrad::learn {
namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

// x rounded to the nearest bfloat16 value, as a float32.
float my_bfloat16_round(float x) {
  std::uint32_t b = bits_of(x);
  if (std::isnan(x)) return float_of((b | 0x00400000u) & 0xFFFF0000u);  // quiet, and still a NaN
  if ((b & 0x7F800000u) == 0) return float_of(b & 0x80000000u);         // zero or subnormal: a zero of its sign
  // Half of the dropped part's range is 0x8000: add just under it, plus the kept part's last bit, so that a tie
  // (exactly 0x8000) carries only when that bit is 1, rounding to the even neighbour.
  if (!kPlantedWrong) b += 0x7FFFu + ((b >> 16) & 1u);  // the mistake: no rounding, the low bits cut off
  return float_of(b & 0xFFFF0000u);
}

TEST(Stop10, YourRoundingIsCppgradsOnEveryKindOfValue) {
  for (const float x : {1.0f, 257.0f, 259.0f, 1.0f + 0x1p-9f, 1.0f + 0x1p-8f + 0x1p-20f, -3e38f, 3.4028235e38f,
                        0x1p-126f, 0x1p-130f, -0.0f, INFINITY, -INFINITY})
    EXPECT_EQ(bits_of(my_bfloat16_round(x)), bits_of(bfloat16_round(x))) << x;
  EXPECT_TRUE(std::isnan(my_bfloat16_round(NAN)));
  std::mt19937 rng(0);
  int wrong = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const float x = float_of(static_cast<std::uint32_t>(rng()));
    if (!std::isnan(x)) wrong += bits_of(my_bfloat16_round(x)) != bits_of(bfloat16_round(x));
  }
  EXPECT_EQ(wrong, 0) << "of a million random bit patterns";
}

TEST(Stop10, Bfloat16KeepsFloat32sRangeAndLosesItsPrecision) {
  EXPECT_TRUE(std::isfinite(my_bfloat16_round(3e38f)));  // the range: 8 exponent bits, as float32's
  EXPECT_EQ(my_bfloat16_round(1e-30f), bfloat16_round(1e-30f));
  EXPECT_NE(my_bfloat16_round(1e-30f), 0.0f);
  EXPECT_EQ(my_bfloat16_round(257.0f), 256.0f);  // the precision: 8 significant bits, a step of 2 at 256
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (int i = 0; i < 10'000; ++i) {  // never off by more than half a step: at most 2^-8 of the value
    const float x = u(rng);
    EXPECT_LE(std::fabs(my_bfloat16_round(x) - x), std::ldexp(std::fabs(x), -8)) << x;
  }
}

}  // namespace
}  // namespace cppgrad::learn
