#include "core/autograd.h"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/execution_context.h"
#include "core/kernels/strided.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"

namespace cppgrad {

namespace {
// The no-grad and anomaly switches are fields of this thread's execution context (core/execution_context.h), which
// the thread pool carries into its workers.
ExecutionContext& context() { return detail::this_thread_context(); }
// True while a backward pass runs its rules: their intermediate results are checked as the gradient of the op
// whose rule made them ("backward of 'sqrt'"), not each as a forward of its own. Not part of the execution context:
// it says what this thread's own stack is doing, not how work handed to another thread should run.
thread_local bool g_in_backward = false;
// True while the rules running on this thread belong to a pass that releases each node right after its rule
// (autograd::rule_runs_once). Thread state for the same reason as g_in_backward.
thread_local bool g_rules_run_once = false;
// The innermost OnLeafGradient's callback on this thread, or null.
thread_local const std::function<void(const Tensor&)>* g_on_leaf = nullptr;

// Counts of NaN and infinite values of a floating tensor, and its finite range.
struct ValueSummary {
  std::int64_t nan = 0, inf = 0;
  double min = 0, max = 0;
  bool any_finite = false;
};

// Reads the storage directly through the strides: going through ops (contiguous, to_vector) would call
// record_op, and so this function, again.
ValueSummary summarize(const Tensor& t) {
  ValueSummary s;
  if (!t.defined() || !is_floating(t.dtype())) return s;
  dispatch_floating(t.dtype(), "anomaly check", [&](auto tag) {
    using T = decltype(tag);
    const T* base = reinterpret_cast<const T*>(t.impl().storage->data()) + t.offset();
    kernels::for_each_row<1>(t.shape(), {t.strides()}, [&](const std::array<std::int64_t, 1>& off, std::int64_t n,
                                                           const std::array<std::int64_t, 1>& inner) {
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(base[off[0] + i * inner[0]]);
        if (std::isnan(v)) ++s.nan;
        else if (std::isinf(v)) ++s.inf;
        else if (!s.any_finite) s.min = s.max = v, s.any_finite = true;
        else s.min = std::min(s.min, v), s.max = std::max(s.max, v);
      }
    });
  });
  return s;
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined";
  const ValueSummary s = summarize(t);
  std::string d = shape_str(t.shape()) + " " + dtype_name(t.dtype());
  if (!is_floating(t.dtype())) return d;
  d += s.any_finite ? " min " + std::to_string(s.min) + " max " + std::to_string(s.max) : " no finite values";
  return d + " nan " + std::to_string(s.nan) + " inf " + std::to_string(s.inf);
}

std::string site(const std::source_location& w) {
  return std::string(w.file_name()) + ":" + std::to_string(w.line());
}

std::string inputs_report(const TensorList& inputs) {
  std::string r;
  for (std::size_t i = 0; i < inputs.size(); ++i) r += "\n  input " + std::to_string(i) + ": " + describe(inputs[i]);
  return r;
}

}  // namespace

