#pragma once
// The optimizer base: parameters by name (so state can be saved and matched by name), the learning rate,
// zero_grad, and per-parameter state tensors for checkpoints.
#include <functional>
#include <map>
#include <string>

#include "nn/module.h"

namespace cppgrad::optim {

// The most steps a loaded optimizer state may claim: counts up to 2^53 convert to double exactly (Adam's bias
// correction raises beta to the step).
inline constexpr std::int64_t kMaxSteps = std::int64_t{1} << 53;

class Optimizer {
 public:
  explicit Optimizer(nn::NamedTensors params);
  virtual ~Optimizer() = default;

  // One update of every parameter that has a gradient (parameters without one are left alone, as PyTorch).
  virtual void step() = 0;
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  std::int64_t steps() const { return steps_; }

  // Optimizer state as named tensors ("<param>.exp_avg", "step", ...), for checkpoints; load refuses entries
  // that are missing or mis-shaped, naming them.
  virtual nn::StateDict state_dict() const;
  virtual void load_state_dict(const nn::StateDict& state);
  // load_state_dict without the copy, as nn::Module::assign_state_dict: each state tensor is the entry's memory
  // (converted first if its dtype differs; an entry sharing another's memory is copied). For a state read from a
  // file and given up: a resumed GPT-2 holds AdamW's 1 GB of moments once.
  void assign_state_dict(const nn::StateDict& state);

 protected:
  // A state tensor (zeros, shaped like the parameter) kept per parameter under `slot`.
  Tensor& slot(const std::string& param_name, const char* slot, const Tensor& like);
  bool has_slot(const std::string& param_name, const char* slot);

  // load_state_dict and assign_state_dict: `take` makes the kept tensor of a checked entry, converted to its
  // parameter's dtype.
  void load(const nn::StateDict& state, const std::function<Tensor(const Tensor&)>& take);

  nn::NamedTensors params_;
  double lr_ = 1e-3;
  std::int64_t steps_ = 0;
  std::map<std::string, Tensor> state_;  // "<param>.<slot>" -> tensor

 private:
  // "<param>.<slot>", built in a buffer kept from call to call: a step looks up every slot of every parameter,
  // and a fresh string per lookup was a heap allocation each.
  const std::string& key(const std::string& param_name, const char* slot);
  std::string key_;
};

}  // namespace cppgrad::optim
