// The bfloat16 GEMM (core/kernels/gemm_bf16.h): the rounding, and every kernel equal to the definition bit for bit,
// at ordinary values and at the edges of float32's range (where only the order and the flushing decide the bits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/bfloat16.h"
#include "core/kernels/gemm.h"
#include "core/kernels/gemm_bf16.h"
#include "core/kernels/packed_weights.h"
#include "core/generator.h"
#include "core/tensor.h"

namespace cppgrad {
namespace {

using kernels::Bf16Kernel;
using kernels::MatrixRef;

constexpr Bf16Kernel kAllKernels[] = {Bf16Kernel::Portable, Bf16Kernel::Avx512, Bf16Kernel::Avx512Bf16};
bool available(Bf16Kernel kernel) {
  return kernel == Bf16Kernel::Portable || (kernel == Bf16Kernel::Avx512 && kernels::cpu_has_avx512()) ||
         kernels::cpu_has_avx512_bf16();
}

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}
float from_bits(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

TEST(Bfloat16Round, RoundsToNearestTiesToEvenAndKeepsFloat32sRange) {
  EXPECT_EQ(bfloat16_round(1.0f), 1.0f);
  EXPECT_EQ(bfloat16_round(257.0f), 256.0f);                   // 257 = 256 + half a step: the tie goes to even 256
  EXPECT_EQ(bfloat16_round(259.0f), 260.0f);                   // 259 = 258 + half a step: to even 260
  EXPECT_EQ(bfloat16_round(1.0f + 0x1p-9f), 1.0f);             // below half a step (2^-8) rounds down
  EXPECT_EQ(bfloat16_round(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);  // over half a step rounds up
  EXPECT_EQ(bfloat16_round(3e38f), from_bits(0x7F620000u));    // float32's range is kept
  EXPECT_EQ(bfloat16_round(3.4028235e38f), INFINITY);          // the largest float32 is past bfloat16's last step
  EXPECT_EQ(bits(bfloat16_round(-0.0f)), 0x80000000u);
  EXPECT_EQ(bits(bfloat16_round(-0x1p-130f)), 0x80000000u);    // a subnormal becomes a zero of its sign
  EXPECT_EQ(bfloat16_round(0x1p-126f), 0x1p-126f);             // the smallest normal stays
  EXPECT_EQ(round_to_bfloat16(from_bits(0x7F800001u)), 0x7FC0u);  // a signalling NaN comes back quiet
  EXPECT_EQ(round_to_bfloat16(-INFINITY), 0xFF80u);
}

#if defined(__x86_64__)
// The CPU's own rounding (vcvtneps2bf16), for the bit patterns first, first + step, ...: compiled for AVX512_BF16
// alone and called only where the CPU has it.
__attribute__((target("avx512f,avx512bf16"))) std::uint32_t count_cpu_disagreements(std::uint32_t step) {
  std::uint32_t disagreements = 0;
  for (std::uint64_t b = 0; b < (1ull << 32); b += step) {
    const float x = from_bits(static_cast<std::uint32_t>(b));
    const __m512bh wide = _mm512_cvtne2ps_pbh(_mm512_setzero_ps(), _mm512_set1_ps(x));
    std::uint16_t cpu;
    std::memcpy(&cpu, &wide, 2);
    disagreements += cpu != round_to_bfloat16(x);
  }
  return disagreements;
}

TEST(Bfloat16Round, IsTheCpusOwnRounding) {
  if (!kernels::cpu_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16 to compare with";
  EXPECT_EQ(count_cpu_disagreements(251), 0u);  // 17 million patterns, every exponent and both signs
}
#endif

// Matrices of random bfloat16-ish values: `spread` octaves of exponent around 1, or all of float32's (the edges).
std::vector<float> random_values(std::int64_t n, std::uint32_t seed, int spread) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) {
    if (spread >= 254) {  // any finite float32 bit pattern but the largest exponents: products overflow, sums flush
      std::uint32_t b = static_cast<std::uint32_t>(rng());
      if (((b >> 23) & 0xFFu) >= 0xFEu) b &= 0xBFFFFFFFu;
      x = from_bits(b);
    } else {
      x = std::ldexp(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng),
                     std::uniform_int_distribution<int>(-spread, spread)(rng));
    }
  }
  return v;
}

struct Product {
  std::int64_t M, N, K;
  bool a_transposed, b_transposed;  // read as a transposed view (row stride 1), as a weight gradient's g^T or W^T
};

std::string name(const Product& p) {
  return std::to_string(p.M) + "x" + std::to_string(p.K) + "@" + std::to_string(p.K) + "x" + std::to_string(p.N) +
         (p.a_transposed ? " A^T" : "") + (p.b_transposed ? " B^T" : "");
}

// The first element where the kernel's C differs from the definition's in its bits (NaNs compared as NaN), or "".
std::string first_difference(Bf16Kernel kernel, const Product& p, int spread, bool parallel) {
  const std::vector<float> a = random_values(p.M * p.K, 1 + static_cast<std::uint32_t>(p.K), spread);
  const std::vector<float> b = random_values(p.K * p.N, 2 + static_cast<std::uint32_t>(p.N), spread);
  const MatrixRef<float> A = p.a_transposed ? MatrixRef<float>{a.data(), 1, p.M} : MatrixRef<float>{a.data(), p.K, 1};
  const MatrixRef<float> B = p.b_transposed ? MatrixRef<float>{b.data(), 1, p.K} : MatrixRef<float>{b.data(), p.N, 1};
  std::vector<float> want(static_cast<std::size_t>(p.M * p.N)), got(want.size(), 12345.0f);
  kernels::gemm_bf16_reference(p.M, p.N, p.K, A, B, want.data(), p.N);
  kernels::gemm_bf16(kernel, p.M, p.N, p.K, A, B, got.data(), p.N, parallel);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (bits(want[i]) != bits(got[i]) && !(std::isnan(want[i]) && std::isnan(got[i])))
      return name(p) + " element " + std::to_string(i) + ": kernel " + std::to_string(got[i]) + " definition " +
             std::to_string(want[i]);
  return "";
}

const std::vector<Product> kProducts = {
    {1, 1, 1, false, false},      {3, 5, 7, false, false},     {8, 32, 2, false, false},
    {13, 47, 255, false, false},  {6, 16, 256, false, true},   {17, 33, 257, true, false},
    {64, 96, 513, false, true},   {40, 1100, 64, false, false},  // more than one block of columns (NC)
    {256, 128, 768, false, true},  // the GPT's attention projection at 124M's width, a quarter of its columns
    {768, 64, 256, true, false},   // a weight gradient: g^T @ x
};

// WebAssembly has no FMA and no flush-to-zero mode: its kernel equals the definition wherever products and sums stay
// in float32's normal range (core/kernels/gemm_bf16.h), so there the edges' spread is left out.
#if defined(__wasm__)
constexpr int kSpreads[] = {4, 40};
#else
constexpr int kSpreads[] = {4, 40, 254};
#endif

void expect_kernel_equals_definition(Bf16Kernel kernel) {
  for (const Product& p : kProducts)
    for (int spread : kSpreads)
      for (bool parallel : {false, true}) {
        const std::string diff = first_difference(kernel, p, spread, parallel);
        EXPECT_EQ(diff, "") << "spread " << spread << (parallel ? ", threads" : "");
      }
}

TEST(GemmBf16, ThePortableKernelIsTheDefinitionBitForBit) { expect_kernel_equals_definition(Bf16Kernel::Portable); }

TEST(GemmBf16, TheAvx512FmaKernelIsTheDefinitionBitForBit) {
  if (!kernels::cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: only the portable kernel runs here";
  expect_kernel_equals_definition(Bf16Kernel::Avx512);
}

TEST(GemmBf16, TheAvx512Bf16KernelIsTheDefinitionBitForBit) {
  if (!kernels::cpu_has_avx512_bf16())
    GTEST_SKIP() << "this CPU has no AVX512_BF16: only the portable kernel runs here";
  expect_kernel_equals_definition(Bf16Kernel::Avx512Bf16);
}

// What the definition's order and rounding decide, against the float32 GEMM (k in order, nothing rounded) and
// against the pairs summed the other way round (vdpbf16ps's own order, before the kernel swaps the halves).
TEST(GemmBf16, TheOrderAndTheRoundingDecideTheBits) {
  // In order, 2^24 + 1 - 2^24 + 1 = 1 (2^24 + 1 rounds to 2^24, a tie to even); each pair's second member first,
  // 1 + 2^24 + 1 - 2^24 = 0.
  const float a[4] = {0x1p24f, 1.0f, -0x1p24f, 1.0f}, ones[4] = {1, 1, 1, 1};
  float c = -1;
  kernels::gemm_bf16_reference(1, 1, 4, {a, 4, 1}, {ones, 1, 1}, &c, 1);
  EXPECT_EQ(c, 1.0f);
  for (Bf16Kernel kernel : kAllKernels) {
    if (!available(kernel)) continue;
    c = -1;
    kernels::gemm_bf16(kernel, 1, 1, 4, {a, 4, 1}, {ones, 1, 1}, &c, 1, false);
    EXPECT_EQ(c, 1.0f) << kernels::bf16_kernel_name(kernel);
  }
  // 1 + 2^-10 is between two bfloat16 values: read as 1, where the float32 product keeps it.
  const float x = 1.0f + 0x1p-10f;
  float fp32 = -1;
  kernels::gemm_bf16_reference(1, 1, 1, {&x, 1, 1}, {ones, 1, 1}, &c, 1);
  kernels::gemm_reference<float>(1, 1, 1, {&x, 1, 1}, {ones, 1, 1}, &fp32);
  EXPECT_EQ(c, 1.0f);
  EXPECT_EQ(fp32, x);
}

// A sum flushed to -0 stays -0 whatever completes an odd K's last pair, and a tiny sum is flushed, in every kernel.
TEST(GemmBf16, ATinySumIsFlushedToAZeroOfItsSign) {
#if defined(__wasm__)
  GTEST_SKIP() << "WebAssembly has no flush-to-zero mode: its kernel keeps subnormal sums (core/kernels/gemm_bf16.h)";
#endif
  const float a[3] = {-0x1p-50f, 0x1p-60f, -0x1p-50f}, b[3] = {0x1p-80f, 0x1p-80f, 0x1p-80f};
  for (std::int64_t K : {1, 2, 3}) {
    float want = 1;
    kernels::gemm_bf16_reference(1, 1, K, {a, K, 1}, {b, 1, 1}, &want, 1);
    EXPECT_EQ(want, 0.0f);  // -2^-130, then + 2^-140, then - 2^-130: each sum subnormal, so each flushed
    EXPECT_EQ(std::signbit(want), K != 2) << "K " << K;  // -0; -0 + 2^-140 -> +0; +0 - 2^-130 -> -0
    for (Bf16Kernel kernel : kAllKernels) {
      if (!available(kernel)) continue;
      float c = 1;
      kernels::gemm_bf16(kernel, 1, 1, K, {a, K, 1}, {b, 1, 1}, &c, 1, false);
      EXPECT_EQ(bits(c), bits(want)) << kernels::bf16_kernel_name(kernel) << ", K " << K;
    }
  }
}

// NaN (signalling too), infinities and subnormals in the inputs: each kernel's packing rounds them as the definition.
TEST(GemmBf16, SpecialValuesArePackedAsTheDefinitionRoundsThem) {
  const float specials[] = {from_bits(0x7F800001u), -INFINITY, INFINITY, 0x1p-130f, -0x1p-140f, 3.4028235e38f, 1.0f};
  for (const float s : specials)
    for (int where = 0; where < 2; ++where) {
      std::vector<float> a(3 * 5, 1.0f), b(5 * 4, 0.5f);
      (where == 0 ? a[7] : b[9]) = s;
      std::vector<float> want(12), got(12);
      kernels::gemm_bf16_reference(3, 4, 5, {a.data(), 5, 1}, {b.data(), 4, 1}, want.data(), 4);
      for (Bf16Kernel kernel : kAllKernels) {
        if (!available(kernel)) continue;
        kernels::gemm_bf16(kernel, 3, 4, 5, {a.data(), 5, 1}, {b.data(), 4, 1}, got.data(), 4, false);
        for (std::size_t i = 0; i < want.size(); ++i)
          EXPECT_TRUE(bits(want[i]) == bits(got[i]) || (std::isnan(want[i]) && std::isnan(got[i])))
              << kernels::bf16_kernel_name(kernel) << ": " << s << " in " << (where == 0 ? "A" : "B") << ", element "
              << i << ": " << got[i] << " vs " << want[i];
      }
    }
}

// Inside a ReusePackedWeights scope a weight's rounded pairs are packed once and read by the next product, on every
// kernel: both products are the definition's bits; a weight written since (its storage's version moved) is packed
// again; and a float32 packing of the same weight is kept apart from the bfloat16 one.
TEST(GemmBf16, KeptPackingsAreTheSameBitsAndAWeightChangedSinceIsPackedAgain) {
  Generator gen(5);
  for (Bf16Kernel kernel : kAllKernels) {
    if (!available(kernel)) continue;
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{37, 70, 301}, {20, 600, 520}}) {
      const Tensor a = Tensor::randn({M, K}, gen), w = Tensor::randn({N, K}, gen);  // B = w^T, as linear's
      const MatrixRef<float> A{a.data<float>(), K, 1}, B{w.data<float>(), 1, K};
      std::vector<float> want(static_cast<std::size_t>(M * N)), first(want.size()), second(want.size());
      kernels::gemm_bf16_reference(M, N, K, A, B, want.data(), N);
      const kernels::ReusePackedWeights scope;
      kernels::gemm_bf16(kernel, M, N, K, A, B, first.data(), N, false, &w.impl().storage);
      std::vector<float> fp32(want.size());
      kernels::gemm_at_level(kernels::SimdLevel::Avx2, M, N, K, A, B, fp32.data(), &w.impl().storage);
      kernels::gemm_bf16(kernel, M, N, K, A, B, second.data(), N, false, &w.impl().storage);
      const std::string where = std::string(kernels::bf16_kernel_name(kernel)) + " N=" + std::to_string(N);
      EXPECT_EQ(scope.store().packed(), 2) << where << ": one bfloat16 packing, one float32";
      EXPECT_EQ(scope.store().reused(), 1) << where;
      EXPECT_EQ(bits_of(first), bits_of(want)) << where;
      EXPECT_EQ(bits_of(second), bits_of(want)) << where;
      w.mutable_data<float>()[0] += 1.0f;  // as an optimizer writes: the version moves on
      kernels::gemm_bf16_reference(M, N, K, A, B, want.data(), N);
      kernels::gemm_bf16(kernel, M, N, K, A, B, second.data(), N, false, &w.impl().storage);
      EXPECT_EQ(scope.store().packed(), 3) << where << ": packed again";
      EXPECT_EQ(bits_of(second), bits_of(want)) << where;
    }
  }
}

TEST(GemmBf16, AKernelTheCpuLacksIsRefusedNotReplaced) {
  if (kernels::cpu_has_avx512_bf16()) GTEST_SKIP() << "this CPU has AVX512_BF16";
  const float x = 1;
  float c = 0;
  EXPECT_THROW(kernels::gemm_bf16(Bf16Kernel::Avx512Bf16, 1, 1, 1, {&x, 1, 1}, {&x, 1, 1}, &c, 1, false),
               std::logic_error);
}

}  // namespace
}  // namespace cppgrad
