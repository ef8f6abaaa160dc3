#include "optim/adam.h"

#include <cmath>

namespace cppgrad::optim {

Adam::Adam(nn::NamedTensors params, const AdamOptions& options) : Optimizer(std::move(params)), options_(options) {
  lr_ = options.lr;
}

void Adam::step() {
  ++steps_;
  const double t = static_cast<double>(steps_);
  const double bias_correction1 = 1 - std::pow(options_.beta1, t);
  const double bias_correction2 = 1 - std::pow(options_.beta2, t);
  // PyTorch folds the corrections into the step: p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
  const double step_size = lr_ / bias_correction1;
  const double sqrt_bc2 = std::sqrt(bias_correction2);
  for (auto& named : params_) {
    // A reference, not a structured binding: OpenMP (the simd loop below) cannot capture those in Clang.
    const std::string& name = named.first;
    const Tensor& p = named.second;
    const Tensor grad = p.grad();
    if (!grad.defined()) continue;
    Tensor& m = slot(name, "exp_avg", p);
    Tensor& v = slot(name, "exp_avg_sq", p);
    Tensor g = grad.contiguous();
    const bool decays = options_.decay_on == DecayOn::every_parameter || p.dim() >= 2;
    const double weight_decay = decays ? options_.weight_decay : 0.0;
    dispatch_floating(p.dtype(), "Adam", [&](auto tag) {
      using T = decltype(tag);
      // Four distinct buffers: __restrict lets the compiler vectorise the loop (sqrt and divide included).
      T* __restrict w = p.mutable_data<T>();
      T* __restrict pm = m.mutable_data<T>();
      T* __restrict pv = v.mutable_data<T>();
      const T* __restrict gr = g.data<T>();
      const T b1 = static_cast<T>(options_.beta1), b2 = static_cast<T>(options_.beta2);
      const T eps = static_cast<T>(options_.eps), ss = static_cast<T>(step_size), sb2 = static_cast<T>(sqrt_bc2);
      // Decoupled (AdamW): w shrinks by lr * wd and the gradient is left alone; coupled (Adam): wd * w is
      // added to the gradient. One of the two factors is neutral, so one loop serves both.
      const T decay = static_cast<T>(options_.decoupled_weight_decay ? 1 - lr_ * weight_decay : 1);
      const T wd = static_cast<T>(options_.decoupled_weight_decay ? 0 : weight_decay);
      const std::int64_t n = p.numel();
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) {
        const T wi = w[i] * decay;
        const T d = gr[i] + wd * wi;
        pm[i] = b1 * pm[i] + (1 - b1) * d;  // PyTorch: exp_avg.lerp_(grad, 1 - beta1)
        pv[i] = b2 * pv[i] + (1 - b2) * d * d;
        w[i] = wi - ss * pm[i] / (std::sqrt(pv[i]) / sb2 + eps);
      }
    });
  }
}

}  // namespace cppgrad::optim
