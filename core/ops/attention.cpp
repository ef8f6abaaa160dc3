// Scaled dot-product attention as one op:
//   weights = softmax(q k^T / sqrt(dk), keys the mask blocks set to -inf)    [.., Lq, Lk]
//   output  = weights v                                                       [.., Lq, dv]
// The definition below is that formula in ops. float32 takes the fused kernel (core/kernels/attention_batch.h):
// head by head in L1, one graph node and one kept tensor (the weights) where the definition records six nodes and
// five intermediate tensors per call.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/attention_batch.h"
#include "core/kernels/layout.h"
#include "core/ops/attention.h"
#include "core/ops/compare.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"

namespace cppgrad {

namespace {

void check_attention_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
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
  if (mask.defined() && mask.dtype() != DType::Bool)
    throw std::invalid_argument(std::string("attention: mask must be bool (true = may attend), got ") +
                                dtype_name(mask.dtype()));
}

// The scores' shape [.., Lq, Lk]; the mask must broadcast to it (a mask larger than the scores is refused).
void check_attention_mask(const Tensor& q, const Tensor& k, const Tensor& mask) {
  if (!mask.defined()) return;
  Shape scores_shape(q.shape().begin(), q.shape().end() - 1);
  scores_shape.push_back(k.shape()[k.dim() - 2]);
  Shape combined;
  try {
    combined = broadcast_shapes(scores_shape, mask.shape(), "attention");
  } catch (const std::invalid_argument&) {
    combined.clear();
  }
  if (combined != scores_shape)
    throw std::invalid_argument("attention: mask " + shape_str(mask.shape()) +
                                " does not broadcast to the attention scores " + shape_str(scores_shape));
}

FusedAttention attention_definition(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape().back()));
  Tensor scores = mul(matmul(q, k.transpose(-2, -1)), scale);                   // [.., Lq, Lk]
  if (mask.defined())  // blocked (mask false): -inf, so the key's weight is exactly 0
    scores = masked_fill(scores, eq(mask, 0.0), -std::numeric_limits<double>::infinity());
  const Tensor weights = softmax(scores, -1);                                   // [.., Lq, Lk]
  return {matmul(weights, v), weights.detach()};                               // [.., Lq, dv]
}

}  // namespace

// dq = scale dS k;  dk = scale dS^T q;  dv = P^T g;  with dS = P * (g v^T - rowsum(P * g v^T)) (the fused backward)
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                               std::source_location where) {
  check_attention_inputs(q, k, v, mask);
  check_attention_mask(q, k, mask);
  if (!fast_path(q)) return attention_definition(q, k, v, mask);
  auto [out, weights] = kernels::attention_forward_batch(q, k, v, mask);
  if (records_nothing({&q, &k, &v})) return {out, weights};
  out = record_op(out, "attention", {q, k, v}, [=, p = weights](const Tensor& g) {
    if (grad_enabled())  // create_graph: the definition's own graph, so this gradient can be differentiated again
      return differentiate_definition([mask](const TensorList& in) {
        return attention_definition(in[0], in[1], in[2], mask).output;
      }, {q, k, v}, g);
    const auto [dq, dk, dv] = kernels::attention_backward_batch(g, q, k, v, mask, p);
    return TensorList{q.requires_grad() ? dq : Tensor(), k.requires_grad() ? dk : Tensor(),
                      v.requires_grad() ? dv : Tensor()};
  }, where);
  return {out, weights};
}

// d(qkv) = the three gradients above, side by side in one tensor laid out like qkv
FusedAttention fused_attention_stacked(const Tensor& qkv, const Tensor& mask, std::source_location where) {
  if (qkv.dim() < 3 || qkv.shape()[0] != 3)
    throw std::invalid_argument("attention: stacked q, k and v must be [3, .., L, d], got " + shape_str(qkv.shape()));
  const Tensor heads = qkv.detach();
  const Tensor q = heads.select(0, 0), k = heads.select(0, 1), v = heads.select(0, 2);
  check_attention_inputs(q, k, v, mask);
  check_attention_mask(q, k, mask);
  if (!fast_path(qkv)) return fused_attention(qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2), mask, where);
  auto [out, weights] = kernels::attention_forward_batch(q, k, v, mask);
  out = record_op(out, "attention", {qkv}, [=, p = weights](const Tensor& g) {
    if (grad_enabled())  // create_graph: the definition's own graph, so this gradient can be differentiated again
      return differentiate_definition([mask](const TensorList& in) {
        return attention_definition(in[0].select(0, 0), in[0].select(0, 1), in[0].select(0, 2), mask).output;
      }, {qkv}, g);
    const Tensor d = empty_like_layout_of(qkv.shape(), qkv);
    kernels::attention_backward_batch_into(g, q, k, v, mask, p, d.select(0, 0), d.select(0, 1), d.select(0, 2));
    return TensorList{d};
  }, where);
  return {out, weights};
}

}  // namespace cppgrad
