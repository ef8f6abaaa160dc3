#pragma once
#include "nn/module.h"

namespace cppgrad::nn {

// Normalises the last dim to zero mean and unit variance, then scales and shifts: weight [dim] (ones),
// bias [dim] (zeros), as nn.LayerNorm.
class LayerNorm : public Layer {
 public:
  explicit LayerNorm(std::int64_t dim, double eps = 1e-5);
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;

  Tensor forward(const Tensor& x) const override;  // x: [.., dim] -> [.., dim]

 private:
  std::int64_t dim_;
  double eps_;
  Tensor weight_, bias_;
};

}  // namespace cppgrad::nn
