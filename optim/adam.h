#pragma once
#include "optim/optimizer.h"

namespace cppgrad::optim {

// Which parameters weight decay shrinks: every one (PyTorch's default for one parameter group), or only the
// matrices, tensors of two or more dimensions (linear weights and embeddings), not biases or LayerNorm's gains and
// shifts: nanoGPT's configure_optimizers, its two groups.
enum class DecayOn { every_parameter, matrices };

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = false;  // true: AdamW
  DecayOn decay_on = DecayOn::every_parameter;
};

// Adam (Kingma & Ba) with PyTorch's exact arithmetic; AdamW when decoupled_weight_decay.
//   AdamW: p = p * (1 - lr * weight_decay)          decay the weight itself, outside the moments
//   Adam:  g = grad + weight_decay * p              L2 through the gradient
//   m = beta1 * m + (1 - beta1) * g                 first moment: a running mean of gradients
//   v = beta2 * v + (1 - beta2) * g^2               second moment: a running mean of squared gradients
//   m_hat = m / (1 - beta1^t),  v_hat = v / (1 - beta2^t)   bias correction (the moments start at zero)
//   p = p - lr * m_hat / (sqrt(v_hat) + eps)        eps added after the square root, as PyTorch
class Adam : public Optimizer {
 public:
  Adam(nn::NamedTensors params, const AdamOptions& options);
  void step() override;

 private:
  AdamOptions options_;
};

}  // namespace cppgrad::optim
