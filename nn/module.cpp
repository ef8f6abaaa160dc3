#include "nn/module.h"

#include <array>
#include <fmt/format.h>

#include <cstring>
#include <set>
#include <stdexcept>

#include "core/autograd.h"
#include "core/message_text.h"
#include "core/safetensors.h"

namespace cppgrad::nn {

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw std::invalid_argument("register_parameter: invalid name '" + name + "' (non-empty, no dots)");
  for (const auto& [n, _] : params_)
    if (n == name) throw std::invalid_argument("register_parameter: '" + name + "' is already registered");
  Tensor p = value.detach();
  p.set_requires_grad(true);
  params_.emplace_back(name, p);
  return p;
}

Tensor Module::register_tied_parameter(const std::string& name, const Tensor& owner) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw std::invalid_argument("register_tied_parameter: invalid name '" + name + "' (non-empty, no dots)");
  if (!owner.defined() || !owner.requires_grad())
    throw std::invalid_argument("register_tied_parameter: '" + name + "' must be tied to a parameter");
  for (const NamedTensors* list : {&params_, &tied_})
    for (const auto& [n, _] : *list)
      if (n == name) throw std::invalid_argument("register_tied_parameter: '" + name + "' is already registered");
  tied_.emplace_back(name, owner);  // the owner's own handle: one tensor, one gradient
  return owner;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw std::invalid_argument("register_module: '" + name + "' is null");
  for (const auto& [n, _] : children_)
    if (n == name) throw std::invalid_argument("register_module: '" + name + "' is already registered");
  module->train(training_);
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, NamedTensors& out) const {
  for (const auto& [name, p] : params_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

void Module::collect_tied(const std::string& prefix, NamedTensors& out) const {
  for (const auto& [name, p] : tied_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->collect_tied(prefix + name + ".", out);
}

NamedTensors Module::named_tied_parameters() const {
  NamedTensors out;
  collect_tied("", out);
  return out;
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, p] : named_parameters()) out.push_back(p);
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (const auto& [_, p] : named_parameters()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (auto& [_, p] : named_parameters()) p.zero_grad();
}

void Module::set_requires_grad(bool on) {
  for (auto& [name, p] : named_parameters()) p.set_requires_grad(on);
}

NamedTensors Module::named_trainable_parameters() const {
  NamedTensors out;
  for (auto& [name, p] : named_parameters())
    if (p.requires_grad()) out.emplace_back(name, p);
  return out;
}

void Module::share_parameters_with(const Module& source) {
  const NamedTensors mine = named_parameters(), theirs = source.named_parameters();
  if (mine.size() != theirs.size())
    throw std::invalid_argument("share_parameters_with: " + std::to_string(mine.size()) + " parameters here, " +
                                std::to_string(theirs.size()) + " in the source");
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const auto& [name, p] = mine[i];
    const Tensor& q = theirs[i].second;
    if (name != theirs[i].first || p.shape() != q.shape() || p.dtype() != q.dtype())
      throw std::invalid_argument("share_parameters_with: parameter '" + name + "' " + shape_str(p.shape()) +
                                  " does not match the source's '" + theirs[i].first + "' " + shape_str(q.shape()));
  }
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i].second.set_data(theirs[i].second.detach());
}

void Module::to(DType dtype) {
  for (auto& [name, p] : named_parameters()) {
    if (p.dtype() == dtype) continue;
    p.set_data(p.detach().to(dtype).contiguous());  // every handle to the parameter sees the converted values
  }
}

StateDict Module::state_dict() const {
  StateDict out;
  for (auto& [name, p] : named_parameters()) out.emplace(name, p.detach());
  for (auto& [name, p] : named_tied_parameters()) out.emplace(name, p.detach());
  return out;
}

namespace {

// Bit for bit (so a NaN equals a NaN of the same bits), after converting `a` to `b`'s dtype. In place: GPT-2's tied
// table is 38.6M values, and copies of both as doubles were 0.6 GB at the peak of a finetune's start.
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  const Tensor x = a.to(b.dtype()).contiguous(), y = b.contiguous();  // copies only when not so already
  return dispatch_all(b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return std::memcmp(x.data<T>(), y.data<T>(), static_cast<std::size_t>(x.numel()) * sizeof(T)) == 0;
  });
}

}  // namespace

