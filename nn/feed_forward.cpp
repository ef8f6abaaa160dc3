#include "nn/feed_forward.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/unary.h"

namespace cppgrad::nn {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  throw std::invalid_argument("activation must be 'relu' or 'gelu', got '" + name + "'");
}

FeedForward::FeedForward(const FeedForwardOptions& options, Generator& gen, std::shared_ptr<Generator> dropout_gen)
    : options_(options) {
  lin1_ = register_module("lin1", std::make_shared<Linear>(LinearOptions{.in = options.d_model, .out = options.d_ff}, gen));
  lin2_ = register_module("lin2", std::make_shared<Linear>(LinearOptions{.in = options.d_ff, .out = options.d_model}, gen));
  if (options.dropout > 0) {
    if (!dropout_gen) throw std::invalid_argument("FeedForward: dropout > 0 needs a dropout generator");
    dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, dropout_gen));
  }
}

std::string FeedForward::extra_repr() const {
  return fmt::format("d_model={}, d_ff={}, {}", options_.d_model, options_.d_ff,
                     options_.activation == Activation::Relu ? "relu" : "gelu");
}

Tensor FeedForward::forward(const Tensor& x) const {
  // [.., d_ff]; relu is fused into the first layer
  Tensor h = options_.activation == Activation::Relu ? lin1_->forward_relu(x) : gelu(lin1_->forward(x));
  if (dropout_) h = dropout_->forward(h);
  return lin2_->forward(h);  // [.., d_model]
}

}  // namespace cppgrad::nn
