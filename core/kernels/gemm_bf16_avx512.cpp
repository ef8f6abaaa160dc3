// The bfloat16 GEMM's AVX512_BF16 kernel: gemm_bf16_tiled.h's blocking with a tile whose lanes hold pairs of
// bfloat16 (the even k in the low half, the odd k in the high half), so that one vdpbf16ps adds both products of a
// pair to 16 sums in the definition's order (core/kernels/gemm_bf16.h). Compiled inside an AVX-512 target region that
// adds AVX512_BF16 (core/kernels/avx512_begin.h), called only when cpu_has_avx512_bf16().
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bfloat16.h"
#include "core/kernels/gemm.h"
#include "core/kernels/gemm_bf16.h"
#include "core/kernels/packed_weights.h"
#include "core/kernels/parallel_for.h"

// Clang 16 crashes (a segmentation fault in the compiler) on the AVX512_BF16 tile whenever it optimises; in such a build
// the tile is left out, avx512_bf16_tile_built() is false, and cpu_has_avx512_bf16() says no: the FMA kernels, the
// same bits, serve instead.
#if defined(__x86_64__) && defined(__clang__) && __clang_major__ <= 16 && defined(__OPTIMIZE__)
#define CPPGRAD_BF16_DOT_TILE 0
#else
#define CPPGRAD_BF16_DOT_TILE 1
#endif

#if defined(__x86_64__)
#include <immintrin.h>

#define CPPGRAD_AVX512_WITH_BF16
#include "core/kernels/avx512_begin.h"  // every header above, the kernel loops below

#include "core/kernels/gemm_bf16_tiled.h"

namespace cppgrad::kernels {

namespace {

#if CPPGRAD_BF16_DOT_TILE
// 8 rows x 32 columns of C: 16 accumulators, two vectors of B's pairs and one broadcast of A's pair in 19 of the 32
// registers (the float tile's shape, gemm_tiled.h: 8 divides the row counts of the models' products).
struct Avx512Bf16Tile {
  using Packed = std::uint32_t;
  static constexpr std::int64_t NR = 32, MR = 8, KC = 256, NC = 16 * NR;
  static constexpr std::int64_t kPairElems = NR, kPairElemsA = MR;

  // A pair block of n columns: in each lane, k's rounded value in the high half and k+1's in the low half.
  static void put_row(std::uint32_t* pair, std::int64_t n, const float* even, const float* odd) {
    for (std::int64_t j = 0; j < n; ++j)
      pair[j] = bfloat16_bits(__builtin_bit_cast(std::uint32_t, even[j])) |
                bfloat16_bits(__builtin_bit_cast(std::uint32_t, odd[j])) >> 16;
  }

  // Lane j of a pair block from values rounded already (their low halves zero).
  static void put_rounded(std::uint32_t* pair, std::int64_t, std::int64_t j, float even, float odd) {
    pair[j] = __builtin_bit_cast(std::uint32_t, even) | __builtin_bit_cast(std::uint32_t, odd) >> 16;
  }

  static void micro_kernel(std::int64_t rows, std::int64_t pairs, const std::uint32_t* a, const std::uint32_t* b,
                           float* c, std::int64_t ldc, std::int64_t ncols, bool continue_sums) {
    __m512 acc0[MR], acc1[MR];
    const __mmask16 lo = ncols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << ncols) - 1);
    const __mmask16 hi = ncols >= 32 ? 0xFFFF : ncols <= 16 ? 0 : static_cast<__mmask16>((1u << (ncols - 16)) - 1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const bool load = continue_sums && r < rows;
      acc0[r] = load ? _mm512_maskz_loadu_ps(lo, c + r * ldc) : _mm512_setzero_ps();
      acc1[r] = load ? _mm512_maskz_loadu_ps(hi, c + r * ldc + 16) : _mm512_setzero_ps();
    }
    for (std::int64_t p = 0; p < pairs; ++p, a += kPairElemsA, b += kPairElems) {
      const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
        acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
        acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
      _mm512_mask_storeu_ps(c + r * ldc, lo, acc0[r]);
      _mm512_mask_storeu_ps(c + r * ldc + 16, hi, acc1[r]);
    }
  }
};

#endif

struct NoScope {};

using Avx512FmaTile = FmaTile<f32x16, 8>;

}  // namespace

void gemm_bf16_avx512(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                      float* C, std::int64_t ldc, bool parallel, std::uint32_t* packed, KeepPackedB keep) {
#if CPPGRAD_BF16_DOT_TILE
  gemm_bf16_tiled<Avx512Bf16Tile, NoScope>(M, N, K, A, B, C, ldc, parallel, packed, keep);
#else
  (void)M, (void)N, (void)K, (void)A, (void)B, (void)C, (void)ldc, (void)parallel, (void)packed, (void)keep;
#endif
}

void gemm_bf16_avx512_fma(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                          float* C, std::int64_t ldc, bool parallel, float* packed, KeepPackedB keep) {
  gemm_bf16_tiled<Avx512FmaTile, FlushSubnormalsScope>(M, N, K, A, B, C, ldc, parallel, packed, keep);
}

}  // namespace cppgrad::kernels

#include "core/kernels/avx512_end.h"

namespace cppgrad::kernels {
bool avx512_bf16_tile_built() { return CPPGRAD_BF16_DOT_TILE != 0; }
#if CPPGRAD_BF16_DOT_TILE
std::size_t avx512_bf16_packed_size() { return bf16_packed_b_size<Avx512Bf16Tile>(); }
#else
std::size_t avx512_bf16_packed_size() { return 0; }
#endif
std::size_t avx512_fma_bf16_packed_size() { return bf16_packed_b_size<Avx512FmaTile>(); }
}  // namespace cppgrad::kernels

#else  // not x86-64: no such kernel; cpu_has_avx512_bf16() is false, so nothing calls it

namespace cppgrad::kernels {
bool avx512_bf16_tile_built() { return false; }
std::size_t avx512_bf16_packed_size() { return 0; }
std::size_t avx512_fma_bf16_packed_size() { return 0; }
void gemm_bf16_avx512(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*,
                      std::int64_t, bool, std::uint32_t*, KeepPackedB) {}
void gemm_bf16_avx512_fma(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*,
                          std::int64_t, bool, float*, KeepPackedB) {}
}  // namespace cppgrad::kernels

#endif
