#include "core/kernels/gemm.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/simd.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cppgrad::kernels {

template <typename T>
void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (std::int64_t k = 0; k < K; ++k) acc += A(i, k) * B(k, j);
      C[i * N + j] = acc;
    }
}

namespace {

// Rows [i0, i1) of C. B rows contiguous: C[i, :] += A[i, k] * B[k, :], a unit-stride loop over j.
template <typename T>
void rows_axpy(std::int64_t i0, std::int64_t i1, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B,
               T* C, std::int64_t ldc) {
  for (std::int64_t i = i0; i < i1; ++i) {
    T* __restrict c = C + i * ldc;
    std::fill(c, c + N, T(0));
    for (std::int64_t k = 0; k < K; ++k) {
      const T a = A(i, k);
      const T* __restrict b = B.data + k * B.row_stride;
      for (std::int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

// B columns contiguous (B is a transposed view) and A rows contiguous: C[i, j] = dot(A[i, :], B[:, j]).
template <typename T>
void rows_dot(std::int64_t i0, std::int64_t i1, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B,
              T* C, std::int64_t ldc) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const T* __restrict a = A.data + i * A.row_stride;
    for (std::int64_t j = 0; j < N; ++j) {
      const T* __restrict b = B.data + j * B.col_stride;
      // Eight partial sums: vectorises without -ffast-math and keeps the order fixed (reproducible).
      T acc[8] = {};
      std::int64_t k = 0;
      for (; k + 8 <= K; k += 8)
        for (int u = 0; u < 8; ++u) acc[u] += a[k + u] * b[k + u];
      T total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      for (; k < K; ++k) total += a[k] * b[k];
      C[i * ldc + j] = total;
    }
  }
}

template <typename T>
void rows_one_vector(std::int64_t i0, std::int64_t i1, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C,
                     std::int64_t ldc);

template <typename T>
bool is_one_vector_wide(std::int64_t N);

template <typename T>
void gemm_rows(std::int64_t i0, std::int64_t i1, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B,
               T* C, std::int64_t ldc) {
  if (is_one_vector_wide<T>(N)) {
    rows_one_vector(i0, i1, K, A, B, C, ldc);
  } else if (B.col_stride == 1 || N == 1) {
    rows_axpy(i0, i1, N, K, A, B, C, ldc);
  } else if (B.row_stride == 1 && A.col_stride == 1 && (K >= 32 || i1 - i0 <= 2)) {
    // Long dot products amortise their horizontal sums; and for one or two rows (a decoding step's query
    // against its cached keys) packing B would cost more than the product itself.
    rows_dot(i0, i1, N, K, A, B, C, ldc);
  } else {
    // Neither layout streams: pack B row-major once (K*N work against M*N*K), into this thread's buffer.
    thread_local std::vector<T> packed;
    packed.resize(static_cast<std::size_t>(K * N));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j) packed[k * N + j] = B(k, j);
    rows_axpy(i0, i1, N, K, A, MatrixRef<T>{packed.data(), N, 1}, C, ldc);
  }
}

// ------------------------------------------------------------------------------------------- tiled kernel
// The fast path, as BLIS/GotoBLAS lay it out: B is packed into column panels of NR values per k (contiguous,
// zero-padded), and a micro-kernel keeps an MR x NR block of C in registers while it walks k, loading NR values
// of B and broadcasting one value of A per row. C is read and written once per block instead of once per k.
// Blocks of KC x NC of B are packed at a time so the panels stay in L2. Written with GCC/Clang vector
// extensions: AVX2 + FMA code when built with -mavx2 -mfma, SSE2 code otherwise, the same source either way.

template <typename T> struct Simd;
template <> struct Simd<float> { using V = f32x8; };
template <> struct Simd<double> { using V = f64x4; };

template <typename T>
struct Tile {
  using V = typename Simd<T>::V;
  static constexpr std::int64_t W = sizeof(V) / sizeof(T);  // lanes per vector
  static constexpr std::int64_t NR = 2 * W;                 // columns per micro-tile (two vectors)
  static constexpr std::int64_t MR = 6;                     // rows per micro-tile: 12 accumulators + 2 B + 1 A
  static constexpr std::int64_t KC = 256;                   // k-depth of a packed block
  static constexpr std::int64_t NC = 32 * W;                // columns of a packed block (KC*NC*sizeof(T) = 256 KiB)
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
template <typename T, int ROWS>
void micro_kernel(std::int64_t kc, const T* a, std::int64_t a_rs, std::int64_t a_cs, const T* bp, std::int64_t b_rs,
                  T* c, std::int64_t ldc, std::int64_t ncols, bool accumulate) {
  using V = typename Tile<T>::V;
  constexpr std::int64_t W = Tile<T>::W, NR = Tile<T>::NR;
  // Every loop over r is unrolled, so the accumulators live in registers (a rolled loop would index them, which
  // keeps them in memory).
  V acc0[ROWS], acc1[ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r) acc0[r] = V{}, acc1[r] = V{};
  for (std::int64_t k = 0; k < kc; ++k) {
    const V b0 = load<V>(bp + k * b_rs), b1 = load<V>(bp + k * b_rs + W);
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const T av = a[r * a_rs + k * a_cs];
      acc0[r] += av * b0;
      acc1[r] += av * b1;
    }
  }
#pragma GCC unroll 8
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

template <typename T>
using MicroKernel = void (*)(std::int64_t, const T*, std::int64_t, std::int64_t, const T*, std::int64_t, T*, std::int64_t,
                             std::int64_t, bool);

template <typename T>
MicroKernel<T> micro_kernel_for(std::int64_t rows) {
  static constexpr MicroKernel<T> table[] = {nullptr, micro_kernel<T, 1>, micro_kernel<T, 2>, micro_kernel<T, 3>,
                                             micro_kernel<T, 4>, micro_kernel<T, 5>, micro_kernel<T, 6>};
  static_assert(sizeof(table) / sizeof(table[0]) == Tile<T>::MR + 1);
  return table[rows];
}

// Packs B[k0:k0+kc, j0:j0+nc] into panels of NR columns: panel p holds [kc][NR], zero-padded past nc.
template <typename T>
void pack_b(MatrixRef<T> B, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, T* out) {
  constexpr std::int64_t NR = Tile<T>::NR;
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

// Scratch for packed panels, reused across calls on the same thread (its contents never outlive a call).
template <typename T>
T* pack_buffer() {
  thread_local std::vector<T> buffer(static_cast<std::size_t>(Tile<T>::KC * (Tile<T>::NC + Tile<T>::NR)));
  return buffer.data();
}

inline constexpr std::int64_t kMaxInPlaceRowStride = 128;

template <typename T>
void gemm_tiled(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C, std::int64_t ldc,
                bool parallel) {
  using TL = Tile<T>;
  T* packed = pack_buffer<T>();
  const std::int64_t row_blocks = (M + TL::MR - 1) / TL::MR;
  for (std::int64_t j0 = 0; j0 < N; j0 += TL::NC) {
    const std::int64_t nc = std::min(TL::NC, N - j0), panels = (nc + TL::NR - 1) / TL::NR;
    for (std::int64_t k0 = 0; k0 < K; k0 += TL::KC) {
      const std::int64_t kc = std::min(TL::KC, K - k0);
      // A narrow row-major B (a weight gradient's x, a layer's W) is read in place, NR columns of each row at a
      // time: packing it cost a fifth of [32x512]@[512x32], mostly the first read of B that the kernel now makes.
      // Wider ones stay packed, as the square products measured level with OpenBLAS were: a panel read in place
      // would touch a new stretch of memory for every k. The limit counts elements (512 bytes of float).
      const bool b_in_place = B.col_stride == 1 && nc % TL::NR == 0 && B.row_stride <= kMaxInPlaceRowStride;
      if (!b_in_place) pack_b(B, k0, kc, j0, nc, packed);
      // Each thread owns whole rows of C, and every element sums over k in the same order: the result does not
      // depend on the number of threads.
      parallel_for(row_blocks, parallel, [&](std::int64_t ib) {
        const std::int64_t i = ib * TL::MR, rows = std::min(TL::MR, M - i);
        const MicroKernel<T> kernel = micro_kernel_for<T>(rows);
        const T* a = A.data + i * A.row_stride + k0 * A.col_stride;
        for (std::int64_t p = 0; p < panels; ++p) {
          const T* panel = b_in_place ? B.data + k0 * B.row_stride + j0 + p * TL::NR : packed + p * kc * TL::NR;
          kernel(kc, a, A.row_stride, A.col_stride, panel, b_in_place ? B.row_stride : TL::NR,
                 C + i * ldc + j0 + p * TL::NR, ldc, std::min(TL::NR, nc - p * TL::NR), k0 > 0);
        }
      });
    }
  }
}

// Rows of C exactly one vector wide (attention with 8 floats per head): C[i, :] = sum_k A[i, k] * B[k, :] with the
// row held in one register for the whole k loop. B's rows are gathered into vectors when B is a transposed view.
template <typename T>
bool is_one_vector_wide(std::int64_t N) {
  return N == Tile<T>::W;
}

template <typename T>
void rows_one_vector(std::int64_t i0, std::int64_t i1, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C,
                     std::int64_t ldc) {
  using V = typename Tile<T>::V;
  constexpr std::int64_t W = Tile<T>::W;
  // B's rows are read in place when each is contiguous (v in attention); otherwise they are gathered once into
  // this thread's buffer as K contiguous vectors.
  const T* b = B.data;
  std::int64_t b_row = B.row_stride;
  if (B.col_stride != 1) {
    thread_local std::vector<T> rows;
    rows.resize(static_cast<std::size_t>(K * W));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < W; ++j) rows[k * W + j] = B(k, j);
    b = rows.data(), b_row = W;
  }
  for (std::int64_t i = i0; i < i1; ++i) {
    // Four accumulators in a fixed order: four FMA chains in flight instead of one waiting on the last.
    V acc[4] = {};
    std::int64_t k = 0;
    for (; k + 4 <= K; k += 4)
      for (int u = 0; u < 4; ++u) acc[u] += A(i, k + u) * load<V>(b + (k + u) * b_row);
    for (; k < K; ++k) acc[0] += A(i, k) * load<V>(b + k * b_row);
    const V total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    __builtin_memcpy(C + i * ldc, &total, sizeof(V));
  }
}

// Small or narrow products (attention's 8x8 blocks) do not fill a micro-tile; the plain loops serve them better.
template <typename T>
bool worth_tiling(std::int64_t M, std::int64_t N, std::int64_t K) {
  return N >= Tile<T>::NR && M >= Tile<T>::MR && K >= 8 && M * N * K >= 16384;
}

}  // namespace

template <typename T>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C) {
  if (worth_tiling<T>(M, N, K)) return gemm_tiled(M, N, K, A, B, C, N, /*parallel=*/false);
  gemm_rows(0, M, N, K, A, B, C, N);
}

template <typename T>
void batched_gemm(std::int64_t batch, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A,
                  const std::int64_t* a_offsets, MatrixRef<T> B, const std::int64_t* b_offsets, T* C,
                  const std::int64_t* c_offsets, std::int64_t ldc) {
  // Waking a second thread costs a few microseconds; below ~2M multiply-adds (the reversal model's products are
  // at most 1M) the split does not pay for it, measured with the training step at 1 and 2 threads.
  const bool parallel = batch * M * N * K >= (1 << 21);
  if (worth_tiling<T>(M, N, K)) {
    auto one = [&](std::int64_t b, bool threads_inside) {
      gemm_tiled(M, N, K, MatrixRef<T>{A.data + a_offsets[b], A.row_stride, A.col_stride},
                 MatrixRef<T>{B.data + b_offsets[b], B.row_stride, B.col_stride}, C + c_offsets[b], ldc, threads_inside);
    };
    if (batch == 1) return one(0, parallel);
    parallel_for(batch, parallel, [&](std::int64_t b) { one(b, false); });
    return;
  }
  // Work is split into (matrix, block of rows) tasks; each task writes its own rows of C, so the result
  // does not depend on the number of threads.
  constexpr std::int64_t kRowBlock = 16;
  const std::int64_t blocks = (M + kRowBlock - 1) / kRowBlock;
  const std::int64_t tasks = batch * blocks;
  parallel_for(tasks, parallel, [&](std::int64_t task) {
    const std::int64_t b = task / blocks, i0 = (task % blocks) * kRowBlock, i1 = std::min(M, i0 + kRowBlock);
    MatrixRef<T> Ab{A.data + a_offsets[b], A.row_stride, A.col_stride};
    MatrixRef<T> Bb{B.data + b_offsets[b], B.row_stride, B.col_stride};
    gemm_rows(i0, i1, N, K, Ab, Bb, C + c_offsets[b], ldc);
  });
}

template void gemm_reference<float>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*);
template void gemm_reference<double>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>, MatrixRef<double>,
                                     double*);
template void gemm<float>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*);
template void gemm<double>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>, MatrixRef<double>, double*);
template void batched_gemm<float>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>,
                                  const std::int64_t*, MatrixRef<float>, const std::int64_t*, float*,
                                  const std::int64_t*, std::int64_t);
template void batched_gemm<double>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>,
                                   const std::int64_t*, MatrixRef<double>, const std::int64_t*, double*,
                                   const std::int64_t*, std::int64_t);

}  // namespace cppgrad::kernels
