#include "core/kernels/gemm.h"

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
               T* C) {
  for (std::int64_t i = i0; i < i1; ++i) {
    T* __restrict c = C + i * N;
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
              T* C) {
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
      C[i * N + j] = total;
    }
  }
}

template <typename T>
void gemm_rows(std::int64_t i0, std::int64_t i1, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B,
               T* C) {
  if (B.col_stride == 1 || N == 1) {
    rows_axpy(i0, i1, N, K, A, B, C);
  } else if (B.row_stride == 1 && A.col_stride == 1) {
    rows_dot(i0, i1, N, K, A, B, C);
  } else {
    // Neither layout streams: pack B row-major once (K*N work against M*N*K).
    std::vector<T> packed(static_cast<std::size_t>(K * N));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j) packed[k * N + j] = B(k, j);
    rows_axpy(i0, i1, N, K, A, MatrixRef<T>{packed.data(), N, 1}, C);
  }
}

}  // namespace

template <typename T>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C) {
  gemm_rows(0, M, N, K, A, B, C);
}

template <typename T>
void batched_gemm(std::int64_t batch, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A,
                  const std::int64_t* a_offsets, MatrixRef<T> B, const std::int64_t* b_offsets, T* C) {
  // Work is split into (matrix, block of rows) tasks; each task writes its own rows of C, so the result
  // does not depend on the number of threads.
  constexpr std::int64_t kRowBlock = 16;
  const std::int64_t blocks = (M + kRowBlock - 1) / kRowBlock;
  const std::int64_t tasks = batch * blocks;
  const bool parallel = batch * M * N * K > (1 << 18);
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t b = task / blocks, i0 = (task % blocks) * kRowBlock, i1 = std::min(M, i0 + kRowBlock);
    MatrixRef<T> Ab{A.data + a_offsets[b], A.row_stride, A.col_stride};
    MatrixRef<T> Bb{B.data + b_offsets[b], B.row_stride, B.col_stride};
    gemm_rows(i0, i1, N, K, Ab, Bb, C + b * M * N);
  }
}

template void gemm_reference<float>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*);
template void gemm_reference<double>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>, MatrixRef<double>,
                                     double*);
template void gemm<float>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*);
template void gemm<double>(std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>, MatrixRef<double>, double*);
template void batched_gemm<float>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>,
                                  const std::int64_t*, MatrixRef<float>, const std::int64_t*, float*);
template void batched_gemm<double>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, MatrixRef<double>,
                                   const std::int64_t*, MatrixRef<double>, const std::int64_t*, double*);

}  // namespace cppgrad::kernels
