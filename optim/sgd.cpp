#include "optim/sgd.h"

#include <stdexcept>

namespace cppgrad::optim {

SGD::SGD(nn::NamedTensors params, const SGDOptions& options) : Optimizer(std::move(params)), options_(options) {
  lr_ = options.lr;
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw std::invalid_argument("SGD: Nesterov momentum needs momentum > 0 and dampening = 0");
}

void SGD::step() {
  ++steps_;
  for (auto& named : params_) {
    const std::string& name = named.first;  // not a structured binding: Clang's OpenMP cannot capture those
    const Tensor& p = named.second;
    const Tensor grad = p.grad();
    if (!grad.defined()) continue;
    const bool first = !has_slot(name, "momentum_buffer");
    Tensor buf = options_.momentum != 0 ? slot(name, "momentum_buffer", p) : Tensor();
    Tensor g = grad.contiguous();
    dispatch_floating(p.dtype(), "SGD", [&](auto tag) {
      using T = decltype(tag);
      T* w = p.mutable_data<T>();
      const T* gr = g.data<T>();
      T* b = buf.defined() ? buf.mutable_data<T>() : nullptr;
      const T lr = static_cast<T>(lr_), wd = static_cast<T>(options_.weight_decay);
      const T mom = static_cast<T>(options_.momentum), damp = static_cast<T>(1 - options_.dampening);
      for (std::int64_t i = 0; i < p.numel(); ++i) {
        T d = gr[i] + wd * w[i];
        if (b) {
          b[i] = first ? d : mom * b[i] + damp * d;
          d = options_.nesterov ? d + mom * b[i] : b[i];
        }
        w[i] -= lr * d;
      }
    });
  }
}

}  // namespace cppgrad::optim