void Module::check_state_dict(const StateDict& state) const {
  const auto params = named_parameters();
  std::set<std::string> known;
  // The entry for `name`, present and shaped like p (`what` names p in the message: "parameter", "tied parameter").
  auto entry = [&](const std::string& name, const Tensor& p, const char* what) -> const Tensor& {
    known.insert(name);
    auto it = state.find(name);
    if (it == state.end())
      throw std::invalid_argument("load_state_dict: missing entry '" + name + "' (shape " + shape_str(p.shape()) + ")");
    if (it->second.shape() != p.shape())
      throw std::invalid_argument("load_state_dict: entry '" + name + "' has shape " + shape_str(it->second.shape()) +
                                  " but the " + what + " has shape " + shape_str(p.shape()));
    return it->second;
  };
  for (const auto& [name, p] : params) {
    const Tensor& e = entry(name, p, "parameter");
    if (!is_floating(e.dtype()))
      throw std::invalid_argument("load_state_dict: entry '" + name + "' has dtype " + dtype_name(e.dtype()) +
                                  ", expected a floating tensor");
  }
  // A tied entry must be there too (PyTorch's strict load requires both names) and hold its owner's values.
  for (const auto& [name, p] : named_tied_parameters()) {
    const Tensor& e = entry(name, p, "tied parameter");
    for (const auto& [owner, q] : params)
      if (q.impl_ptr() == p.impl_ptr() && !same_values(e, state.at(owner)))
        throw std::invalid_argument("load_state_dict: entry '" + name + "' is tied to '" + owner +
                                    "' but holds other values");
  }
  for (const auto& [name, _] : state)
    if (!known.count(name))  // the file's name, shown on one line and cut short (core/message_text.h)
      throw std::invalid_argument("load_state_dict: unexpected entry " + quoted_text(name));
}

void Module::load_state_dict(const StateDict& state) {
  check_state_dict(state);  // everything first, so a refused state leaves every parameter as it was
  NoGradGuard no_grad;
  for (const auto& [name, p] : named_parameters()) p.copy_(state.at(name).to(p.dtype()));
}

void Module::assign_state_dict(const StateDict& state) {
  check_state_dict(state);
  const NamedTensors params = named_parameters();
  // An entry that is the parameter's own memory (a view from this model's state_dict) leaves it as it is.
  auto own = [&](const std::string& name, const Tensor& p) {
    return state.at(name).impl().storage == p.impl().storage;
  };
  for (const auto& [name, p] : params)
    if (!own(name, p) && p.impl().storage.use_count() > 1)
      throw std::logic_error("assign_state_dict: parameter '" + name + "' shares its memory with another tensor (a "
                             "replica's, or a view kept elsewhere), which would keep the old values: assign before "
                             "share_parameters_with, or use load_state_dict");
  std::set<const Storage*> taken;  // two parameters never share an entry's memory: one of them gets a copy
  for (const auto& [name, p] : params) {
    if (own(name, p)) continue;
    Tensor e = state.at(name).detach().to(p.dtype()).contiguous();
    // A part of a larger memory (a cropped position table) is copied out: a parameter holds what it uses.
    const bool whole = e.impl().offset == 0 &&
                       e.impl().storage->nbytes() == static_cast<std::size_t>(e.numel()) * dtype_size(e.dtype());
    if (!whole || !taken.insert(e.impl().storage.get()).second) e = e.clone();
    p.set_data(e);
  }
}

void Module::save(const std::string& path, const std::map<std::string, std::string>& metadata) const {
  write_safetensors(path, state_dict(), metadata);
}

void Module::load(const std::string& path) { load_state_dict(read_safetensors(path).tensors); }

namespace {

void summary_rows(const Module& m, const std::string& name, int depth, std::vector<std::array<std::string, 4>>& rows) {
  std::int64_t own = 0;
  std::string shapes;  // "weight [64, 32], bias [64]": the parameters registered by m itself (no dot in the name)
  for (const auto& [n, p] : m.named_parameters()) {
    if (n.find('.') != std::string::npos) continue;
    own += p.numel();
    shapes += (shapes.empty() ? "" : ", ") + n + " " + shape_str(p.shape());
  }
  const std::string label = std::string(2 * depth, ' ') + name + " (" + m.type_name() + ")";
  rows.push_back({label, m.extra_repr(), shapes.empty() ? "-" : shapes, fmt::format("{}", own)});
  for (const auto& [n, c] : m.named_children()) summary_rows(*c, n, depth + 1, rows);
}

}  // namespace

std::string summary(const Module& model, const std::string& name) {
  std::vector<std::array<std::string, 4>> rows;
  summary_rows(model, name, 0, rows);
  std::array<std::size_t, 4> width{6, 6, 12, 10};
  const std::array<std::string, 4> header{"Layer (type)", "Config", "Parameters", "Own params"};
  for (std::size_t k = 0; k < 4; ++k) width[k] = std::max(width[k], header[k].size());
  for (const auto& r : rows)
    for (std::size_t k = 0; k < 4; ++k) width[k] = std::max(width[k], r[k].size());
  const std::size_t total_width = width[0] + width[1] + width[2] + width[3] + 6;
  std::string out = std::string(total_width, '=') + "\n";
  out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}\n", header[0], width[0], header[1], width[1], header[2], width[2],
                     header[3], width[3]);
  out += std::string(total_width, '-') + "\n";
  for (const auto& r : rows)
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}\n", r[0], width[0], r[1], width[1], r[2], width[2], r[3], width[3]);
  out += std::string(total_width, '=') + "\n";
  const std::int64_t total = model.num_parameters();
  const auto params = model.named_parameters();
  const std::size_t bytes = params.empty() ? 0 : static_cast<std::size_t>(total) * dtype_size(params[0].second.dtype());
  out += fmt::format("Total params: {}  ({} tensors, {:.1f} KiB)\n", total, params.size(), bytes / 1024.0);
  return out;
}

}  // namespace cppgrad::nn
