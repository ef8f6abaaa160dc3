#pragma once
#include "optim/optimizer.h"

namespace cppgrad::optim {

struct SGDOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;  // L2: added to the gradient, as PyTorch's SGD
  bool nesterov = false;
};

// Stochastic gradient descent, PyTorch's exact update:
//   g = grad + weight_decay * p
//   buf = g on the first step, else momentum * buf + (1 - dampening) * g
//   g = g + momentum * buf (Nesterov) or buf (classic momentum)
//   p = p - lr * g
class SGD : public Optimizer {
 public:
  SGD(nn::NamedTensors params, const SGDOptions& options);
  void step() override;

 private:
  SGDOptions options_;
};

}  // namespace cppgrad::optim
