#pragma once
#include <memory>

#include "nn/attention_module.h"
#include "nn/linear.h"

namespace cppgrad::nn {

struct AdditiveAttentionOptions {
  std::int64_t d_query = 0;
  std::int64_t d_key = 0;
  std::int64_t d_hidden = 0;
};

// Bahdanau (additive) attention: a small feed-forward network scores each (query, key) pair,
//   score[q, s] = v^T tanh(W1 query_q + W2 key_s)
// with bias-free W1: [d_hidden, d_query], W2: [d_hidden, d_key], v: [1, d_hidden]. No scaling.
class AdditiveAttention : public AttentionModule {
 public:
  AdditiveAttention(const AdditiveAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "AdditiveAttention"; }
  std::string extra_repr() const override;

  // query: [B, Lq, d_query]  key: [B, S, d_key]  value: [B, S, dv] -> output [B, Lq, dv], weights [B, Lq, S]
  AttentionResult attend(const Tensor& query, const Tensor& key, const Tensor& value,
                         const Tensor& mask = Tensor()) const override;

 private:
  AdditiveAttentionOptions options_;
  std::shared_ptr<Linear> W1_, W2_, v_;
};

}  // namespace cppgrad::nn
