#pragma once
// Scaled dot-product attention: its composition in ops, and the same as one fused op (core/ops/attention.cpp).
// Part of core/ops.h.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// Attention written once in ops: the composition every attention runs, and the definition fused_attention's kernel
// is held equal to. Masks are bool with true = "may attend", broadcast to the scores [.., Lq, Lk].

// The one masking: where(mask, scores, -inf), so a blocked key's weight after softmax is exactly 0.
// scores: [.., Lq, Lk]  mask: bool, broadcast to the scores without widening them, or undefined (scores returned).
// `op` names the caller in errors (nn's modules pass their own name).
Tensor apply_attention_mask(const Tensor& scores, const Tensor& mask, const char* op);

// weights = softmax(q k^T / sqrt(dk), blocked keys -inf), differentiable (the weights dropout is applied to).
// q: [.., Lq, dk]  k: [.., Lk, dk] (leading dims broadcast, as matmul's)  mask: as above -> [.., Lq, Lk].
// A row whose keys are all blocked gets zero weights.
Tensor attention_weights(const Tensor& q, const Tensor& k, const Tensor& mask = Tensor(), const char* op = "attention");

// The same as one op, with the output: weights = attention_weights(q, k, mask), output = weights v.
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

// The same with q, k and v stacked along a first dim of 3, as the heads of one fused projection come (GPT-2's c_attn:
// [B, T, 3C] viewed as [B, T, 3, H, dh] and permuted): qkv [3, .., L, d] -> fused_attention(qkv[0], qkv[1], qkv[2],
// mask). Its gradient is one tensor laid out like qkv, written in place by the heads' backward, where three selects
// would each scatter into a tensor of zeros and the three be added.
FusedAttention fused_attention_stacked(const Tensor& qkv, const Tensor& mask = Tensor(), std::source_location where = std::source_location::current());

}  // namespace cppgrad
