#include "nn/additive_attention.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"

namespace cppgrad::nn {

AdditiveAttention::AdditiveAttention(const AdditiveAttentionOptions& options, Generator& gen) : options_(options) {
  W1_ = register_module("W1", std::make_shared<Linear>(LinearOptions{options.d_query, options.d_hidden, false}, gen));
  W2_ = register_module("W2", std::make_shared<Linear>(LinearOptions{options.d_key, options.d_hidden, false}, gen));
  v_ = register_module("v", std::make_shared<Linear>(LinearOptions{options.d_hidden, 1, false}, gen));
}

std::string AdditiveAttention::extra_repr() const {
  return fmt::format("d_query={}, d_key={}, d_hidden={}", options_.d_query, options_.d_key, options_.d_hidden);
}

AttentionResult AdditiveAttention::attend(const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& mask) const {
  if (query.dim() != 3 || key.dim() != 3 || value.dim() != 3 || key.shape()[1] != value.shape()[1])
    throw std::invalid_argument("AdditiveAttention: expected query [B, Lq, dq], key [B, S, dk], value [B, S, dv], got " +
                                shape_str(query.shape()) + ", " + shape_str(key.shape()) + ", " + shape_str(value.shape()));
  Tensor q = W1_->forward(query).unsqueeze(2);            // [B, Lq, 1, dh]
  Tensor k = W2_->forward(key).unsqueeze(1);              // [B, 1, S, dh]
  Tensor scores = v_->forward(tanh(add(q, k))).squeeze(-1);  // [B, Lq, S]
  scores = apply_attention_mask(scores, without_head_dim(mask), "AdditiveAttention");
  Tensor weights = softmax(scores, -1);                    // [B, Lq, S]
  return {matmul(weights, value), weights};  // [B, Lq, dv]
}

}  // namespace cppgrad::nn
