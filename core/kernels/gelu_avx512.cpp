// The GELU loops of core/kernels/gelu_loops.h on 16-lane vectors, compiled for AVX-512 inside a target region, as
// gemm_avx512.cpp: no special compiler flags. Every standard header is included before the region, so no inline
// function of the standard library is compiled for AVX-512; the loops, the exp and the lane helpers they include
// (internal linkage, all of them) are compiled inside it.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "core/kernels/gelu.h"

#if defined(__x86_64__)
#include "core/kernels/avx512_begin.h"  // every header above, the kernel loops below

#include "core/kernels/gelu_loops.h"

namespace cppgrad::kernels {

void gelu_tanh_forward_avx512(const float* x, float* y, std::int64_t n) { gelu_forward_loop<f32x16>(x, y, n); }

void gelu_tanh_backward_avx512(const float* g, const float* x, float* dx, std::int64_t n) {
  gelu_backward_loop<f32x16>(g, x, dx, n);
}

}  // namespace cppgrad::kernels

#include "core/kernels/avx512_end.h"

#else  // not x86-64: no AVX-512 loops; cpu_has_avx512() is false, so nothing calls these

namespace cppgrad::kernels {
void gelu_tanh_forward_avx512(const float*, float*, std::int64_t) {}
void gelu_tanh_backward_avx512(const float*, const float*, float*, std::int64_t) {}
}  // namespace cppgrad::kernels

#endif
