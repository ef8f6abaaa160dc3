#include "nn/lora.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "nn/init.h"
#include "nn/linear.h"

namespace cppgrad::nn {

namespace {

void check_options(std::int64_t in, std::int64_t out, const LoRAOptions& options, bool has_dropout_gen) {
  const std::int64_t width = std::min(in, out);
  if (options.rank < 1 || options.rank > width)
    throw std::invalid_argument(fmt::format("LoRA: the rank must be between 1 and min(in, out) = {} for a Linear "
                                            "[out={}, in={}], got {}", width, out, in, options.rank));
  if (!std::isfinite(options.alpha) || options.alpha <= 0)
    throw std::invalid_argument(fmt::format("LoRA: alpha must be a positive number, got {}", options.alpha));
  if (!(options.dropout >= 0 && options.dropout < 1))
    throw std::invalid_argument(fmt::format("LoRA: dropout must be in [0, 1), got {}", options.dropout));
  if (options.dropout > 0 && !has_dropout_gen)
    throw std::invalid_argument("LoRA: dropout > 0 needs the model's dropout generator");
}

}  // namespace

LoRA::LoRA(std::int64_t in, std::int64_t out, const LoRAOptions& options, Generator& gen,
           std::shared_ptr<Generator> dropout_gen)
    : options_(options) {
  check_options(in, out, options, dropout_gen != nullptr);
  scaling_ = options.alpha / static_cast<double>(options.rank);
  const double bound = init::linear_bound(in);  // kaiming_uniform_(a=sqrt(5)) on [r, in]
  a_ = register_parameter("A", init::uniform({options.rank, in}, -bound, bound, gen));
  b_ = register_parameter("B", Tensor::zeros({out, options.rank}));
  if (options.dropout > 0)
    dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, std::move(dropout_gen)));
}

std::string LoRA::extra_repr() const {
  return fmt::format("rank={}, alpha={:g}{}", options_.rank, options_.alpha,
                     dropout_ ? fmt::format(", dropout={:g}", options_.dropout) : "");
}

Tensor LoRA::forward(const Tensor& x) const {
  const Tensor h = dropout_ ? dropout_->forward(x) : x;  // [.., in]
  return linear(linear(h, a_), b_) * scaling_;           // [.., r], then [.., out]
}

Tensor LoRA::forward_with(const Tensor& x, const Tensor& weight, const Tensor& bias) const {
  return linear_lora(x, weight, bias, dropout_ ? dropout_->forward(x) : x, a_, b_, scaling_);
}

Tensor LoRA::weight_delta() const {
  NoGradGuard no_grad;
  return matmul(b_, a_) * scaling_;  // [out, r] @ [r, in] -> [out, in]
}

namespace {

// Every (dotted prefix, Linear with a LoRA) under `module`, depth first.
void adapted_linears(const Module& module, const std::string& prefix,
                     std::vector<std::pair<std::string, const Linear*>>& out) {
  if (const auto* lin = dynamic_cast<const Linear*>(&module); lin && lin->lora()) out.emplace_back(prefix, lin);
  for (const auto& [name, child] : module.named_children()) adapted_linears(*child, prefix + name + ".", out);
}

// Every (dotted name, Linear) under `module`, depth first; tied ones (another module's weight) left out.
void named_linears(Module& module, const std::string& name, std::vector<std::pair<std::string, Linear*>>& out) {
  if (auto* lin = dynamic_cast<Linear*>(&module); lin && !lin->named_parameters().empty()) out.emplace_back(name, lin);
  for (const auto& [child_name, child] : module.named_children())
    named_linears(*child, name.empty() ? child_name : name + "." + child_name, out);
}

bool names_target(const std::string& name, const std::string& target) {
  return name == target || (name.size() > target.size() && name.ends_with(target) &&
                            name[name.size() - target.size() - 1] == '.');
}

}  // namespace

std::vector<std::string> add_lora(Module& model, const std::vector<std::string>& targets, const LoRAOptions& options,
                                  Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  if (targets.empty()) throw std::invalid_argument("LoRA: no target layers given");
  std::vector<std::pair<std::string, Linear*>> linears, targeted;
  named_linears(model, "", linears);
  for (const std::string& target : targets) {
    const auto named = [&](const auto& l) { return names_target(l.first, target); };
    if (std::any_of(linears.begin(), linears.end(), named)) continue;
    std::string names;
    for (const auto& [name, _] : linears) names += (names.empty() ? "" : ", ") + name;
    throw std::invalid_argument("LoRA: the target '" + target + "' names no Linear of this model; its Linear layers: " +
                                names);
  }
  for (const auto& l : linears)
    if (std::any_of(targets.begin(), targets.end(), [&](const std::string& t) { return names_target(l.first, t); }))
      targeted.push_back(l);
  // Every adapted layer's options checked before the model changes: a refusal leaves it as it was.
  for (const auto& [name, lin] : targeted) {
    if (lin->lora()) throw std::invalid_argument("LoRA: " + name + " has a LoRA already");
    try {
      check_options(lin->weight().shape()[1], lin->weight().shape()[0], options, dropout_gen != nullptr);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) + " (" + name + ")");
    }
  }
  model.set_requires_grad(false);
  std::vector<std::string> adapted;
  for (const auto& [name, lin] : targeted) {
    lin->add_lora(options, gen, dropout_gen);
    adapted.push_back(name);
  }
  return adapted;
}

std::vector<std::string> lora_layers(const Module& model) {
  std::vector<std::pair<std::string, const Linear*>> adapted;
  adapted_linears(model, "", adapted);
  std::vector<std::string> names;
  for (const auto& [prefix, lin] : adapted) names.push_back(prefix.substr(0, prefix.size() - 1));  // without its dot
  return names;
}

StateDict merged_state_dict(const Module& model) {
  StateDict state = model.state_dict();
  std::vector<std::pair<std::string, const Linear*>> adapted;
  adapted_linears(model, "", adapted);
  for (const auto& [prefix, lin] : adapted) {
    NoGradGuard no_grad;
    state[prefix + "weight"] = lin->weight().detach() + lin->lora()->weight_delta();  // a new tensor: W stays
    for (const auto& [name, _] : lin->lora()->named_parameters()) state.erase(prefix + "lora." + name);
  }
  return state;
}

}  // namespace cppgrad::nn
