#pragma once
// The tiled float GEMM, written once over its vector type (core/kernels/gemm.cpp has the plain paths and the
// dispatch). Two translation units include this header: gemm.cpp, which instantiates it with 8-lane vectors for
// the build's baseline (AVX2 + FMA), and gemm_avx512.cpp, which instantiates it with 16-lane vectors inside an
// AVX-512 target region. Everything here has internal linkage (an anonymous namespace), so the two compilations,
// made for different CPUs, can never be mixed up at link time: code for one CPU never runs on another.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/kernels/gemm.h"
#include "core/kernels/packed_weights.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/simd.h"

namespace cppgrad::kernels {
namespace {  // NOLINT(google-build-namespaces): internal on purpose, see above

// ------------------------------------------------------------------------------------------- tiled kernel
// The fast path, as BLIS/GotoBLAS lay it out: B is packed into column panels of NR values per k (contiguous,
// zero-padded), and a micro-kernel keeps an MR x NR block of C in registers while it walks k, loading NR values
// of B and broadcasting one value of A per row. C is read and written once per block instead of once per k.
// Blocks of KC x NC of B are packed at a time so the panels stay in L2. Written once with GCC/Clang vector
// extensions over the vector type: 8 lanes (AVX2 + FMA, or SSE2 where the build has no AVX2) and 16 (AVX-512).

template <typename T, typename Vec>
struct Tile {
  using V = Vec;
  static constexpr std::int64_t W = sizeof(V) / sizeof(T);  // lanes per vector
  // WebAssembly's 128-bit vectors (the wasm build's float tile, core/kernels/gemm.cpp): V8 allocates 15 of x86's 16
  // vector registers and there is no FMA, so each multiply needs a register for its product before the add.
  static constexpr bool k128 = sizeof(V) == 16;
  static constexpr std::int64_t NV = 2;                     // vectors of B per k
  static constexpr std::int64_t NR = NV * W;                // columns per micro-tile
  // Rows per micro-tile: 2 MR accumulators + 2 B + 1 A must fit the registers, 16 with AVX2 (6 rows) and 32 with
  // AVX-512 (8 rows; 12 measured no faster, and 8 divides the row counts of the models' products). With 128 bits,
  // 10 accumulators + 2 B + 1 A + 1 product fit 15 (5 rows): 6 rows spill two accumulators to the stack in V8, whose
  // store and reload then lengthen every k-step's chain of adds (measured: 4 x 12 and 6 x 8 slower than 5 x 8).
  static constexpr std::int64_t MR = k128 ? 5 : W == 16 ? 8 : 6;
  static constexpr std::int64_t KC = 256;                   // k-depth of a packed block
  // Columns of a packed block, whole panels (KC*NC floats: 256 KiB with 8 lanes, 512 KiB with 16 and with the
  // 128-bit tile, which packs A once per block: once for all of the words GPT's 256 columns).
  static constexpr std::int64_t NC = (k128 ? 32 : 16) * NR;
};

template <typename V, typename T>
inline V load(const T* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));
  return v;
}

