#pragma once
// The bfloat16 matrix product: C = A @ B with each input rounded to bfloat16 (core/bfloat16.h) and the products
// summed in float32. It is what a matmul or linear layer computes under the bfloat16 precision (core/precision.h).
//
// Its definition, which gemm_bf16_reference is and every kernel equals bit for bit:
//   C[i, j] = one float32 running sum, from +0, over k = 0, 1, ..., K-1 in order, of round(A[i, k]) * round(B[k, j]):
//   each addition adds the exact product (a bfloat16 product fits float32's mantissa) and rounds once, to nearest
//   even; a sum below 2^-126 in magnitude becomes a zero of its sign (flush to zero).
// That is vdpbf16ps's arithmetic (AVX512_BF16: found equal on 6 million random pairs, subnormal and overflowing ranges
// included): it adds a pair's two products one after the other, the high half's first, so the fast kernel packs k in
// the high half and k+1 in the low one. The portable kernel gets the same bits from an FMA per product under the
// CPU's flush-to-zero mode. (AMX's tile product, on the same CPUs, rounds otherwise: it matched this order in only
// about 70% of sums, and no other order either, so it is not one of the kernels.)
//
// One exception, on WebAssembly only: without FMA or a flush-to-zero mode, its kernel multiplies, then adds, and
// keeps subnormals, so a product or a sum outside float32's normal range (below 2^-126 or above 3.4e38 in
// magnitude) may round differently there. Nothing else does.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/kernels/gemm.h"

namespace cppgrad::kernels {

// The definition, one element at a time. C's rows are ldc apart.
void gemm_bf16_reference(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                         float* C, std::int64_t ldc);

// The kernels: Portable (FMAs on 8 float lanes: any CPU, and WebAssembly), Avx512 (the same on 16 lanes, where the
// CPU has AVX-512) and Avx512Bf16 (vdpbf16ps, where it has AVX512_BF16). bf16_kernel() is the one this process uses:
// Portable when CPPGRAD_SIMD asks for avx2 or the CPU has no AVX-512 (core/kernels/gemm.h); otherwise the faster of
// the other two on this CPU's make (gemm_bf16.cpp says why).
enum class Bf16Kernel { Portable, Avx512, Avx512Bf16 };
bool cpu_has_avx512_bf16();
Bf16Kernel bf16_kernel();
const char* bf16_kernel_name(Bf16Kernel kernel);

// C = the definition's product, on `kernel`, threads splitting C's rows when `parallel` (the same bits either way).
// b_storage: B's storage, when B is a weight whose packing this thread's ReusePackedWeights scope may keep
// (core/kernels/packed_weights.h), as batched_gemm's.
void gemm_bf16(Bf16Kernel kernel, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
               MatrixRef<float> B, float* C, std::int64_t ldc, bool parallel,
               const std::shared_ptr<Storage>* b_storage = nullptr);

// The AVX512_BF16 kernel itself (core/kernels/gemm_bf16_avx512.cpp): call only when cpu_has_avx512_bf16(), with
// `packed` scratch of avx512_bf16_packed_size() values; and the 16-lane FMA kernel (call only when cpu_has_avx512()).
bool avx512_bf16_tile_built();  // false in a build whose compiler cannot make it (gemm_bf16_avx512.cpp says which)
std::size_t avx512_bf16_packed_size();
void gemm_bf16_avx512(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                      float* C, std::int64_t ldc, bool parallel, std::uint32_t* packed, KeepPackedB keep);
std::size_t avx512_fma_bf16_packed_size();
void gemm_bf16_avx512_fma(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B,
                          float* C, std::int64_t ldc, bool parallel, float* packed, KeepPackedB keep);

}  // namespace cppgrad::kernels
