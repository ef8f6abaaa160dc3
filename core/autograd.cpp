#include "core/autograd.h"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <cstdint>
#include <vector>

#include "core/kernels/strided.h"
#include "core/ops.h"

namespace cppgrad {

namespace {
thread_local bool g_grad_enabled = true;
thread_local bool g_detect_anomaly = false;

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

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool anomaly_detection_enabled() { return g_detect_anomaly; }
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(g_detect_anomaly) { g_detect_anomaly = true; }
DetectAnomalyGuard::~DetectAnomalyGuard() { g_detect_anomaly = previous_; }

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
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool needs_graph(const TensorList& inputs) {
  if (!g_grad_enabled) return false;
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
  if (g_detect_anomaly && !is_view()) {
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
// otherwise a contiguous copy, since later accumulations write into the slot in place.
void accumulate(std::shared_ptr<TensorImpl>& slot, Tensor g) {
  if (!slot) {
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

// Iterative post-order DFS: returns every tensor that requires grad and is reachable from root, each after all the
// tensors it was computed from (root last); `position` maps each one's impl to its index in the result.
std::vector<Tensor> topological_order(const Tensor& root, ImplIndex& position) {
  std::vector<Tensor> order;
  order.reserve(512);  // a training step's graph
  struct Frame {
    Tensor t;
    std::size_t next_input;
  };
  std::vector<Frame> stack;
  stack.push_back({root, 0});
  position.insert(root.impl_ptr().get(), ImplIndex::kNone);
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
  return order;
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph, bool record_grad_norms) {
  if (!root.requires_grad())
    throw std::logic_error("backward: this tensor does not require grad (no input of its graph has requires_grad)");
  Tensor seed;
  if (grad.defined()) {
    if (grad.shape() != root.shape())
      throw std::invalid_argument("backward: gradient shape " + shape_str(grad.shape()) +
                                  " does not match the tensor's shape " + shape_str(root.shape()));
    if (grad.dtype() != root.dtype())
      throw std::invalid_argument(std::string("backward: gradient dtype ") + dtype_name(grad.dtype()) +
                                  " does not match the tensor's dtype " + dtype_name(root.dtype()));
    seed = grad;
  } else {
    if (root.numel() != 1)
      throw std::invalid_argument("backward: a gradient can be implied only for a one-element tensor (a loss); this "
                                  "one has shape " + shape_str(root.shape()) + ", pass the upstream gradient");
    seed = Tensor::ones(root.shape(), root.dtype());
  }

  NoGradGuard no_grad;  // backward computations are not themselves recorded
  ImplIndex position;
  std::vector<Tensor> order = topological_order(root, position);
  for (const Tensor& t : order)
    if (t.grad_fn() && t.grad_fn()->released)
      throw std::logic_error("backward: trying to go through the graph of '" + t.grad_fn()->name +
                             "' a second time, but it was freed by the first backward; call backward(grad, "
                             "/*retain_graph=*/true) the first time if you need to go through it twice");

  std::vector<Tensor> pending(order.size());  // pending[i]: the gradient flowing into order[i] so far
  pending.back() = seed;
  for (std::size_t k = order.size(); k-- > 0;) {
    const Tensor& t = order[k];
    if (!pending[k].defined()) continue;  // nothing flowed here
    Tensor g = std::move(pending[k]);
    if (!t.grad_fn()) {  // a leaf: keep the gradient
      accumulate(t.impl().grad, std::move(g));
      continue;
    }
    Node& node = *t.grad_fn();
    if (record_grad_norms) node.grad_norm = std::sqrt(squared_norm(g));
    const TensorList grads = node.backward(g);
    if (grads.size() != node.inputs.size())
      throw std::logic_error("backward of '" + node.name + "' returned " + std::to_string(grads.size()) +
                             " gradients for " + std::to_string(node.inputs.size()) + " inputs");
    if (g_detect_anomaly)
      for (std::size_t i = 0; i < grads.size(); ++i) {
        const ValueSummary s = summarize(grads[i]);
        if (s.nan || s.inf)
          throw AnomalyError("anomaly: backward of '" + node.name + "' (the forward op created at " +
                             site(node.where) + ") produced " + std::to_string(s.nan) + " NaN and " +
                             std::to_string(s.inf) + " infinite values in the gradient of input " + std::to_string(i) +
                             "; incoming gradient: " + describe(g) + inputs_report(node.inputs));
      }
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const Tensor& in = node.inputs[i];
      if (!in.defined() || !in.requires_grad() || !grads[i].defined()) continue;
      if (grads[i].shape() != in.shape())
        throw std::logic_error("backward of '" + node.name + "': gradient for input " + std::to_string(i) +
                               " has shape " + shape_str(grads[i].shape()) + " but the input has shape " +
                               shape_str(in.shape()));
      const std::int64_t at = position.find(in.impl_ptr().get());
      assert(at != ImplIndex::kNone && "backward: an input the topological order did not visit");
      Tensor& slot = pending[static_cast<std::size_t>(at)];
      slot = slot.defined() ? add(slot, grads[i]) : grads[i];
    }
  }

  if (!retain_graph) {
    for (const Tensor& t : order) {
      if (!t.grad_fn()) continue;
      Node& node = *t.grad_fn();
      node.released = true;
      node.backward = nullptr;
      node.inputs.clear();
    }
  }
}

}  // namespace cppgrad
