#pragma once
// The blocking of the bfloat16 GEMM (core/kernels/gemm_bf16.h), written once over its tile: gemm_bf16.cpp
// instantiates it with the portable tile (8 float lanes, an FMA per product) and gemm_bf16_avx512.cpp, inside an
// AVX-512 target region, with the same FMA tile on 16 lanes and with the AVX512_BF16 one (pairs of bfloat16 in 32-bit
// lanes, one vdpbf16ps per pair).
// Internal linkage throughout, as gemm_tiled.h's: the two compilations, made for different CPUs, never mix.
//
// The layout is gemm_tiled.h's (B in column panels of NR, A in row blocks of MR, a micro-kernel holding an MR x NR
// block of C in registers), read in pairs of k. Two things differ, both for the definition's one running sum:
//   - packing rounds: both operands are packed (rounded to bfloat16 on the way), each k-block pair by pair. An odd
//     K's last pair is completed with a product that adds nothing: -0 (A's) times +0 (B's) is -0, and s + -0 is s
//     for every s, -0 included (a +0 would turn a sum of -0 into +0);
//   - a later k-block starts its sums from C's values instead of adding its own partial sums to them, so each
//     element is one chain of additions over the whole of k, whatever the blocking or the number of threads.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/bfloat16.h"
#include "core/kernels/gemm.h"
#include "core/kernels/packed_weights.h"
#include "core/kernels/parallel_for.h"

#if defined(__x86_64__)
#include <immintrin.h>  // _mm_getcsr, _mm_setcsr
#endif

namespace cppgrad::kernels {
namespace {  // NOLINT(google-build-namespaces): internal on purpose, see above

// round_to_bfloat16(x) << 16 (core/bfloat16.h) from x's bits, written without branches so that a loop of them
// compiles to vector instructions: the rounding, then a NaN's quieted bits or a subnormal's signed zero chosen in.
inline std::uint32_t bfloat16_bits(std::uint32_t bits) {
  const std::uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  const std::uint32_t nan = (bits | 0x00400000u) & 0xFFFF0000u, zero = bits & 0x80000000u;
  const std::uint32_t r = (bits & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded;
  return (bits & 0x7F800000u) == 0 ? zero : r;
}

// Packs B[k0 : k0+kc, j0 : j0+nc] into panels of Tile::NR columns, pair of k by pair: panel q at
// out + q * pairs * Tile::kPairElems, +0 past nc and past K. Each pair's two rows are gathered first (read along a
// row of B when its columns are contiguous), then rounded and stored a whole row at a time (Tile::put_row).
template <typename Tile>
void pack_b_bf16(MatrixRef<float> B, std::int64_t K, std::int64_t k0, std::int64_t kc, std::int64_t j0,
                 std::int64_t nc, typename Tile::Packed* out) {
  const std::int64_t pairs = (kc + 1) / 2;
  for (std::int64_t q = 0; q * Tile::NR < nc; ++q) {
    typename Tile::Packed* panel = out + q * pairs * Tile::kPairElems;
    const std::int64_t cols = std::min(Tile::NR, nc - q * Tile::NR), j1 = j0 + q * Tile::NR;
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::int64_t k = k0 + 2 * p;
      alignas(64) float even[Tile::NR] = {}, odd[Tile::NR] = {};
      if (B.col_stride == 1) {
        const float* row = B.data + k * B.row_stride + j1;
        for (std::int64_t j = 0; j < cols; ++j) even[j] = row[j];
        if (k + 1 < K)
          for (std::int64_t j = 0; j < cols; ++j) odd[j] = row[B.row_stride + j];
      } else {
        for (std::int64_t j = 0; j < cols; ++j) {
          const float* pair = B.data + k * B.row_stride + (j1 + j) * B.col_stride;
          even[j] = pair[0];
          odd[j] = k + 1 < K ? pair[B.row_stride] : 0.0f;
        }
      }
      Tile::put_row(panel + p * Tile::kPairElems, Tile::NR, even, odd);
    }
  }
}

// Packs A[i : i+rows, k0 : k0+kc] (rows <= MR) the same way, MR rows a pair: -0 past K, and past `rows` (rows no
// one stores).
template <typename Tile>
void pack_a_bf16(MatrixRef<float> A, std::int64_t K, std::int64_t i, std::int64_t rows, std::int64_t k0,
                 std::int64_t kc, typename Tile::Packed* out) {
  const std::int64_t pairs = (kc + 1) / 2;
  if (A.col_stride == 1 && rows == Tile::MR && k0 + 2 * pairs <= K) {
    // A row-major block of whole rows and pairs (the common case): each row is read along k and its values rounded
    // as a row, then spread to the pairs (the even member of pair p at p's block, row r; the odd one MR after).
    for (std::int64_t r = 0; r < Tile::MR; ++r) {
      const float* row = A.data + (i + r) * A.row_stride + k0;
      alignas(64) float rounded[Tile::KC];
      for (std::int64_t k = 0; k < 2 * pairs; ++k)
        rounded[k] = __builtin_bit_cast(float, bfloat16_bits(__builtin_bit_cast(std::uint32_t, row[k])));
      for (std::int64_t p = 0; p < pairs; ++p)
        Tile::put_rounded(out + p * Tile::kPairElemsA, Tile::MR, r, rounded[2 * p], rounded[2 * p + 1]);
    }
    return;
  }
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::int64_t k = k0 + 2 * p;
    float even[Tile::MR], odd[Tile::MR];
    for (std::int64_t r = 0; r < Tile::MR; ++r) {
      const bool in = r < rows;
      even[r] = in ? A(i + r, k) : -0.0f;
      odd[r] = in && k + 1 < K ? A(i + r, k + 1) : -0.0f;
    }
    Tile::put_row(out + p * Tile::kPairElemsA, Tile::MR, even, odd);
  }
}

// Flush-to-zero and denormals-are-zero for the scope (x86's MXCSR bits 15 and 6), so that an FMA tile's additions
// flush as vdpbf16ps's do; the thread's previous mode is put back at the end. Elsewhere (WebAssembly) there is no
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

// acc + a * b on every lane, rounded once: the FMA instruction itself, never left to the compiler's contraction (an
// unoptimised build multiplies, then adds, and rounds twice). Without an FMA (WebAssembly, or a build without AVX2)
// it is a multiply and an add: the exception core/kernels/gemm_bf16.h states.
template <typename V>
inline V fused_multiply_add(float a, V b, V acc) {
#if defined(__x86_64__)
  if constexpr (sizeof(V) == 64) {
    return reinterpret_cast<V>(_mm512_fmadd_ps(_mm512_set1_ps(a), reinterpret_cast<__m512>(b),
                                               reinterpret_cast<__m512>(acc)));
  } else {
#if defined(__FMA__)
    return reinterpret_cast<V>(_mm256_fmadd_ps(_mm256_set1_ps(a), reinterpret_cast<__m256>(b),
                                               reinterpret_cast<__m256>(acc)));
#else
    return acc + a * b;
#endif
  }
#else
  return acc + a * b;
#endif
}

// A tile of FMAs on float lanes (Vec: 8 lanes, the portable kernel; 16, the AVX-512 one): B and A packed as rounded
// float32 values, a pair of k as two rows; each product one FMA, exact, as a bfloat16 product fits float32's
// mantissa (fused_multiply_add); under FlushSubnormalsScope.
template <typename Vec, int kRows>
struct FmaTile {
  using Packed = float;
  using V = Vec;
  static constexpr std::int64_t W = sizeof(V) / sizeof(float), NR = 2 * W, MR = kRows, KC = 256, NC = 16 * NR;
  static constexpr std::int64_t kPairElems = 2 * NR, kPairElemsA = 2 * MR;

