#pragma once
// Unary math, elementwise (core/ops/unary.cpp): x: (..) -> (..). Part of core/ops.h. A new elementwise function
// (an activation, say) is declared here and defined in unary.cpp: docs/add-an-op.md walks through one.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

Tensor exp(const Tensor& x, std::source_location where = std::source_location::current());
Tensor log(const Tensor& x, std::source_location where = std::source_location::current());
Tensor sqrt(const Tensor& x, std::source_location where = std::source_location::current());
Tensor tanh(const Tensor& x, std::source_location where = std::source_location::current());
Tensor sigmoid(const Tensor& x, std::source_location where = std::source_location::current());
Tensor relu(const Tensor& x, std::source_location where = std::source_location::current());
Tensor gelu(const Tensor& x, std::source_location where = std::source_location::current());  // exact: x * Phi(x), as PyTorch's default
// tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), PyTorch's gelu(approximate='tanh'), GPT-2's
Tensor gelu_tanh(const Tensor& x, std::source_location where = std::source_location::current());
Tensor erf(const Tensor& x, std::source_location where = std::source_location::current());

}  // namespace cppgrad
