#pragma once
#include <memory>

#include "core/generator.h"
#include "nn/module.h"

namespace cppgrad::nn {

// Zeroes elements with probability p in training mode (scaling the rest by 1/(1-p)); identity in eval mode.
// The generator is shared with the model that owns this module, so one seed fixes every mask.
class Dropout : public Layer {
 public:
  Dropout(double p, std::shared_ptr<Generator> gen);
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override;

  Tensor forward(const Tensor& x) const override;
  double p() const { return p_; }

 private:
  double p_;
  std::shared_ptr<Generator> gen_;
};

// Whether a forward of `model` in training mode draws masks: some Dropout in its tree has p > 0 (a GPT's own, or a
// LoRA's added to it, nn/lora.h).
bool draws_dropout_masks(const Module& model);

}  // namespace cppgrad::nn
