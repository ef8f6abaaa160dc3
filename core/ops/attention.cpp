// Scaled dot-product attention, written once:
//   weights = softmax(q k^T / sqrt(dk), keys the mask blocks set to -inf)    [.., Lq, Lk]   attention_weights
//   output  = weights v                                                       [.., Lq, dv]
// attention_weights is the readable composition every attention in the library runs (nn's
// scaled_dot_product_attention, GPTAttention with dropout), and with `@ v` it is the definition of the fused op,
// fused_attention: float32 takes its kernel (core/kernels/attention_batch.h), head by head in L1, one graph node and
// one kept tensor (the weights) where the definition records six nodes and five intermediate tensors per call.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/attention_batch.h"
#include "core/kernels/layout.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"

namespace cppgrad {

namespace {

void check_attention_inputs(const Tensor& q, const Tensor& k, const Tensor& v) {
  auto shapes = [&] {
    return "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " + shape_str(v.shape());
  };
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim())
    throw std::invalid_argument("attention: q, k and v need the same rank, at least 2, got " + shapes());
  if (q.dim() - 2 > static_cast<std::int64_t>(kernels::kMaxAttentionLeadingDims))
    throw std::invalid_argument("attention: at most 8 leading (batch, head) dims, got " + shapes());
  if (!std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()) ||
      !std::equal(q.shape().begin(), q.shape().end() - 2, v.shape().begin()))
    throw std::invalid_argument("attention: q, k and v need the same leading (batch, head) dims, got " + shapes());
  if (q.shape().back() != k.shape().back())
    throw std::invalid_argument("attention: q and k must share d_k, got " + shapes());
  if (k.shape()[k.dim() - 2] != v.shape()[v.dim() - 2])
    throw std::invalid_argument("attention: k and v must have the same length Lk, got " + shapes());
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || !is_floating(q.dtype()))
    throw std::invalid_argument(std::string("attention: q, k and v must share a floating dtype, got ") +
                                dtype_name(q.dtype()) + ", " + dtype_name(k.dtype()) + ", " + dtype_name(v.dtype()));
}

// The scores' shape [.., Lq, Lk], known before they are computed.
Shape scores_shape(const Tensor& q, const Tensor& k) {
  Shape shape(q.shape().begin(), q.shape().end() - 1);
  shape.push_back(k.shape()[k.dim() - 2]);
  return shape;
}

// A mask is bool and broadcasts to the scores [.., Lq, Lk] without widening them. `op` names the caller.
void check_attention_mask(const Shape& scores, const Tensor& mask, const char* op) {
  if (!mask.defined()) return;
  if (mask.dtype() != DType::Bool)
    throw std::invalid_argument(std::string(op) + ": mask must be bool (true = may attend), got " +
                                dtype_name(mask.dtype()));
  Shape combined;
  try {
    combined = broadcast_shapes(scores, mask.shape(), op);
  } catch (const std::invalid_argument&) {
    combined.clear();
  }
  if (combined != scores)
    throw std::invalid_argument(std::string(op) + ": mask " + shape_str(mask.shape()) +
                                " does not broadcast to the attention scores " + shape_str(scores));
}

// The fused op's definition: the weights, then their average of the values. The weights come back detached, as the
// kernel's do: to be read, not differentiated.
FusedAttention attention_definition(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const Tensor weights = attention_weights(q, k, mask);  // [.., Lq, Lk]
  return {matmul(weights, v), weights.detach()};         // [.., Lq, dv]
}

}  // namespace

// blocked (mask false): -inf, so the key's weight after softmax is exactly e^-inf = 0
Tensor apply_attention_mask(const Tensor& scores, const Tensor& mask, const char* op) {
  if (!mask.defined()) return scores;
  check_attention_mask(scores.shape(), mask, op);
  return where(mask, scores, Tensor::full({}, -std::numeric_limits<double>::infinity(), scores.dtype()));
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const Tensor& mask, const char* op) {
  if (q.dim() < 2 || k.dim() < 2 || q.shape().back() != k.shape().back())
    throw std::invalid_argument(std::string(op) + ": q [.., Lq, dk] and k [.., Lk, dk] must share d_k, got q " +
                                shape_str(q.shape()) + ", k " + shape_str(k.shape()));
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape().back()));
  const Tensor scores = mul(matmul(q, k.transpose(-2, -1)), scale);  // [.., Lq, Lk]
  return softmax(apply_attention_mask(scores, mask, op), -1);        // [.., Lq, Lk]
}

// dq = scale dS k;  dk = scale dS^T q;  dv = P^T g;  with dS = P * (g v^T - rowsum(P * g v^T)) (the fused backward).
// P [.., Lq, Lk] is not kept from forward but computed again, head by head, in backward (the same kernel, the same
// bits): kept, it was a [T, T] matrix per head and layer, the GPT's largest activation at a context of 256 (GPT-2
// 124M at 8 x 256: 0.3 GB of a LoRA step's 2.9 GB). Computing it again costs about 2% of that step.
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                               std::source_location where) {
  check_attention_inputs(q, k, v);
  check_attention_mask(scores_shape(q, k), mask, "attention");
  if (!fast_path(q)) return attention_definition(q, k, v, mask);
  auto [out, weights] = kernels::attention_forward_batch(q, k, v, mask);
  out = record_fused(out, "attention", {q, k, v},
                     [mask](const TensorList& in) { return attention_definition(in[0], in[1], in[2], mask).output; },
                     [=](const Tensor& g) {  // P recomputed head by head: the rule keeps q, k and v alone
                       const auto [dq, dk, dv] = kernels::attention_backward_batch(g, q, k, v, mask, Tensor());
                       return TensorList{q.requires_grad() ? dq : Tensor(), k.requires_grad() ? dk : Tensor(),
                                         v.requires_grad() ? dv : Tensor()};
                     },
                     where);
  return {out, weights};
}

// d(qkv) = the three gradients above, side by side in one tensor laid out like qkv
FusedAttention fused_attention_stacked(const Tensor& qkv, const Tensor& mask, std::source_location where) {
  if (qkv.dim() < 3 || qkv.shape()[0] != 3)
    throw std::invalid_argument("attention: stacked q, k and v must be [3, .., L, d], got " + shape_str(qkv.shape()));
  const Tensor heads = qkv.detach();
  const Tensor q = heads.select(0, 0), k = heads.select(0, 1), v = heads.select(0, 2);
  check_attention_inputs(q, k, v);
  check_attention_mask(scores_shape(q, k), mask, "attention");
  if (!fast_path(qkv)) return fused_attention(qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2), mask, where);
  auto [out, weights] = kernels::attention_forward_batch(q, k, v, mask);
  out = record_fused(out, "attention", {qkv},
                     [mask](const TensorList& in) {
                       return attention_definition(in[0].select(0, 0), in[0].select(0, 1), in[0].select(0, 2), mask)
                           .output;
                     },
                     [=](const Tensor& g) {  // P recomputed head by head, as above
                       const Tensor d = empty_like_layout_of(qkv.shape(), qkv);
                       kernels::attention_backward_batch_into(g, q, k, v, mask, Tensor(), d.select(0, 0),
                                                              d.select(0, 1), d.select(0, 2));
                       return TensorList{d};
                     },
                     where);
  return {out, weights};
}

}  // namespace cppgrad