bool grad_enabled() { return context().grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(std::exchange(context().grad_enabled, false)) {}
NoGradGuard::~NoGradGuard() { context().grad_enabled = previous_; }
GradModeGuard::GradModeGuard(bool enabled) : previous_(std::exchange(context().grad_enabled, enabled)) {}
GradModeGuard::~GradModeGuard() { context().grad_enabled = previous_; }

bool anomaly_detection_enabled() { return context().detect_anomaly; }
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(std::exchange(context().detect_anomaly, true)) {}
DetectAnomalyGuard::~DetectAnomalyGuard() { context().detect_anomaly = previous_; }

OnLeafGradient::OnLeafGradient(std::function<void(const Tensor&)> on_leaf)
    : on_leaf_(std::move(on_leaf)), previous_(std::exchange(g_on_leaf, on_leaf_ ? &on_leaf_ : nullptr)) {}
OnLeafGradient::~OnLeafGradient() { g_on_leaf = previous_; }

namespace {

// The worklist of ~Node: up to 16 impls inline (a node's inputs, and a chain's as it is walked, fit), the rest on
// the heap. A std::vector here was a heap allocation for every node freed.
class ImplStack {
 public:
  void push_back(std::shared_ptr<TensorImpl> impl) {
    if (n_ < kInline) inline_[n_++] = std::move(impl);
    else spill_.push_back(std::move(impl));
  }
  std::shared_ptr<TensorImpl>& back() { return spill_.empty() ? inline_[n_ - 1] : spill_.back(); }
  void pop_back() {
    if (!spill_.empty()) spill_.pop_back();
    else inline_[--n_].reset();
  }
  bool empty() const { return n_ == 0 && spill_.empty(); }

 private:
  static constexpr std::size_t kInline = 16;
  std::shared_ptr<TensorImpl> inline_[kInline];
  std::size_t n_ = 0;
  std::vector<std::shared_ptr<TensorImpl>> spill_;
};

}  // namespace

Node::~Node() {
  // Take the inputs out before this node dies; any input whose last owner we are is dismantled here,
  // in a loop, instead of by a chain of nested destructors.
  ImplStack pending;
  for (auto& t : inputs)
    if (t.defined()) pending.push_back(t.impl_ptr());
  inputs.clear();
  backward = nullptr;  // captured tensors go now, while `pending` still holds the inputs
  while (!pending.empty()) {
    std::shared_ptr<TensorImpl> impl = std::move(pending.back());
    pending.pop_back();
    if (impl.use_count() == 1 && impl->grad_fn && impl->grad_fn.use_count() == 1) {
      std::shared_ptr<Node> node = std::move(impl->grad_fn);
      for (auto& t : node->inputs)
        if (t.defined()) pending.push_back(t.impl_ptr());
      node->inputs.clear();
      node->backward = nullptr;
    }  // node and impl are freed here with nothing left to recurse into
  }
}

bool needs_graph(std::initializer_list<const Tensor*> inputs) {
  if (!context().grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool records_nothing(std::span<const Tensor> inputs) {
  return !context().detect_anomaly && !needs_graph(inputs);
}

bool needs_graph(std::span<const Tensor> inputs) {
  if (!context().grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

Tensor record_op(Tensor out, const char* name, TensorList inputs, BackwardFn backward,
                 std::source_location where) {
  // A view (its result shares an input's storage) computes no values: whatever it shows came from its base, which
  // was checked when it was made (and ops write their results through views of buffers not yet filled).
  auto is_view = [&] {
    for (const Tensor& in : inputs)
      if (in.defined() && in.impl().storage == out.impl().storage) return true;
    return false;
  };
  if (context().detect_anomaly && !g_in_backward && !is_view()) {
    // NaN is always an anomaly; an infinity only when no input was infinite (masking with -inf is legitimate).
    const ValueSummary s = summarize(out);
    bool inputs_infinite = false;
    for (const Tensor& in : inputs) inputs_infinite = inputs_infinite || summarize(in).inf > 0;
    if (s.nan || (s.inf && !inputs_infinite))
      throw AnomalyError(std::string("anomaly: forward of '") + name + "' (created at " + site(where) + ") produced " +
                         std::to_string(s.nan) + " NaN and " + std::to_string(s.inf) + " infinite values; output " +
                         shape_str(out.shape()) + inputs_report(inputs));
  }
  if (!needs_graph(inputs)) return out;
  out.impl().requires_grad = true;
  out.impl().grad_fn = std::allocate_shared<Node>(PoolAllocator<Node>(), name, std::move(inputs), std::move(backward), where);
  return out;
}

namespace {

// Adds g into the gradient slot `slot`. On first use the slot takes g itself when nothing else can see its
// memory (contiguous, its storage referenced by g alone, as PyTorch steals a gradient whose refcount is 1);
// otherwise a contiguous copy, since later accumulations write into the slot in place. A gradient with a graph
// (create_graph) is kept as it is and summed out of place, so the sum stays differentiable.
void accumulate(std::shared_ptr<TensorImpl>& slot, Tensor g) {
  if (g.requires_grad() || (slot && slot->requires_grad)) {  // a graph on either side: never written in place
    slot = slot ? add(Tensor(slot), g).impl_ptr() : g.impl_ptr();
  } else if (!slot) {
    const bool private_memory = g.impl_ptr().use_count() == 1 && g.impl().storage.use_count() == 1 &&
                                g.offset() == 0 && g.is_contiguous();
    slot = private_memory ? g.impl_ptr() : g.clone().impl_ptr();
  } else {
    Tensor(slot).add_(g);
  }
}

// Tensor impls -> an index, by open addressing in one array. backward visits a few hundred tensors per training
// step; node-based hash containers allocated twice per tensor (the visited set and the pending gradients).
class ImplIndex {
 public:
  static constexpr std::int64_t kNone = -1;

  // Adds p with `value` unless present; returns whether it was added.
  bool insert(const TensorImpl* p, std::int64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = slots_[slot_of(p)];
    if (s.key != nullptr) return false;
    s = {p, value};
    ++size_;
    return true;
  }
  void set(const TensorImpl* p, std::int64_t value) {
    Slot& s = slots_[slot_of(p)];
    assert(s.key == p && "ImplIndex::set: the impl was never inserted");
    s.value = value;
  }
  std::int64_t find(const TensorImpl* p) const {
    if (slots_.empty()) return kNone;
    const Slot& s = slots_[slot_of(p)];
    return s.key == nullptr ? kNone : s.value;
  }

 private:
  struct Slot {
    const TensorImpl* key = nullptr;
    std::int64_t value = kNone;
  };
  // p's slot, or the empty slot where it would go.
  std::size_t slot_of(const TensorImpl* p) const {
    const std::size_t mask = slots_.size() - 1;
    // Impls are heap objects: drop the alignment bits, then spread the rest (Fibonacci hashing).
    std::size_t i = (((reinterpret_cast<std::uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (slots_[i].key != nullptr && slots_[i].key != p) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != nullptr) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// Iterative post-order DFS from every root: returns every tensor that requires grad and is reachable from one,
// each after all the tensors it was computed from; `position` maps each one's impl to its index in the result.
std::vector<Tensor> topological_order(const std::vector<Tensor>& roots, ImplIndex& position) {
  std::vector<Tensor> order;
  order.reserve(512);  // a training step's graph
  struct Frame {
    Tensor t;
    std::size_t next_input;
  };
  std::vector<Frame> stack;
  for (const Tensor& root : roots) {
    if (!position.insert(root.impl_ptr().get(), ImplIndex::kNone)) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& node = f.t.grad_fn();
      if (node && f.next_input < node->inputs.size()) {
        const Tensor& in = node->inputs[f.next_input++];
        if (in.defined() && in.requires_grad() && position.insert(in.impl_ptr().get(), ImplIndex::kNone))
          stack.push_back({in, 0});
      } else {
        position.set(f.t.impl_ptr().get(), static_cast<std::int64_t>(order.size()));
        order.push_back(f.t);
        stack.pop_back();
      }
    }
  }
  return order;
}

// One backward pass over the graph behind `roots`, seeded with `seeds` (one per root, shaped like it).
// Gradients reaching a leaf go into its .grad when `into_leaves`; the total gradient of every tensor in
// `wanted` is returned (undefined where none arrived). Nodes from which no wanted tensor (or, with
// into_leaves, no leaf) can be reached are skipped.
struct Pass {
  const std::vector<Tensor>& roots;
  const std::vector<Tensor>& seeds;
  const std::vector<Tensor>& wanted;
  bool into_leaves, retain_graph, create_graph, record_grad_norms;
};

void check_not_released(const std::vector<Tensor>& order) {
  for (const Tensor& t : order)
    if (t.grad_fn() && t.grad_fn()->released)
      throw std::logic_error("backward: trying to go through the graph of '" + t.grad_fn()->name +
                             "' a second time, but it was freed by the first backward; call backward(grad, "
                             "/*retain_graph=*/true) the first time if you need to go through it twice");
}

// needed[k]: order[k] leads (through the inputs of its node) to a tensor the pass must deliver a gradient to.
std::vector<char> needed_nodes(const std::vector<Tensor>& order, const ImplIndex& position, const Pass& pass) {
  if (pass.into_leaves) return std::vector<char>(order.size(), 1);  // every tensor in the order leads to a leaf
  std::vector<char> needed(order.size(), 0);
  for (const Tensor& w : pass.wanted) {
    const std::int64_t at = position.find(w.impl_ptr().get());
    if (at != ImplIndex::kNone) needed[static_cast<std::size_t>(at)] = 1;
  }
  for (std::size_t k = 0; k < order.size(); ++k) {  // inputs come first: their marks are final
    const auto& node = order[k].grad_fn();
    if (!node) continue;
    for (const Tensor& in : node->inputs)
      if (in.defined() && in.requires_grad() && needed[static_cast<std::size_t>(position.find(in.impl_ptr().get()))])
        needed[k] = 1;
  }
  return needed;
}

void check_anomalies(const Node& node, const TensorList& grads, const Tensor& g) {
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const ValueSummary s = summarize(grads[i]);
    if (s.nan || s.inf)
      throw AnomalyError("anomaly: backward of '" + node.name + "' (the forward op created at " + site(node.where) +
                         ") produced " + std::to_string(s.nan) + " NaN and " + std::to_string(s.inf) +
                         " infinite values in the gradient of input " + std::to_string(i) +
                         "; incoming gradient: " + describe(g) + inputs_report(node.inputs));
  }
}

// Adds g into a pending gradient. In place when nothing else can see the slot's memory (no graph on it, contiguous,
// its impl and storage referenced by the slot alone): the tied embedding's [V, C] gradient, from the head and from the
// lookup, then needs two buffers of its size and not three. The same additions either way (slot[i] + g[i]).
void add_pending(Tensor& slot, const Tensor& g) {
  if (!slot.defined()) {
    slot = g;
    return;
  }
  const bool private_memory = !slot.requires_grad() && !g.requires_grad() && slot.dtype() == g.dtype() &&
                              slot.is_contiguous() && slot.impl_ptr().use_count() == 1 &&
                              slot.impl().storage.use_count() == 1 && !slot.same(g);
  if (private_memory) slot.add_(g);
  else slot = add(slot, g);
}

// Runs one node's rule on g and adds each input's gradient into `pending`.
void propagate(const Tensor& t, const Tensor& g, const ImplIndex& position, std::vector<Tensor>& pending,
               bool record_grad_norms) {
  Node& node = *t.grad_fn();
  if (record_grad_norms) node.grad_norm = std::sqrt(squared_norm(g));
  const TensorList grads = node.backward(g, t);
  if (grads.size() != node.inputs.size())
    throw std::logic_error("backward of '" + node.name + "' returned " + std::to_string(grads.size()) +
                           " gradients for " + std::to_string(node.inputs.size()) + " inputs");
  if (context().detect_anomaly) check_anomalies(node, grads, g);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Tensor& in = node.inputs[i];
    if (!in.defined() || !in.requires_grad() || !grads[i].defined()) continue;
    if (grads[i].shape() != in.shape())
      throw std::logic_error("backward of '" + node.name + "': gradient for input " + std::to_string(i) +
                             " has shape " + shape_str(grads[i].shape()) + " but the input has shape " +
                             shape_str(in.shape()));
    const std::int64_t at = position.find(in.impl_ptr().get());
    assert(at != ImplIndex::kNone && "backward: an input the topological order did not visit");
    add_pending(pending[static_cast<std::size_t>(at)], grads[i]);
  }
}

// A node's backward can run once more only if the graph is retained: releasing it drops its rule (and the tensors
// the rule saved) and its inputs.
void release(Node& node) {
  node.released = true;
  node.backward = nullptr;
  node.inputs.clear();
}

void release(const std::vector<Tensor>& order) {
  for (const Tensor& t : order)
    if (t.defined() && t.grad_fn()) release(*t.grad_fn());
}

std::vector<Tensor> run_pass(const Pass& pass) {
  // Rules record a graph of their own exactly when one was asked for.
  GradModeGuard grad_mode(pass.create_graph);
  struct InBackward {  // restored on the way out, also by an exception
    bool previous, previous_once;
    explicit InBackward(bool once)
        : previous(std::exchange(g_in_backward, true)), previous_once(std::exchange(g_rules_run_once, once)) {}
    ~InBackward() { g_in_backward = previous, g_rules_run_once = previous_once; }
    InBackward(const InBackward&) = delete;
    InBackward& operator=(const InBackward&) = delete;
  } in_backward(/*once=*/!pass.retain_graph);
  ImplIndex position;
  std::vector<Tensor> order = topological_order(pass.roots, position);
  check_not_released(order);
  const std::vector<char> needed = needed_nodes(order, position, pass);

  std::vector<Tensor> pending(order.size());  // pending[k]: the gradient flowing into order[k] so far
  for (std::size_t r = 0; r < pass.roots.size(); ++r) {
    Tensor& slot = pending[static_cast<std::size_t>(position.find(pass.roots[r].impl_ptr().get()))];
    slot = slot.defined() ? add(slot, pass.seeds[r]) : pass.seeds[r];
  }
  std::vector<Tensor> delivered(pass.wanted.size());
  for (std::size_t k = order.size(); k-- > 0;) {
    const Tensor& t = order[k];
    if (!pending[k].defined() || !needed[k]) continue;  // nothing flowed here, or nothing wanted lies behind it
    for (std::size_t w = 0; w < pass.wanted.size(); ++w)
      if (pass.wanted[w].same(t)) delivered[w] = pending[k];
    if (!t.grad_fn()) {
      if (pass.into_leaves) {
        accumulate(t.impl().grad, std::move(pending[k]));
        if (g_on_leaf) (*g_on_leaf)(t);
      }
      continue;
    }
    propagate(t, std::move(pending[k]), position, pending, pass.record_grad_norms);
    if (pass.retain_graph) continue;
    // Done with this node: free what it saved and let go of it, as PyTorch frees saved tensors during backward.
    // An activation then lives until the last node that reads it has run, not until the pass ends (GPT-2 124M's
    // LoRA step at 8 x 256 peaked at 4.9 GB with every activation kept to the end). Its inputs come earlier in the
    // order and are still held by the nodes that are left; a freed tensor's address is never looked up again.
    release(*t.grad_fn());
    order[k] = Tensor();
  }
  if (!pass.retain_graph) release(order);
  return delivered;
}

// The gradient that starts a backward from `root`: the given one (checked), or ones for a one-element root.
Tensor seed_for(const Tensor& root, const Tensor& grad, const char* api) {
  if (grad.defined()) {
    if (grad.shape() != root.shape())
      throw std::invalid_argument(std::string(api) + ": gradient shape " + shape_str(grad.shape()) +
                                  " does not match the tensor's shape " + shape_str(root.shape()));
    if (grad.dtype() != root.dtype())
      throw std::invalid_argument(std::string(api) + ": gradient dtype " + dtype_name(grad.dtype()) +
                                  " does not match the tensor's dtype " + dtype_name(root.dtype()));
    return grad;
  }
  if (root.numel() != 1)
    throw std::invalid_argument(std::string(api) + ": a gradient can be implied only for a one-element tensor (a "
                                "loss); this one has shape " + shape_str(root.shape()) + ", pass the upstream gradient");
  return Tensor::ones(root.shape(), root.dtype());
}

void check_requires_grad(const Tensor& t, const char* api, const char* what) {
  if (!t.defined() || !t.requires_grad())
    throw std::logic_error(std::string(api) + ": " + what + " does not require grad: nothing it was computed from "
                           "requires grad, or it was computed under NoGradGuard, or it is a gradient from a backward "
                           "without create_graph (those are constants; pass create_graph=true to differentiate them)");
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph, bool record_grad_norms,
                  bool create_graph) {
  check_requires_grad(root, "backward", "this tensor");
  const std::vector<Tensor> roots{root}, seeds{seed_for(root, grad, "backward")}, wanted;
  run_pass(Pass{roots, seeds, wanted, /*into_leaves=*/true, retain_graph || create_graph, create_graph,
                record_grad_norms});
}

bool autograd::rule_runs_once() { return g_rules_run_once; }

std::vector<Tensor> autograd::grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                                   bool create_graph, bool allow_unused) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw std::invalid_argument("autograd::grad: got " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                                std::to_string(outputs.size()) + " outputs");
  std::vector<Tensor> seeds;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    check_requires_grad(outputs[i], "autograd::grad", ("output " + std::to_string(i)).c_str());
    seeds.push_back(seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "autograd::grad"));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    check_requires_grad(inputs[i], "autograd::grad", ("input " + std::to_string(i)).c_str());
  std::vector<Tensor> grads = run_pass(Pass{outputs, seeds, inputs, /*into_leaves=*/false,
                                            retain_graph.value_or(create_graph), create_graph, false});
  for (std::size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined() && !allow_unused)
      throw std::invalid_argument("autograd::grad: input " + std::to_string(i) + " (shape " +
                                  shape_str(inputs[i].shape()) + ") was not used to compute the outputs; pass "
                                  "allow_unused=true to get an undefined gradient for it");
  return grads;
}

TensorList differentiate_definition(const Definition& definition, const TensorList& inputs, const Tensor& g) {
  std::vector<Tensor> wanted;
  for (const Tensor& in : inputs)
    if (in.defined() && in.requires_grad()) wanted.push_back(in);
  const Tensor out = definition(inputs);
  const std::vector<Tensor> grads =
      autograd::grad({out}, wanted, {g}, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
  TensorList result;
  std::size_t next = 0;
  for (const Tensor& in : inputs) result.push_back(in.defined() && in.requires_grad() ? grads[next++] : Tensor());
  return result;
}

}  // namespace cppgrad
