#pragma once
// Module: the base of every layer. A module owns named parameters and named submodules, both in registration
// order, and exposes them with dotted hierarchical names ("encoder.0.self_attn.W_q.weight"), as PyTorch's
// named_parameters() does, so state dicts load PyTorch-named tensors without a translation table.
//
//   class Linear : public Module {
//     Linear(...) { weight_ = register_parameter("weight", init); }   // a handle kept in a named member
//   };
//   class Block : public Module {
//     Block(...) { ffn_ = register_module("ffn", std::make_shared<FeedForward>(...)); }
//   };
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = std::map<std::string, Tensor>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type's name for summaries ("Linear", "MultiHeadAttention").
  virtual std::string type_name() const = 0;
  // A short description of the configuration for summaries ("in=32, out=64, bias").
  virtual std::string extra_repr() const { return ""; }

  NamedTensors named_parameters() const;  // every parameter, depth first, registration order
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  std::int64_t num_parameters() const;

  // Training mode (dropout active) or evaluation mode, applied to the whole tree.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  void zero_grad();
  // Freezes (false) or unfreezes every parameter, PyTorch's module.requires_grad_(): a frozen parameter gets no
  // gradient, and backward skips the products that would compute it (a Linear's weight-gradient product). Give an
  // optimizer only the parameters that still require grad (named_trainable_parameters()).
  void set_requires_grad(bool on);
  NamedTensors named_trainable_parameters() const;  // named_parameters() that require grad, in the same order

  // Converts every parameter in place to dtype (e.g. float64 for gradient checks and parity); the handles
  // modules hold stay valid.
  void to(DType dtype);

  // Parameter values by dotted name (detached views of the live parameters, not copies), tied parameters under
  // each of their names (see register_tied_parameter).
  StateDict state_dict() const;
  // Copies values into the parameters. Refuses, naming the entry, a missing or unexpected entry or a shape
  // mismatch (giving both shapes), or a tied entry whose values differ from its owner's; a dtype difference is
  // converted. All or nothing: every entry is checked (check_state_dict) before any parameter changes.
  void load_state_dict(const StateDict& state);
  // load_state_dict without the copy (PyTorch's load_state_dict(state, assign=True)): each parameter takes its entry's
  // memory itself (converted first if its dtype differs), and every handle to the parameter sees it. For a model just
  // built to be loaded: a GPT-2 checkpoint is read into memory once instead of twice, and its second 0.5 GB is never
  // touched. Refuses what load_state_dict refuses, and (std::logic_error) a parameter whose memory another tensor
  // shares, such as a replica's (share_parameters_with): that one would keep the old values. All or nothing.
  void assign_state_dict(const StateDict& state);
  // What load_state_dict refuses, without loading: std::invalid_argument naming the first bad entry.
  void check_state_dict(const StateDict& state) const;
  // The state dict as a safetensors file (atomic write), and back.
  void save(const std::string& path, const std::map<std::string, std::string>& metadata = {}) const;
  void load(const std::string& path);

  // Makes every parameter of this module read and write the storage of the same-named parameter of `source`
  // (names, shapes and dtypes must agree), while keeping gradients of its own. The result is a replica for
  // data-parallel training: it runs forward and backward on its slice of a batch on another thread, and an
  // optimizer stepping `source` updates it too. Throws std::invalid_argument naming the first mismatch.
  void share_parameters_with(const Module& source);

 protected:
  Tensor register_parameter(const std::string& name, Tensor value);
  // Weight tying: `owner`, a parameter of another module (GPT's transformer.wte.weight), used by this one under
  // `name` (lm_head.weight), returned as the same tensor, so both see every update and share one gradient. As in
  // PyTorch, named_parameters() lists it once, under its owner's name (one optimizer slot, one count), while
  // state_dict() lists it under both names, so a checkpoint loads into the PyTorch model with load_state_dict.
  Tensor register_tied_parameter(const std::string& name, const Tensor& owner);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void collect(const std::string& prefix, NamedTensors& out) const;
  void collect_tied(const std::string& prefix, NamedTensors& out) const;
  NamedTensors named_tied_parameters() const;

  NamedTensors params_;
  NamedTensors tied_;  // owned elsewhere, used here (register_tied_parameter)
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// Evaluation mode (dropout off) for one scope, then the mode the module had before: reading a model (an evaluation,
// attention maps, a sample) never leaves it changed for whoever trains it next.
//   { EvalModeGuard eval(model); model.forward(idx); }   // training mode again here, if it was
class EvalModeGuard {
 public:
  explicit EvalModeGuard(Module& module) : module_(module), was_training_(module.is_training()) { module_.eval(); }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
};

// A module whose forward maps one tensor to one tensor (Linear, LayerNorm, Dropout, Embedding, FeedForward, the GPT's
// MLP and Block), PyTorch's `forward(x)`. Holding one as a Layer chooses it at run time: a Block can keep
// std::shared_ptr<Layer> ln_1 and build a LayerNorm or another norm from its config, with no cast.
class Layer : public Module {
 public:
  virtual Tensor forward(const Tensor& x) const = 0;
};

// A list of modules registered as "0", "1", ... (PyTorch's nn.ModuleList), so names read "encoder.0.norm1.weight".
template <typename M>
class ModuleList : public Module {
 public:
  std::string type_name() const override { return "ModuleList"; }
  void push_back(std::shared_ptr<M> m) { items_.push_back(register_module(std::to_string(items_.size()), std::move(m))); }
  std::size_t size() const { return items_.size(); }
  M& operator[](std::size_t i) const { return *items_.at(i); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

// A torchinfo-style table: each submodule (indented by depth), its type and configuration, the shapes of its own
// parameters (weight [out, in], ...: what a layer maps from and to, known without running it) and their count; then
// the totals.
std::string summary(const Module& model, const std::string& name = "model");

}  // namespace cppgrad::nn
