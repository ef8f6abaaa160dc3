// The bfloat16 GEMM: its definition, the portable kernel, and the choice between it and the AVX512_BF16 one
// (core/kernels/gemm_bf16.h says what all three compute).
#include "core/kernels/gemm_bf16.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/bfloat16.h"
#include "core/bit_cast.h"
#include "core/kernels/gemm_bf16_tiled.h"
#include "core/kernels/scratch.h"
#include "core/kernels/simd.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cppgrad::kernels {

namespace {

// A sum below float32's smallest normal magnitude becomes a zero of its sign (flush to zero).
float flush_subnormal(float x) { return std::fabs(x) < 0x1p-126f ? std::copysign(0.0f, x) : x; }

}  // namespace

void gemm_bf16_reference(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                         float* C, std::int64_t ldc) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < K; ++k)
        sum = flush_subnormal(std::fma(bfloat16_round(A(i, k)), bfloat16_round(B(k, j)), sum));
      C[i * ldc + j] = sum;
    }
}

namespace {

// Flush-to-zero and denormals-are-zero for the scope (x86's MXCSR bits 15 and 6), so that the portable kernel's FMAs
// flush as vdpbf16ps does; the thread's previous mode is put back at the end. Elsewhere (WebAssembly) there is no
// such mode: see the exception in core/kernels/gemm_bf16.h.
class FlushSubnormalsScope {
 public:
#if defined(__x86_64__)
  FlushSubnormalsScope() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~FlushSubnormalsScope() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

// The portable tile: B and A packed as rounded float32 values, a pair of k as two rows; each product one FMA (exact,
// as a bfloat16 product fits float32's mantissa) on 8-lane vectors, 6 rows x 16 columns of C in registers as
// gemm_tiled.h's AVX2 tile.
struct PortableTile {
  using Packed = float;
  using V = f32x8;
  static constexpr std::int64_t W = 8, NR = 2 * W, MR = 6, KC = 256, NC = 16 * NR;
  static constexpr std::int64_t kPairElems = 2 * NR, kPairElemsA = 2 * MR;

  // A pair block of n columns (its two rows n apart): the even members' rounded values, then the odd ones'.
  static void put_row(float* pair, std::int64_t n, const float* even, const float* odd) {
    for (std::int64_t j = 0; j < n; ++j) {
      pair[j] = std::bit_cast<float>(bfloat16_bits(std::bit_cast<std::uint32_t>(even[j])));
      pair[n + j] = std::bit_cast<float>(bfloat16_bits(std::bit_cast<std::uint32_t>(odd[j])));
    }
  }

  static V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }

  // C[0:rows, 0:ncols] = (C's values when continue_sums, else 0) + the pairs' products, in the definition's order.
  static void micro_kernel(std::int64_t rows, std::int64_t pairs, const float* a, const float* b, float* c,
                           std::int64_t ldc, std::int64_t ncols, bool continue_sums) {
    V acc0[MR], acc1[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      float start[NR] = {};
      if (continue_sums && r < rows) std::memcpy(start, c + r * ldc, static_cast<std::size_t>(ncols) * sizeof(float));
      acc0[r] = load(start), acc1[r] = load(start + W);
    }
    for (std::int64_t p = 0; p < pairs; ++p, a += kPairElemsA, b += kPairElems) {
      const V even0 = load(b), even1 = load(b + W), odd0 = load(b + NR), odd1 = load(b + NR + W);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        acc0[r] += a[r] * even0;  // one FMA each (-ffp-contract=fast), k in order
        acc1[r] += a[r] * even1;
        acc0[r] += a[MR + r] * odd0;
        acc1[r] += a[MR + r] * odd1;
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
      float out[NR];
      std::memcpy(out, &acc0[r], sizeof(V));
      std::memcpy(out + W, &acc1[r], sizeof(V));
      std::memcpy(c + r * ldc, out, static_cast<std::size_t>(ncols) * sizeof(float));
    }
  }
};

}  // namespace

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  static const bool has = cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

Bf16Kernel bf16_kernel() {
  return cpu_has_avx512_bf16() && simd_level() == SimdLevel::Avx512 ? Bf16Kernel::Avx512Bf16 : Bf16Kernel::Portable;
}

const char* bf16_kernel_name(Bf16Kernel kernel) {
  return kernel == Bf16Kernel::Avx512Bf16 ? "avx512_bf16" : "portable";
}

void gemm_bf16(Bf16Kernel kernel, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
               MatrixRef<float> B, float* C, std::int64_t ldc, bool parallel) {
  if (kernel == Bf16Kernel::Avx512Bf16) {
    if (!cpu_has_avx512_bf16()) throw std::logic_error("gemm_bf16: this CPU has no AVX512_BF16 (use bf16_kernel())");
    thread_local ScratchBuffer<std::uint32_t> pairs;
    return gemm_bf16_avx512(M, N, K, A, B, C, ldc, parallel, pairs.get(avx512_bf16_packed_size()));
  }
  thread_local ScratchBuffer<float> packed;
  gemm_bf16_tiled<PortableTile, FlushSubnormalsScope>(M, N, K, A, B, C, ldc, parallel,
                                                      packed.get(bf16_packed_b_size<PortableTile>()));
}

}  // namespace cppgrad::kernels