template <typename V, typename T>
inline void store(T* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// C[0:ROWS, 0:ncols] (+)= A[0:ROWS, 0:kc] @ Bp, with Bp a panel of kc rows of NR values, rows b_rs apart (a packed
// panel, b_rs = NR, or NR columns of a row-major B read in place).
template <typename T, typename TL, int ROWS>
void micro_kernel(std::int64_t kc, const T* a, std::int64_t a_rs, std::int64_t a_cs, const T* bp, std::int64_t b_rs,
                  T* c, std::int64_t ldc, std::int64_t ncols, bool accumulate) {
  using V = typename TL::V;
  constexpr std::int64_t W = TL::W, NR = TL::NR;
  // B's rows this far ahead are fetched into L1 while the current ones multiply: the panel comes from L2 (a packed
  // block) or from wherever a B read in place lives, and the hardware prefetcher, which starts over at every panel,
  // left the FMAs waiting on it. GPT-2 124M's products ran 3-10% faster with it on AVX-512 (the step 2-3%), level
  // on AVX2 (docs/performance.md, "bfloat16").
  constexpr std::int64_t kPrefetchAhead = 16;
  // Every loop over r is unrolled, so the accumulators live in registers (a rolled loop would index them, which
  // keeps them in memory).
  V acc0[ROWS], acc1[ROWS];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) acc0[r] = V{}, acc1[r] = V{};
  for (std::int64_t k = 0; k < kc; ++k) {
    const V b0 = load<V>(bp + k * b_rs), b1 = load<V>(bp + k * b_rs + W);
    __builtin_prefetch(bp + (k + kPrefetchAhead) * b_rs);  // past the panel's end: a harmless hint
    __builtin_prefetch(bp + (k + kPrefetchAhead) * b_rs + W);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const T av = a[r * a_rs + k * a_cs];
      acc0[r] += av * b0;
      acc1[r] += av * b1;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
    T* cr = c + r * ldc;
    V lo = acc0[r], hi = acc1[r];
    if (ncols == NR) {
      if (accumulate) lo += load<V>(cr), hi += load<V>(cr + W);
      store(cr, lo);
      store(cr + W, hi);
    } else {
      T tmp[NR];
      store(tmp, lo);
      store(tmp + W, hi);
      for (std::int64_t j = 0; j < ncols; ++j) cr[j] = accumulate ? cr[j] + tmp[j] : tmp[j];
    }
  }
}

// The same product for a 128-bit tile (TL::k128, the WebAssembly build): NV vectors of B per k instead of two, each
// element summed over k in the same order. A is always packed here ([kc][MR]: a_rs 1, a_cs MR, pack_a_128) and both
// operands are walked by pointers, so each k costs two pointer increments and every load has a constant offset. With
// run-time strides, each row's address (wasm32 computes an int64 index in i64, then wraps it) was as many
// instructions as the multiplies and adds; reading a row-major A in place with a pointer per row measured 10% slower
// on the words GPT's products than packing it.
template <typename T, typename TL, int ROWS>
void micro_kernel_128(std::int64_t kc, const T* a, [[maybe_unused]] std::int64_t a_rs,
                      [[maybe_unused]] std::int64_t a_cs, const T* bp, std::int64_t b_rs, T* c, std::int64_t ldc,
                      std::int64_t ncols, bool accumulate) {
  using V = typename TL::V;
  constexpr std::int64_t W = TL::W, NR = TL::NR, MR = TL::MR;
  constexpr int NV = static_cast<int>(TL::NV);
  const std::ptrdiff_t b_step = static_cast<std::ptrdiff_t>(b_rs);
  // Every loop over r and v is unrolled, so the accumulators live in registers (a rolled loop would index them,
  // which keeps them in memory).
  V acc[NV][ROWS];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v][r] = V{};
  for (const T* const a_end = a + kc * MR; a != a_end; a += MR, bp += b_step) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = load<V>(bp + v * W);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const T av = a[r];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[v][r] += av * b[v];
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
    T* cr = c + r * ldc;
    if (ncols == NR) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) store(cr + v * W, accumulate ? acc[v][r] + load<V>(cr + v * W) : acc[v][r]);
    } else {
      T tmp[NR];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) store(tmp + v * W, acc[v][r]);
      for (std::int64_t j = 0; j < ncols; ++j) cr[j] = accumulate ? cr[j] + tmp[j] : tmp[j];
    }
  }
}

template <typename T>
using MicroKernel = void (*)(std::int64_t, const T*, std::int64_t, std::int64_t, const T*, std::int64_t, T*, std::int64_t,
                             std::int64_t, bool);