  // A pair block of n columns (its two rows n apart): the even members' rounded values, then the odd ones'.
  static void put_row(float* pair, std::int64_t n, const float* even, const float* odd) {
    for (std::int64_t j = 0; j < n; ++j) {
      pair[j] = __builtin_bit_cast(float, bfloat16_bits(__builtin_bit_cast(std::uint32_t, even[j])));
      pair[n + j] = __builtin_bit_cast(float, bfloat16_bits(__builtin_bit_cast(std::uint32_t, odd[j])));
    }
  }

  // Element j of a pair block (rows n apart) from values rounded already.
  static void put_rounded(float* pair, std::int64_t n, std::int64_t j, float even, float odd) {
    pair[j] = even;
    pair[n + j] = odd;
  }

  static V load(const float* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }

  // C[0:rows, 0:ncols] = (C's values when continue_sums, else 0) + the pairs' products, in the definition's order.
  static void micro_kernel(std::int64_t rows, std::int64_t pairs, const float* a, const float* b, float* c,
                           std::int64_t ldc, std::int64_t ncols, bool continue_sums) {
    V acc0[MR], acc1[MR];
    const bool whole = ncols == NR;  // a whole tile's rows are moved as vectors, a narrower one's through a buffer
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      acc0[r] = V{}, acc1[r] = V{};
      if (!continue_sums || r >= rows) continue;
      if (whole) {
        acc0[r] = load(c + r * ldc), acc1[r] = load(c + r * ldc + W);
      } else {
        float start[NR] = {};
        __builtin_memcpy(start, c + r * ldc, static_cast<std::size_t>(ncols) * sizeof(float));
        acc0[r] = load(start), acc1[r] = load(start + W);
      }
    }
    for (std::int64_t p = 0; p < pairs; ++p, a += kPairElemsA, b += kPairElems) {
      const V even0 = load(b), even1 = load(b + W), odd0 = load(b + NR), odd1 = load(b + NR + W);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        acc0[r] = fused_multiply_add(a[r], even0, acc0[r]);  // k in order: the pair's even member, then its odd one
        acc1[r] = fused_multiply_add(a[r], even1, acc1[r]);
        acc0[r] = fused_multiply_add(a[MR + r], odd0, acc0[r]);
        acc1[r] = fused_multiply_add(a[MR + r], odd1, acc1[r]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
      if (whole) {
        __builtin_memcpy(c + r * ldc, &acc0[r], sizeof(V));
        __builtin_memcpy(c + r * ldc + W, &acc1[r], sizeof(V));
        continue;
      }
      float out[NR];
      __builtin_memcpy(out, &acc0[r], sizeof(V));
      __builtin_memcpy(out + W, &acc1[r], sizeof(V));
      __builtin_memcpy(c + r * ldc, out, static_cast<std::size_t>(ncols) * sizeof(float));
    }
  }
};

template <typename Tile>
constexpr std::size_t bf16_packed_b_size() {
  return static_cast<std::size_t>(Tile::KC / 2 * Tile::kPairElems * (Tile::NC / Tile::NR));
}

// B packed whole, every block at its own place, for a ReusePackedWeights scope to keep: K rounded up to whole pairs,
// N to whole panels; block (j0, k0) at (j0 * Kp + k0 * round_up(nc, NR)) * kPairElems / (2 * NR) values (the blocks
// before column j0 are NC wide, and k0 is even).
template <typename Tile>
std::size_t bf16_whole_packed_values(std::int64_t K, std::int64_t N) {
  const std::int64_t Kp = (K + 1) / 2 * 2, Np = (N + Tile::NR - 1) / Tile::NR * Tile::NR;
  return static_cast<std::size_t>(Kp * Np * Tile::kPairElems / (2 * Tile::NR));
}

// C[M, N] (rows ldc apart) = the definition's product. `packed`: scratch of bf16_packed_b_size<Tile>() elements.
// `Guard`: what each piece of work runs under (the FMA tiles' flush-to-zero mode; nothing for vdpbf16ps, which
// flushes by itself). `keep`: B's packing may be kept by the thread's ReusePackedWeights scope (gemm.h's KeepPackedB):
// the blocks go into the scope's buffer for B, or are read from it when an earlier product packed them.
template <typename Tile, typename Guard>
void gemm_bf16_tiled(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B, float* C,
                     std::int64_t ldc, bool parallel, typename Tile::Packed* packed, KeepPackedB keep = {}) {
  static_assert(Tile::KC % 2 == 0, "a k-block holds whole pairs");
  if (K == 0) {
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = 0.0f;
    return;
  }
  const std::int64_t row_blocks = (M + Tile::MR - 1) / Tile::MR, Kp = (K + 1) / 2 * 2;
  PackedWeights::Panels kept{nullptr, false};
  if (keep)
    kept = keep.store->panels({B.data, B.row_stride, B.col_stride, K, N, Tile::NR, PackedLayout::Bfloat16Pairs},
                              *keep.storage, bf16_whole_packed_values<Tile>(K, N));
  for (std::int64_t j0 = 0; j0 < N; j0 += Tile::NC) {
    const std::int64_t nc = std::min(Tile::NC, N - j0), panels = (nc + Tile::NR - 1) / Tile::NR;
    for (std::int64_t k0 = 0; k0 < K; k0 += Tile::KC) {
      const std::int64_t kc = std::min(Tile::KC, K - k0), pairs = (kc + 1) / 2;
      typename Tile::Packed* block = packed;
      if (kept.data)  // the store's buffer holds 32-bit values, as both tiles' are
        block = reinterpret_cast<typename Tile::Packed*>(kept.data) +
                (j0 * Kp + k0 * panels * Tile::NR) * Tile::kPairElems / (2 * Tile::NR);
      if (!kept.packed) pack_b_bf16<Tile>(B, K, k0, kc, j0, nc, block);
      parallel_for(row_blocks, parallel, [&](std::int64_t ib) {
        [[maybe_unused]] const Guard flush_mode;
        const std::int64_t i = ib * Tile::MR, rows = std::min(Tile::MR, M - i);
        alignas(64) typename Tile::Packed a[Tile::KC / 2 * Tile::kPairElemsA];
        pack_a_bf16<Tile>(A, K, i, rows, k0, kc, a);
        for (std::int64_t q = 0; q < panels; ++q)
          Tile::micro_kernel(rows, pairs, a, block + q * pairs * Tile::kPairElems, C + i * ldc + j0 + q * Tile::NR,
                             ldc, std::min(Tile::NR, nc - q * Tile::NR), /*continue_sums=*/k0 > 0);
      });
    }
  }
}

}  // namespace
}  // namespace cppgrad::kernels
