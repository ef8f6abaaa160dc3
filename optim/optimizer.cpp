#include "optim/optimizer.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace cppgrad::optim {

Optimizer::Optimizer(nn::NamedTensors params) : params_(std::move(params)) {
  for (const auto& [name, p] : params_)
    if (!p.requires_grad()) throw std::invalid_argument("optimizer: parameter '" + name + "' does not require grad");
}

void Optimizer::zero_grad() {
  for (auto& [_, p] : params_) p.zero_grad();
}

const std::string& Optimizer::key(const std::string& param_name, const char* slot) {
  key_.assign(param_name);
  key_ += '.';
  key_ += slot;
  return key_;
}

Tensor& Optimizer::slot(const std::string& param_name, const char* slot, const Tensor& like) {
  const std::string& k = key(param_name, slot);
  if (auto it = state_.find(k); it != state_.end()) return it->second;
  return state_.emplace(k, Tensor::zeros(like.shape(), like.dtype())).first->second;
}

bool Optimizer::has_slot(const std::string& param_name, const char* slot) {
  return state_.count(key(param_name, slot)) != 0;
}

nn::StateDict Optimizer::state_dict() const {
  nn::StateDict out = state_;
  out["step"] = Tensor::scalar(static_cast<double>(steps_), DType::Int64);
  out["lr"] = Tensor::scalar(lr_, DType::Float64);
  return out;
}

void Optimizer::load_state_dict(const nn::StateDict& state) {
  load(state, [](const Tensor& t) { return t.clone(); });
}

void Optimizer::assign_state_dict(const nn::StateDict& state) {
  std::set<const Storage*> taken;  // two state tensors never share memory: each is updated in place
  load(state, [&](const Tensor& t) {
    const Tensor held = t.detach().contiguous();
    return taken.insert(held.impl().storage.get()).second ? held : held.clone();
  });
}

void Optimizer::load(const nn::StateDict& state, const std::function<Tensor(const Tensor&)>& take) {
  for (const char* key : {"step", "lr"})
    if (!state.count(key)) throw std::invalid_argument(std::string("optimizer load_state_dict: missing entry '") + key + "'");
  // The scalars first: a count of steps (Adam's bias correction divides by 1 - beta^step) and a finite rate.
  const Tensor& step = state.at("step");
  const Tensor& lr = state.at("lr");
  if (step.numel() != 1 || step.dtype() != DType::Int64)
    throw std::invalid_argument("optimizer load_state_dict: 'step' must be one int64, got " + shape_str(step.shape()) +
                                " " + dtype_name(step.dtype()));
  const auto steps = step.to_vector<std::int64_t>()[0];
  if (steps < 0 || steps > kMaxSteps)
    throw std::invalid_argument("optimizer load_state_dict: 'step' must be in 0.." + std::to_string(kMaxSteps) +
                                ", got " + std::to_string(steps));
  if (lr.numel() != 1 || !is_floating(lr.dtype()) || !(lr.item() >= 0) || !std::isfinite(lr.item()))
    throw std::invalid_argument("optimizer load_state_dict: 'lr' must be one finite number >= 0");
  std::map<std::string, Tensor> loaded;
  for (const auto& [name, t] : state) {
    if (name == "step" || name == "lr") continue;
    const auto dot = name.rfind('.');
    const std::string param = dot == std::string::npos ? "" : name.substr(0, dot);
    const Tensor* p = nullptr;
    for (const auto& [n, q] : params_)
      if (n == param) p = &q;
    if (!p) throw std::invalid_argument("optimizer load_state_dict: entry '" + name + "' names no parameter");
    if (t.shape() != p->shape())
      throw std::invalid_argument("optimizer load_state_dict: entry '" + name + "' has shape " + shape_str(t.shape()) +
                                  " but parameter '" + param + "' has shape " + shape_str(p->shape()));
    if (!t.all_finite())
      throw std::invalid_argument("optimizer load_state_dict: entry '" + name + "' holds NaN or Inf");
    loaded[name] = take(t.to(p->dtype()));
  }
  state_ = std::move(loaded);
  steps_ = steps;
  lr_ = lr.item();
}

}  // namespace cppgrad::optim
