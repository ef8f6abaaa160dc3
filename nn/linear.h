#pragma once
#include <memory>

#include "core/generator.h"
#include "nn/lora.h"
#include "nn/module.h"

namespace cppgrad::nn {

struct LinearOptions {
  std::int64_t in = 0;
  std::int64_t out = 0;
  bool bias = true;
};

// y = x W^T + b, PyTorch's layout: weight [out, in], bias [out].
// Init: U(-1/sqrt(in), 1/sqrt(in)) for both, as nn.Linear.
class Linear : public Layer {
 public:
  Linear(const LinearOptions& options, Generator& gen);
  // Weight tying: the weight [out, in] is another module's parameter, used here (GPT's lm_head reads the token
  // embedding's table [V, C]). Bias-free; see Module::register_tied_parameter for how it is named and saved.
  Linear(const LinearOptions& options, const Tensor& tied_weight);
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;

  // x: [.., in] -> [.., out]
  Tensor forward(const Tensor& x) const override;
  // relu(forward(x)) as one op (linear_relu).
  Tensor forward_relu(const Tensor& x) const;

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias

  // Freezes this layer's weight and bias and adds a trainable low-rank change (nn/lora.h), registered as "lora":
  // forward(x) = x W^T + b + lora(x). Refused for a tied weight, or when the layer has one already.
  void add_lora(const LoRAOptions& options, Generator& gen, std::shared_ptr<Generator> dropout_gen = nullptr);
  const std::shared_ptr<LoRA>& lora() const { return lora_; }  // null without one

 private:
  void check_input(const Tensor& x) const;
  LinearOptions options_;
  Tensor weight_, bias_;
  std::shared_ptr<LoRA> lora_;
};

}  // namespace cppgrad::nn
