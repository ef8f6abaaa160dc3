#pragma once
// Elementwise arithmetic (core/ops/elementwise.cpp): + - * / of two tensors or a tensor and a number, and the
// inverse of broadcasting. Part of core/ops.h, which includes every op group.
// Shape vocabulary: B batch, T/L sequence, C channels/classes, D features, H heads, V vocabulary, N rows.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// Binary ops broadcast NumPy/PyTorch style; both inputs must have the same floating dtype.
// a: (..A)  b: (..B) -> broadcast(..A, ..B); backward sums the gradient back to each input's shape.
Tensor add(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor sub(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor mul(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor div(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// Scalar variants: x: (..) -> (..)
Tensor add(const Tensor& x, double s, std::source_location where = std::source_location::current());
Tensor mul(const Tensor& x, double s, std::source_location where = std::source_location::current());
Tensor sub(double s, const Tensor& x, std::source_location where = std::source_location::current());  // s - x
Tensor div(double s, const Tensor& x, std::source_location where = std::source_location::current());  // s / x
Tensor neg(const Tensor& x, std::source_location where = std::source_location::current());
Tensor pow(const Tensor& x, double exponent, std::source_location where = std::source_location::current());

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& x, double s) { return add(x, s); }
inline Tensor operator+(double s, const Tensor& x) { return add(x, s); }
inline Tensor operator-(const Tensor& x, double s) { return add(x, -s); }
inline Tensor operator-(double s, const Tensor& x) { return sub(s, x); }
inline Tensor operator*(const Tensor& x, double s) { return mul(x, s); }
inline Tensor operator*(double s, const Tensor& x) { return mul(x, s); }
inline Tensor operator/(const Tensor& x, double s) { return mul(x, 1.0 / s); }
inline Tensor operator/(double s, const Tensor& x) { return div(s, x); }

// Sums a broadcast gradient back down to `shape` (the inverse of broadcasting). g: broadcast(shape, ..) -> shape
Tensor sum_to(const Tensor& g, const Shape& shape, std::source_location where = std::source_location::current());

}  // namespace cppgrad
