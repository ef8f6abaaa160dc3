#include "core/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/kernels/gemm_bf16.h"
#include "core/kernels/gemm_tiled.h"
#include "core/kernels/packed_weights.h"
#include "core/kernels/scratch.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/product_count.h"
#include "core/kernels/simd.h"

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

// The float instance of rows_dot, the same sums in the same order (lane u of a vector is acc[u] above, lane_sums
// adds them as the scalar line does), with eight columns' dot products in flight at once: one product's eight
// dependent additions would leave the FMA units idle between them. This is a decoding step's every product (one
// row of A against a weight matrix: y = x W^T for one token), where that latency was most of the time.
template <>
void rows_dot<float>(std::int64_t i0, std::int64_t i1, std::int64_t N, std::int64_t K, MatrixRef<float> A,
                     MatrixRef<float> B, float* C, std::int64_t ldc) {
  const std::int64_t K8 = K / 8 * 8;
  for (std::int64_t i = i0; i < i1; ++i) {
    const float* __restrict a = A.data + i * A.row_stride;
    std::int64_t j = 0;
    for (; j + 8 <= N; j += 8) {
      const float* __restrict b = B.data + j * B.col_stride;
      f32x8 acc[8] = {};
      for (std::int64_t k = 0; k < K8; k += 8) {
        const f32x8 av = load8(a + k);
        for (int c = 0; c < 8; ++c) acc[c] += av * load8(b + c * B.col_stride + k);
      }
      store8(C + i * ldc + j, lane_sums(acc));
      for (int c = 0; c < 8; ++c)
        for (std::int64_t k = K8; k < K; ++k) C[i * ldc + j + c] += a[k] * b[c * B.col_stride + k];
    }
    for (; j < N; ++j) {  // the last N % 8 columns one at a time
      const float* __restrict b = B.data + j * B.col_stride;
      f32x8 acc = {};
      for (std::int64_t k = 0; k < K8; k += 8) acc += load8(a + k) * load8(b + k);
      float total = lane_total(acc);
      for (std::int64_t k = K8; k < K; ++k) total += a[k] * b[k];
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
    thread_local ScratchBuffer<T> scratch;
    T* packed = scratch.get(static_cast<std::size_t>(K * N));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j) packed[k * N + j] = B(k, j);
    rows_axpy(i0, i1, N, K, A, MatrixRef<T>{packed, N, 1}, C, ldc);
  }
}

// ------------------------------------------------------------------------------------------- tiled kernel
// core/kernels/gemm_tiled.h; here its baseline instance (8 lanes) and the choice of the AVX-512 one.

template <typename T> struct Simd;
template <> struct Simd<float> { using V = f32x8; };
template <> struct Simd<double> { using V = f64x4; };
template <typename T>
using BaseTile = Tile<T, typename Simd<T>::V>;

// The tiled float GEMM's tile. WebAssembly: 4-lane vectors, one v128 each, in a 5 x 8 micro-tile that fits V8's
// registers without FMA (the 8-lane tile there is 24 v128 accumulators, mostly spilled). The choice of path
// (worth_tiling) and each element's order of summation over k stay those of the 8-lane tile: the same bits.
#if defined(__wasm_simd128__)
using f32x4 = float __attribute__((vector_size(16)));
template <typename T>
using TiledTile = std::conditional_t<std::is_same_v<T, float>, Tile<float, f32x4>, BaseTile<T>>;
#else
template <typename T>
using TiledTile = BaseTile<T>;
#endif

// Scratch for packed panels, reused across calls on the same thread (its contents never outlive a call), 64-byte
// aligned so that the micro-kernel's loads of a panel never split a cache line.
template <typename T>
T* pack_buffer(std::size_t size) {
  thread_local ScratchBuffer<T> buffer;
  return buffer.get(size);
}

// The float products take the AVX-512 kernel at that level (when the CPU has it) and when they are at least one of
// its panels wide; double (gradient checks) and everything else the baseline.
// b_storage (B's, for a float weight) lets this thread's ReusePackedWeights scope, if any, keep B's packing.
template <typename T>
void gemm_tiled_at(SimdLevel level, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B,
                   T* C, std::int64_t ldc, bool parallel, const std::shared_ptr<Storage>* b_storage = nullptr) {
  KeepPackedB keep;
  if (b_storage) keep = {packed_weights_in_scope(), b_storage};
  if constexpr (std::is_same_v<T, float>)
    if (level == SimdLevel::Avx512 && cpu_has_avx512() && N >= kAvx512PanelWidth)
      return gemm_tiled_avx512(M, N, K, A, B, C, ldc, parallel, pack_buffer<float>(avx512_packed_size()), keep);
  gemm_tiled<T, TiledTile<T>>(M, N, K, A, B, C, ldc, parallel, pack_buffer<T>(packed_size<T, TiledTile<T>>()), keep);
}

