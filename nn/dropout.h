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

 private:
  double p_;
  std::shared_ptr<Generator> gen_;
};

}  // namespace cppgrad::nn