// The micro-kernel for 1..MR rows (the last row block of C may be short): table[rows].
template <typename T, typename TL, std::size_t... R>
constexpr std::array<MicroKernel<T>, TL::MR + 1> micro_kernel_table(std::index_sequence<R...>) {
  if constexpr (TL::k128)
    return {nullptr, micro_kernel_128<T, TL, static_cast<int>(R) + 1>...};
  else
    return {nullptr, micro_kernel<T, TL, static_cast<int>(R) + 1>...};
}

template <typename T, typename TL>
MicroKernel<T> micro_kernel_for(std::int64_t rows) {
  static constexpr auto table = micro_kernel_table<T, TL>(std::make_index_sequence<TL::MR>{});
  return table[static_cast<std::size_t>(rows)];
}

// Packs a transposed view's B[k0:k0+kc, j0:j0+nc] (B's columns contiguous: row_stride 1) into panels of NR columns,
// reading each column along k; float goes 8 columns x 8 k at a time through registers.
template <typename T, typename TL>
void pack_b_transposed(MatrixRef<T> B, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, T* out) {
  constexpr std::int64_t NR = TL::NR;
  for (std::int64_t p = 0; p * NR < nc; ++p) {
    T* panel = out + p * kc * NR;
    const std::int64_t cols = std::min(NR, nc - p * NR);
    const T* col0 = B.data + k0 + (j0 + p * NR) * B.col_stride;  // column j of the panel at col0 + j * col_stride
    std::int64_t j = 0;
    if constexpr (std::is_same_v<T, float>)
      for (; j + 8 <= cols; j += 8) {
        std::int64_t k = 0;
        for (; k + 8 <= kc; k += 8) transpose8x8(col0 + j * B.col_stride + k, B.col_stride, panel + k * NR + j, NR);
        for (; k < kc; ++k)
          for (std::int64_t u = 0; u < 8; ++u) panel[k * NR + j + u] = col0[(j + u) * B.col_stride + k];
      }
    for (; j < cols; ++j)
      for (std::int64_t k = 0; k < kc; ++k) panel[k * NR + j] = col0[j * B.col_stride + k];
    for (std::int64_t k = 0; k < kc; ++k)
      for (j = cols; j < NR; ++j) panel[k * NR + j] = 0;
  }
}

// Packs B[k0:k0+kc, j0:j0+nc] into panels of NR columns: panel p holds [kc][NR], zero-padded past nc.
template <typename T, typename TL>
void pack_b(MatrixRef<T> B, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, T* out) {
  if (B.row_stride == 1) return pack_b_transposed<T, TL>(B, k0, kc, j0, nc, out);
  constexpr std::int64_t NR = TL::NR;
  for (std::int64_t p = 0; p * NR < nc; ++p) {
    T* panel = out + p * kc * NR;
    const std::int64_t cols = std::min(NR, nc - p * NR);
    for (std::int64_t k = 0; k < kc; ++k) {
      T* dst = panel + k * NR;
      const T* src = B.data + (k0 + k) * B.row_stride + (j0 + p * NR) * B.col_stride;
      if (B.col_stride == 1) {
        for (std::int64_t j = 0; j < cols; ++j) dst[j] = src[j];
      } else {
        for (std::int64_t j = 0; j < cols; ++j) dst[j] = src[j * B.col_stride];
      }
      for (std::int64_t j = cols; j < NR; ++j) dst[j] = 0;
    }
  }
}

// Packs A[0:rows, 0:kc] (rows <= MR) into [kc][MR]: the micro-kernel then reads A contiguously. Used when A is a
// transposed view (a weight gradient's g^T), whose rows the kernel would otherwise read a whole row of memory
// apart for every k: 256 k-steps over lines 4 KiB apart all fall into one set of the L1 cache and evict each other.
template <typename T, typename TL>
void pack_a(const T* a, std::int64_t a_rs, std::int64_t a_cs, std::int64_t rows, std::int64_t kc, T* out) {
  for (std::int64_t k = 0; k < kc; ++k)
    for (std::int64_t r = 0; r < rows; ++r) out[k * TL::MR + r] = a[r * a_rs + k * a_cs];
}

