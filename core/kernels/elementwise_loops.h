#pragma once
// Elementwise loops over raw memory. map_unary/map_binary produce a fresh contiguous result; the binary one
// broadcasts, taking a flat vectorisable loop when both inputs are contiguous with the output's shape.
#include <array>
#include <stdexcept>
#include <string>

#include "core/kernels/parallel_for.h"
#include "core/kernels/strided.h"
#include "core/tensor.h"

namespace cppgrad::kernels {

// Big enough that splitting the loop across threads pays for waking them.
inline constexpr std::int64_t kParallelGrain = 1 << 15;

// out[i] = f(x[i]); T is the element type of x and out.
template <typename T, typename F>
Tensor map_unary(const Tensor& x, F f) {
  Tensor xc = x.detach().contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const T* px = xc.data<T>();
  T* po = out.mutable_data<T>();
  const std::int64_t n = out.numel();
  parallel_for_simd(n, n > kParallelGrain, [&](std::int64_t i) { po[i] = f(px[i]); });
  return out;
}

// out = f(a, b) with a and b broadcast to out_shape; Out may differ from T (e.g. for comparisons).
template <typename T, typename Out, typename F>
Tensor map_binary(const Tensor& a, const Tensor& b, const Shape& out_shape, F f) {
  Tensor out = Tensor::empty(out_shape, dtype_of<Out>());
  Out* po = out.mutable_data<Out>();
  const std::int64_t n = out.numel();
  if (a.shape() == out_shape && b.shape() == out_shape && a.is_contiguous() && b.is_contiguous()) {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    parallel_for_simd(n, n > kParallelGrain, [&](std::int64_t i) { po[i] = f(pa[i], pb[i]); });
    return out;
  }
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  const Strides sa = broadcast_strides(a.shape(), a.strides(), out_shape);
  const Strides sb = broadcast_strides(b.shape(), b.strides(), out_shape);
  std::int64_t o = 0;
  for_each_row<2>(out_shape, {sa, sb}, [&](const std::array<std::int64_t, 2>& off, std::int64_t len,
                                           const std::array<std::int64_t, 2>& in) {
    const T* ra = pa + off[0];
    const T* rb = pb + off[1];
    Out* ro = po + o;
    // Specialised inner loops for the common layouts (bias rows, scalars) so they vectorise.
    if (in[0] == 1 && in[1] == 1) {
      for (std::int64_t i = 0; i < len; ++i) ro[i] = f(ra[i], rb[i]);
    } else if (in[0] == 1 && in[1] == 0) {
      const T vb = rb[0];
      for (std::int64_t i = 0; i < len; ++i) ro[i] = f(ra[i], vb);
    } else if (in[0] == 0 && in[1] == 1) {
      const T va = ra[0];
      for (std::int64_t i = 0; i < len; ++i) ro[i] = f(va, rb[i]);
    } else {
      for (std::int64_t i = 0; i < len; ++i) ro[i] = f(ra[i * in[0]], rb[i * in[1]]);
    }
    o += len;
  });
  return out;
}

// g where at > 0, else 0 (PyTorch's threshold_backward): relu's backward, shared by relu (at = its input) and
// linear_relu (at = its output, positive exactly where its input is). A select: it vectorises as compare-and-blend,
// with no branch on the data's signs (a multiply by a 0/1 factor did not). -> contiguous, g's shape.
inline Tensor relu_grad(const Tensor& g, const Tensor& at) {
  return dispatch_floating(g.dtype(), "relu backward", [&](auto tag) {
    using T = decltype(tag);
    return map_binary<T, T>(g, at, g.shape(), [](T gv, T av) { return av > T(0) ? gv : T(0); });
  });
}

}  // namespace cppgrad::kernels
