#pragma once
// Parameter initialisers, PyTorch's defaults, drawing from an explicit Generator.
#include <cmath>

#include "core/generator.h"
#include "core/tensor.h"

namespace cppgrad::nn::init {

// U(low, high) of the given shape.
inline Tensor uniform(const Shape& shape, double low, double high, Generator& gen, DType dtype = DType::Float32) {
  Tensor t = Tensor::empty(shape, dtype);
  dispatch_floating(dtype, "init::uniform", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(low + (high - low) * gen.uniform());
  });
  return t;
}

// N(0, 1) of the given shape (nn.Embedding's default).
inline Tensor normal(const Shape& shape, Generator& gen, DType dtype = DType::Float32) {
  return Tensor::randn(shape, gen, dtype);
}

// nn.Linear's default for weight [out, in] and bias [out]: U(-1/sqrt(in), 1/sqrt(in)).
inline double linear_bound(std::int64_t fan_in) { return fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0; }

}  // namespace cppgrad::nn::init
