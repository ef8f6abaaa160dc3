#include "nn/mlp.h"

#include "core/ops/unary.h"

namespace cppgrad::nn {

MLP::MLP(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  const std::int64_t C = config.n_embd;
  c_fc_ = register_module("c_fc", std::make_shared<Linear>(LinearOptions{.in = C, .out = 4 * C}, gen));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(LinearOptions{.in = 4 * C, .out = C}, gen));
  if (config.dropout > 0) dropout_ = register_module("dropout", std::make_shared<Dropout>(config.dropout, dropout_gen));
}

// gelu_tanh is one op (core/ops/unary.cpp) rather than its formula in five ops here: the [B, T, 4C] activation is
// the model's largest, and one pass over it, one graph node, beats six of each.
Tensor MLP::forward(const Tensor& x) const {
  Tensor h = gelu_tanh(c_fc_->forward(x));  // [B, T, 4C]
  Tensor y = c_proj_->forward(h);           // [B, T, C]
  return remember_output(dropout_ ? dropout_->forward(y) : y);
}

}  // namespace cppgrad::nn
