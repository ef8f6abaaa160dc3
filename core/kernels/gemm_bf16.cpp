// The bfloat16 GEMM: its definition, the portable kernel, and the choice between it and the AVX512_BF16 one
// (core/kernels/gemm_bf16.h says what all three compute).
#include "core/kernels/gemm_bf16.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/bfloat16.h"
#include "core/kernels/gemm_bf16_tiled.h"
#include "core/kernels/scratch.h"
#include "core/kernels/simd.h"


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

// The portable tile: gemm_bf16_tiled.h's FMA tile on 8-lane vectors, 6 rows x 16 columns of C in registers as
// gemm_tiled.h's AVX2 tile.
using PortableTile = FmaTile<f32x8, 6>;

}  // namespace

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  static const bool has = cpu_has_avx512() && __builtin_cpu_supports("avx512bf16") && avx512_bf16_tile_built();
  return has;
#else
  return false;
#endif
}

// Where both AVX-512 kernels can run, the faster one, by vendor: Intel's cores run vdpbf16ps at half their float32
// FMA rate (a 2-core Sapphire Rapids: 108.6 against 216.2 GFLOP/s, bench/gpt/fma_peak.c), so 16 FMA lanes beat it
// there; AMD's Zen 4 runs it at twice. Either gives the same bits.
Bf16Kernel bf16_kernel() {
  if (simd_level() != SimdLevel::Avx512) return Bf16Kernel::Portable;
#if defined(__x86_64__)
  static const bool dot_products_win = cpu_has_avx512_bf16() && __builtin_cpu_is("amd");
  return dot_products_win ? Bf16Kernel::Avx512Bf16 : Bf16Kernel::Avx512;
#else
  return Bf16Kernel::Avx512;
#endif
}

const char* bf16_kernel_name(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::Portable: return "portable";
    case Bf16Kernel::Avx512: return "avx512";
    case Bf16Kernel::Avx512Bf16: return "avx512_bf16";
  }
  return "unknown";
}

void gemm_bf16(Bf16Kernel kernel, std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
               MatrixRef<float> B, float* C, std::int64_t ldc, bool parallel,
               const std::shared_ptr<Storage>* b_storage) {
  KeepPackedB keep;
  if (b_storage) keep = {packed_weights_in_scope(), b_storage};
  if (kernel == Bf16Kernel::Avx512) {
    if (!cpu_has_avx512()) throw std::logic_error("gemm_bf16: this CPU has no AVX-512 (use bf16_kernel())");
    thread_local ScratchBuffer<float> wide;
    return gemm_bf16_avx512_fma(M, N, K, A, B, C, ldc, parallel, wide.get(avx512_fma_bf16_packed_size()), keep);
  }
  if (kernel == Bf16Kernel::Avx512Bf16) {
    if (!cpu_has_avx512_bf16()) throw std::logic_error("gemm_bf16: this CPU has no AVX512_BF16 (use bf16_kernel())");
    thread_local ScratchBuffer<std::uint32_t> pairs;
    return gemm_bf16_avx512(M, N, K, A, B, C, ldc, parallel, pairs.get(avx512_bf16_packed_size()), keep);
  }
  thread_local ScratchBuffer<float> packed;
  gemm_bf16_tiled<PortableTile, FlushSubnormalsScope>(M, N, K, A, B, C, ldc, parallel,
                                                      packed.get(bf16_packed_b_size<PortableTile>()), keep);
}

}  // namespace cppgrad::kernels