// pack_a for the 128-bit tile (the WebAssembly build, which packs every A): the same layout, walked with pointers and
// 32-bit counts (wasm32 computes an int64 index in i64 before each access, as many instructions as the copy itself).
template <typename T, typename TL>
void pack_a_128(const T* a, std::int64_t a_rs, std::int64_t a_cs, std::int64_t rows, std::int64_t kc, T* out) {
  const std::ptrdiff_t rs = static_cast<std::ptrdiff_t>(a_rs), cs = static_cast<std::ptrdiff_t>(a_cs);
  const int n = static_cast<int>(kc), m = static_cast<int>(rows);
  if (cs == 1) {  // row-major A: each row read along k
    for (int r = 0; r < m; ++r) {
      const T* src = a + r * rs;
      T* dst = out + r;
      for (int k = 0; k < n; ++k, dst += TL::MR) *dst = src[k];
    }
  } else {  // a transposed view (a weight gradient's g^T): each k's rows read together
    for (int k = 0; k < n; ++k, a += cs, out += TL::MR)
      for (int r = 0; r < m; ++r) out[r] = a[r * rs];
  }
}

inline constexpr std::int64_t kMaxInPlaceRowStride = 128;
inline constexpr std::size_t kInPlaceBlockBytes = 16 * 1024;

// Prefetches the next row block's A (rows [i, i + rows) of A[:, k0:k0+kc]) while the current block computes: A is
// often an activation just written by another op and gone from the caches, and each row block starts new streams
// that the hardware prefetcher has to discover. A row-major A is fetched a share per panel call (`part` of `parts`);
// a transposed one (packed per block) one line per k, all at once. Short rows (the small models' k of 32 or 64,
// whose A stays in cache) are left alone: there the loop costs more than it saves.
inline constexpr std::size_t kPrefetchRowBytes = 512;

template <typename T, typename TL>
void prefetch_a(MatrixRef<T> A, std::int64_t i, std::int64_t rows, std::int64_t k0, std::int64_t kc, std::int64_t part,
                std::int64_t parts) {
  if (rows <= 0 || kc * static_cast<std::int64_t>(sizeof(T)) < static_cast<std::int64_t>(kPrefetchRowBytes)) return;
  if (A.col_stride != 1) {
    if (part == 0 && A.row_stride == 1)
      for (std::int64_t k = 0; k < kc; ++k) __builtin_prefetch(A.data + i + (k0 + k) * A.col_stride);
    return;
  }
  constexpr std::int64_t kLine = 64 / sizeof(T);
  const std::int64_t lines = rows * ((kc + kLine - 1) / kLine), share = (lines + parts - 1) / parts;
  for (std::int64_t l = part * share; l < std::min(lines, (part + 1) * share); ++l)
    __builtin_prefetch(A.data + (i + l % rows) * A.row_stride + k0 + (l / rows) * kLine);
}

// `packed`: scratch of packed_size<T, TL>() elements, the caller's (its contents never outlive a call).
template <typename T, typename TL>
constexpr std::size_t packed_size() {
  return static_cast<std::size_t>(TL::KC * (TL::NC + TL::NR));
}

// B packed whole, every block at its own place, for a ReusePackedWeights scope to keep (core/kernels/packed_weights.h):
// block (j0, k0) at j0 * K + k0 * round_up(nc, NR) (the blocks before column j0 are NC wide, a multiple of NR).
template <typename TL>
std::size_t whole_packed_size(std::int64_t K, std::int64_t N) {
  return static_cast<std::size_t>(K * ((N + TL::NR - 1) / TL::NR * TL::NR));
}

