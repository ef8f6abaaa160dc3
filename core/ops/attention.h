#pragma once
// Scaled dot-product attention as one op (core/ops/attention.cpp). Part of core/ops.h.
#include <source_location>

#include "core/tensor.h"

namespace cppgrad {

// weights = softmax(q k^T / sqrt(dk), blocked keys -inf), output = weights v.
// q: [.., Lq, dk]  k: [.., Lk, dk]  v: [.., Lk, dv] with equal leading dims; mask: bool (true = may attend),
// broadcast to [.., Lq, Lk], or undefined. -> output [.., Lq, dv], weights [.., Lq, Lk].
// Gradients flow through the output only: the weights are returned to be read (attention maps), as PyTorch's
// fused kernels do not return them at all. They are the buffer backward reads: do not modify them in place before
// backward. A row whose keys are all blocked gets zero weights and a zero output.
struct FusedAttention {
  Tensor output;
  Tensor weights;
};
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(), std::source_location where = std::source_location::current());

}  // namespace cppgrad
