#pragma once
// Matrix multiply kernels on raw memory. A matrix is (pointer, row stride, column stride) so that a
// transposed view is read in place. C is overwritten; its rows are contiguous, ldc elements apart.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/precision.h"

namespace cppgrad {
class Storage;
}

namespace cppgrad::kernels {

class PackedWeights;  // core/kernels/packed_weights.h

// A B operand whose packed panels a ReusePackedWeights scope may keep for later products with the same B (a linear
// layer's weight): the scope's store and B's storage. Empty, the default: B is packed for this product alone.
struct KeepPackedB {
  PackedWeights* store = nullptr;
  const std::shared_ptr<Storage>* storage = nullptr;
  explicit operator bool() const { return store != nullptr; }
};

// The widest vector instructions the float kernels use, chosen once per process: AVX-512 (F, VL, BW, DQ) when the
// CPU has them, AVX2 + FMA otherwise. CPPGRAD_SIMD=avx2 in the environment forces the narrower path (so both can be
// measured and tested on one machine); a level the CPU lacks is never chosen. Simd128: the WebAssembly build
// (docs/browser.md), where the same 8-lane kernels as Avx2's run as pairs of 128-bit vectors, always.
enum class SimdLevel { Avx2, Avx512, Simd128 };
SimdLevel simd_level();
bool cpu_has_avx512();
const char* simd_level_name(SimdLevel level);

template <typename T>
struct MatrixRef {
  const T* data;
  std::int64_t row_stride;
  std::int64_t col_stride;
  T operator()(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

// The readable reference: C[i, j] = sum_k A[i, k] * B[k, j]. Tests hold the fast kernel equal to it.
template <typename T>
void gemm_reference(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C);

// The fast kernel for one matrix: needs A or B to have a unit stride somewhere (any view of a contiguous
// tensor does); picks a loop order that streams over unit strides.
template <typename T>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A, MatrixRef<T> B, T* C);

// Whether a float product of this shape runs in the tiled kernel (gemm_tiled.h); narrower or smaller ones run in row
// loops, which stream well only when A's rows are contiguous.
bool gemm_is_tiled(std::int64_t M, std::int64_t N, std::int64_t K);

// `batch` independent products C_b = A_b @ B_b, A_b at A.data + a_offsets[b] (likewise B); C_b at C + c_offsets[b]
// with rows ldc elements apart (ldc = N and c_offsets[b] = b*M*N for a dense result; a larger ldc lets the
// products of several heads interleave their rows, [B, L, H, dh], so merging heads afterwards needs no copy).
// Threads split the batch and the rows when there is enough work. `b_storage`: B's storage, when B is a weight whose
// packing the innermost ReusePackedWeights scope of this thread may keep (one float product, batch 1); otherwise
// null. `precision`: BFloat16 makes each float product the bfloat16 one (core/kernels/gemm_bf16.h); double ignores it.
template <typename T>
void batched_gemm(std::int64_t batch, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<T> A,
                  const std::int64_t* a_offsets, MatrixRef<T> B, const std::int64_t* b_offsets, T* C,
                  const std::int64_t* c_offsets, std::int64_t ldc,
                  const std::shared_ptr<Storage>* b_storage = nullptr,
                  LinearPrecision precision = LinearPrecision::Float32);

// The tiled float GEMM compiled for AVX-512 (core/kernels/gemm_avx512.cpp): C = A @ B with C's rows ldc apart,
// `packed` scratch of avx512_packed_size() floats, `keep` as batched_gemm's b_storage. Call only when
// cpu_has_avx512(). Products narrower than one of its panels (kAvx512PanelWidth columns) take the 8-lane kernel
// instead.
inline constexpr std::int64_t kAvx512PanelWidth = 32;
std::size_t avx512_packed_size();
void gemm_tiled_avx512(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B, float* C,
                       std::int64_t ldc, bool parallel, float* packed, KeepPackedB keep);

// The float GEMM on a chosen path, for the tests that hold each path equal to gemm_reference; with b_storage (B's)
// inside a ReusePackedWeights scope, the path that keeps B's packing.
void gemm_at_level(SimdLevel level, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
                   MatrixRef<float> B, float* C, const std::shared_ptr<Storage>* b_storage = nullptr);

}  // namespace cppgrad::kernels
