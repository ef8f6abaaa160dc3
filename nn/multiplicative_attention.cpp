#include "nn/multiplicative_attention.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/attention.h"
#include "core/ops/matmul.h"
#include "core/ops/softmax.h"

namespace cppgrad::nn {

MultiplicativeAttention::MultiplicativeAttention(const MultiplicativeAttentionOptions& options, Generator& gen)
    : options_(options) {
  W_ = register_module("W", std::make_shared<Linear>(LinearOptions{options.d_key, options.d_query, false}, gen));
}

std::string MultiplicativeAttention::extra_repr() const {
  return fmt::format("d_query={}, d_key={}", options_.d_query, options_.d_key);
}

AttentionResult MultiplicativeAttention::attend(const Tensor& query, const Tensor& key, const Tensor& value,
                                                const Tensor& mask) const {
  if (query.dim() != 3 || key.dim() != 3 || value.dim() != 3 || key.shape()[1] != value.shape()[1])
    throw std::invalid_argument("MultiplicativeAttention: expected query [B, Lq, dq], key [B, S, dk], value [B, S, dv], "
                                "got " + shape_str(query.shape()) + ", " + shape_str(key.shape()) + ", " +
                                shape_str(value.shape()));
  Tensor wk = W_->forward(key);                                  // [B, S, dq]
  Tensor scores = matmul(query, wk.transpose(-2, -1));           // [B, Lq, S]
  scores = apply_attention_mask(scores, without_head_dim(mask), "MultiplicativeAttention");
  Tensor weights = softmax(scores, -1);                          // [B, Lq, S]
  return {matmul(weights, value), weights};     // [B, Lq, dv]
}

}  // namespace cppgrad::nn