// `keep`: B's packing may be kept (float only): the blocks this product packs go into the scope's buffer for B, or
// are read from it when an earlier product packed them. Either way the panels hold the same values.
template <typename T, typename TL>
void gemm_tiled(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C, std::int64_t ldc,
                bool parallel, T* packed, KeepPackedB keep = {}) {
  const std::int64_t row_blocks = (M + TL::MR - 1) / TL::MR;
  PackedWeights::Panels kept{nullptr, false};  // looked up when the first block is to be packed
  for (std::int64_t j0 = 0; j0 < N; j0 += TL::NC) {
    const std::int64_t nc = std::min(TL::NC, N - j0), panels = (nc + TL::NR - 1) / TL::NR;
    for (std::int64_t k0 = 0; k0 < K; k0 += TL::KC) {
      const std::int64_t kc = std::min(TL::KC, K - k0);
      // A narrow row-major B (a weight gradient's x, a layer's W) is read in place, NR columns of each row at a
      // time: packing it cost a fifth of [32x512]@[512x32], mostly the first read of B that the kernel now makes.
      // Wider ones stay packed, as the square products measured level with OpenBLAS were: a panel read in place
      // would touch a new stretch of memory for every k. The limit counts elements (512 bytes of float).
      // A block of B that fits in L1 with room to spare (a head's V or K in attention) is read in place at any row
      // stride: after the first row block its lines are all in L1, and packing it would cost as much as the products
      // when M is small.
      const bool b_in_place = B.col_stride == 1 && nc % TL::NR == 0 &&
                              (B.row_stride <= kMaxInPlaceRowStride || kc * nc * sizeof(T) <= kInPlaceBlockBytes);
      T* block = packed;  // this block's panels
      if constexpr (std::is_same_v<T, float>)
        if (!b_in_place && keep) {
          if (!kept.data)
            kept = keep.store->panels({B.data, B.row_stride, B.col_stride, K, N, TL::NR}, *keep.storage,
                                      whole_packed_size<TL>(K, N));
          block = kept.data + j0 * K + k0 * (panels * TL::NR);
        }
      if (!b_in_place && !kept.packed) pack_b<T, TL>(B, k0, kc, j0, nc, block);
      // Each thread owns whole rows of C, and every element sums over k in the same order: the result does not
      // depend on the number of threads.
      parallel_for(row_blocks, parallel, [&](std::int64_t ib) {
        const std::int64_t i = ib * TL::MR, rows = std::min(TL::MR, M - i);
        const MicroKernel<T> kernel = micro_kernel_for<T, TL>(rows);
        const T* a = A.data + i * A.row_stride + k0 * A.col_stride;
        std::int64_t a_rs = A.row_stride, a_cs = A.col_stride;
        alignas(64) T a_packed[TL::KC * TL::MR];
        if (TL::k128 || (a_cs != 1 && panels > 1)) {  // micro_kernel_128 reads A packed only
          if constexpr (TL::k128)
            pack_a_128<T, TL>(a, a_rs, a_cs, rows, kc, a_packed);
          else
            pack_a<T, TL>(a, a_rs, a_cs, rows, kc, a_packed);
          a = a_packed, a_rs = 1, a_cs = TL::MR;
        }
        const std::int64_t next_rows = std::min(TL::MR, M - i - TL::MR);  // the next row block's (0: none)
        for (std::int64_t p = 0; p < panels; ++p) {
          prefetch_a<T, TL>(A, i + TL::MR, next_rows, k0, kc, p, panels);
          const T* panel = b_in_place ? B.data + k0 * B.row_stride + j0 + p * TL::NR : block + p * kc * TL::NR;
          kernel(kc, a, a_rs, a_cs, panel, b_in_place ? B.row_stride : TL::NR,
                 C + i * ldc + j0 + p * TL::NR, ldc, std::min(TL::NR, nc - p * TL::NR), k0 > 0);
        }
      });
    }
  }
}

}  // namespace
}  // namespace cppgrad::kernels