// Rows of C exactly one vector wide (attention with 8 floats per head): C[i, :] = sum_k A[i, k] * B[k, :] with the
// row held in one register for the whole k loop. B's rows are gathered into vectors when B is a transposed view.
template <typename T>
bool is_one_vector_wide(std::int64_t N) {
  return N == BaseTile<T>::W;
}

template <typename T>
void rows_one_vector(std::int64_t i0, std::int64_t i1, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C,
                     std::int64_t ldc) {
  using V = typename BaseTile<T>::V;
  constexpr std::int64_t W = BaseTile<T>::W;
  // B's rows are read in place when each is contiguous (v in attention); otherwise they are gathered once into
  // this thread's buffer as K contiguous vectors.
  const T* b = B.data;
  std::int64_t b_row = B.row_stride;
  if (B.col_stride != 1) {
    thread_local ScratchBuffer<T> scratch;
    T* rows = scratch.get(static_cast<std::size_t>(K * W));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < W; ++j) rows[k * W + j] = B(k, j);
    b = rows, b_row = W;
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
  return N >= BaseTile<T>::NR && M >= BaseTile<T>::MR && K >= 8 && M * N * K >= 16384;
}

}  // namespace

bool gemm_is_tiled(std::int64_t M, std::int64_t N, std::int64_t K) { return worth_tiling<float>(M, N, K); }

template <typename T>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C) {
  if (worth_tiling<T>(M, N, K)) return gemm_tiled_at(simd_level(), M, N, K, A, B, C, N, /*parallel=*/false);
  gemm_rows(0, M, N, K, A, B, C, N);
}

template <typename T>
void batched_gemm(std::int64_t batch, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A,
                  const std::int64_t* a_offsets, MatrixRef<T> B, const std::int64_t* b_offsets, T* C,
                  const std::int64_t* c_offsets, std::int64_t ldc, const std::shared_ptr<Storage>* b_storage,
                  LinearPrecision precision) {
  count_product(batch * M * N * K);  // for a CountProducts scope (core/kernels/product_count.h)
  // Waking a second thread costs a few microseconds; below ~2M multiply-adds (the reversal model's products are
  // at most 1M) the split does not pay for it, measured with the training step at 1 and 2 threads.
  const bool parallel = batch * M * N * K >= (1 << 21);
  // The bfloat16 products (float only) take their own kernel at every size: it is their definition's order.
  const bool bf16 = std::is_same_v<T, float> && precision == LinearPrecision::BFloat16;
  if (bf16 || worth_tiling<T>(M, N, K)) {
    auto one = [&](std::int64_t b, bool threads_inside) {
      const MatrixRef<T> Ab{A.data + a_offsets[b], A.row_stride, A.col_stride},
          Bb{B.data + b_offsets[b], B.row_stride, B.col_stride};
      const std::shared_ptr<Storage>* keep = batch == 1 ? b_storage : nullptr;
      if constexpr (std::is_same_v<T, float>)
        if (bf16) return gemm_bf16(bf16_kernel(), M, N, K, Ab, Bb, C + c_offsets[b], ldc, threads_inside, keep);
      gemm_tiled_at(simd_level(), M, N, K, Ab, Bb, C + c_offsets[b], ldc, threads_inside, keep);
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
                                  const std::int64_t*, std::int64_t, const std::shared_ptr<Storage>*, LinearPrecision);
template void batched_gemm<double>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>,
                                   const std::int64_t*, MatrixRef<double>, const std::int64_t*, double*,
                                   const std::int64_t*, std::int64_t, const std::shared_ptr<Storage>*,
                                   LinearPrecision);

}  // namespace cppgrad::kernels

namespace cppgrad::kernels {

void gemm_at_level(SimdLevel level, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
                   MatrixRef<float> B, float* C, const std::shared_ptr<Storage>* b_storage) {
  if (worth_tiling<float>(M, N, K)) return gemm_tiled_at(level, M, N, K, A, B, C, N, /*parallel=*/false, b_storage);
  gemm_rows(0, M, N, K, A, B, C, N);
}

}  // namespace cppgrad::kernels
