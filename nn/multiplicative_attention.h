#pragma once
#include <memory>

#include "nn/attention_module.h"
#include "nn/linear.h"

namespace cppgrad::nn {

struct MultiplicativeAttentionOptions {
  std::int64_t d_query = 0;
  std::int64_t d_key = 0;
};

// Luong's "general" (multiplicative) attention: score[q, s] = query_q^T W key_s, with W = Linear(d_key -> d_query,
// bias-free), weight [d_query, d_key]. No scaling.
class MultiplicativeAttention : public AttentionModule {
 public:
  MultiplicativeAttention(const MultiplicativeAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "MultiplicativeAttention"; }
  std::string extra_repr() const override;

  // query: [B, Lq, d_query]  key: [B, S, d_key]  value: [B, S, dv] -> output [B, Lq, dv], weights [B, Lq, S]
  AttentionResult attend(const Tensor& query, const Tensor& key, const Tensor& value,
                         const Tensor& mask = Tensor()) const override;

 private:
  MultiplicativeAttentionOptions options_;
  std::shared_ptr<Linear> W_;
};

}  // namespace cppgrad::nn
