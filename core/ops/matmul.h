#pragma once
// Matrix products (core/ops/matmul.cpp). Part of core/ops.h.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// 1-D/2-D and batched: a: (..Ba, M, K)  b: (..Bb, K, N) -> (broadcast(..Ba, ..Bb), M, N).
// A 1-D a is a row (1, K) and a 1-D b a column (K, 1); that dim is dropped from the result, as in PyTorch.
// Inputs may be non-contiguous views (a transposed operand is not copied when its rows are contiguous).
Tensor matmul(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// y = x W^T + b as one op (PyTorch's F.linear). x: [.., in]  weight: [out, in]  bias: [out] or undefined -> [.., out].
// Equal to add(matmul(x, weight.t()), bias), which records five graph nodes where this records one.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::source_location where = std::source_location::current());
// relu(linear(x, weight, bias)) as one op: a feed-forward block's first layer without a separate relu pass and node.
Tensor linear_relu(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::source_location where = std::source_location::current());
// A frozen Linear with its LoRA (nn/lora.h) as one op: x W^T + b + scaling (adapter_x A^T) B^T, where adapter_x is x
// or the adapter's own view of it (its dropout). x, adapter_x: [.., in]  weight: [out, in]  bias: [out] or undefined
// A: [r, in]  B: [out, r] -> [.., out] (core/ops/linear_lora.cpp). Equal to linear(x, weight, bias) +
// linear(linear(adapter_x, A), B) * scaling, whose four nodes keep three [.., out] tensors for backward where this
// keeps one [.., r].
Tensor linear_lora(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& adapter_x, const Tensor& A,
                   const Tensor& B, double scaling, std::source_location where = std::source_location::current());

}  // namespace cppgrad
