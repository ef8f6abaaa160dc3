// The tiled float GEMM of core/kernels/gemm_tiled.h with 16-lane vectors, compiled for AVX-512 inside a target
// region, so this file needs no special compiler flags and the rest of the library stays runnable on any x86-64
// with AVX2. Every header is included before the region: only the code of gemm_tiled.h (internal linkage) and the
// one entry point below are compiled for AVX-512, and the entry point is only called when cpu_has_avx512().
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/kernels/gemm.h"
#include "core/kernels/packed_weights.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/simd.h"

#if defined(__x86_64__)
#include "core/kernels/avx512_begin.h"  // every header above, the kernel loops below

#include "core/kernels/gemm_tiled.h"

namespace cppgrad::kernels {

namespace {
using WideTile = Tile<float, f32x16>;
static_assert(WideTile::NR == kAvx512PanelWidth);
}  // namespace

void gemm_tiled_avx512(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B, float* C,
                       std::int64_t ldc, bool parallel, float* packed, KeepPackedB keep) {
  gemm_tiled<float, WideTile>(M, N, K, A, B, C, ldc, parallel, packed, keep);
}

}  // namespace cppgrad::kernels

#include "core/kernels/avx512_end.h"

namespace cppgrad::kernels {
std::size_t avx512_packed_size() { return packed_size<float, WideTile>(); }
}  // namespace cppgrad::kernels

#else  // not x86-64: no AVX-512 kernel; cpu_has_avx512() is false, so nothing calls these

namespace cppgrad::kernels {
std::size_t avx512_packed_size() { return 0; }
void gemm_tiled_avx512(std::int64_t, std::int64_t, std::int64_t, MatrixRef<float>, MatrixRef<float>, float*,
                       std::int64_t, bool, float*, KeepPackedB) {}
}  // namespace cppgrad::kernels

#endif
