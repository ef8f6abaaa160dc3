#pragma once
#include <memory>

#include "nn/dropout.h"
#include "nn/linear.h"

namespace cppgrad::nn {

enum class Activation { Relu, Gelu };
Activation parse_activation(const std::string& name);  // "relu" | "gelu"

struct FeedForwardOptions {
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  Activation activation = Activation::Relu;
  double dropout = 0.0;  // after the activation, as PyTorch's transformer layers
};

// The position-wise feed-forward block: lin2(dropout(act(lin1(x)))). x: [.., d_model] -> [.., d_model]
class FeedForward : public Layer {
 public:
  FeedForward(const FeedForwardOptions& options, Generator& gen, std::shared_ptr<Generator> dropout_gen = nullptr);
  std::string type_name() const override { return "FeedForward"; }
  std::string extra_repr() const override;

  Tensor forward(const Tensor& x) const override;

 private:
  FeedForwardOptions options_;
  std::shared_ptr<Linear> lin1_, lin2_;
  std::shared_ptr<Dropout> dropout_;  // null when dropout == 0
};

}  // namespace cppgrad::nn
