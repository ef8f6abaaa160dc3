#pragma once
// The op author's elementwise toolkit: the forward of a unary or broadcasting binary op, dispatched on the dtype so
// one lambda serves float32 (training) and float64 (gradient checks). Backward rules are written in ops (mul, sub,
// ...), so they can be differentiated again. core/ops/elementwise.cpp and core/ops/unary.cpp define their ops with
// these; docs/add-an-op.md shows how.
#include <string>

#include "core/kernels/elementwise_loops.h"
#include "core/tensor.h"

namespace cppgrad::op_helpers {

inline void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    throw std::invalid_argument(std::string(op) + ": dtype mismatch: a is " + dtype_name(a.dtype()) + ", b is " +
                                dtype_name(b.dtype()) + " (convert one with .to())");
}

// The forward of a broadcasting binary op: checks, then out = f(a, b).
template <typename F>
Tensor binary_forward(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_same_dtype(a, b, op);
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), op);
  return dispatch_floating(a.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    return kernels::map_binary<T, T>(a.detach(), b.detach(), out_shape, [f](T x, T y) { return f(x, y); });
  });
}

// The forward of a unary op: out = f(x), elementwise.
template <typename F>
Tensor unary_forward(const Tensor& x, const char* op, F f) {
  return dispatch_floating(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    return kernels::map_unary<T>(x, [f](T v) { return static_cast<T>(f(v)); });
  });
}

}  // namespace cppgrad::op_helpers
