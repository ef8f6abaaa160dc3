#pragma once
// The reverse-mode engine. Each differentiable op returns its result through `record_op`, which attaches a
// Node holding the op's name, its inputs and a backward function: grad_out -> one gradient per input
// (undefined where that input needs none). Tensor::backward() walks the nodes in reverse topological order.
#include <stdexcept>
#include <functional>
#include <iterator>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include "core/source_location.h"
#include <string>
#include <type_traits>
#include <vector>

#include "core/allocator.h"
#include "core/tensor.h"

namespace cppgrad {

// A list of tensors in a block from the small-object lists (core/allocator.h): a node's inputs and the gradients
// its backward returns, one list each per op and step.
using TensorList = std::vector<Tensor, PoolAllocator<Tensor>>;

// An op's backward: grad_out (shaped like the op's output) -> one gradient per input, shaped like that input
// (undefined where that input needs none). A rule that reads the op's own result takes it as a second argument,
// `out`, from the engine instead of capturing it: a node that held its output would be a reference cycle, and the
// engine's `out` is the result itself, so under create_graph the rule's use of it is recorded like any other.
// A std::function would put each op's closure (its captured tensors and shapes) in a heap allocation of its own;
// this keeps it in a block from the small-object lists.
class BackwardFn {
 public:
  BackwardFn() = default;
  BackwardFn(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): "no backward", as for std::function
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, BackwardFn> &&
                                                    (std::is_invocable_r_v<TensorList, F&, const Tensor&> ||
                                                     std::is_invocable_r_v<TensorList, F&, const Tensor&, const Tensor&>)>>
  BackwardFn(F&& f)  // NOLINT(google-explicit-constructor): ops pass their lambdas straight to record_op
      : closure_(std::allocate_shared<Closure<std::decay_t<F>>>(PoolAllocator<Closure<std::decay_t<F>>>(),
                                                                std::forward<F>(f))) {}

  TensorList operator()(const Tensor& grad_out, const Tensor& out) const {
    if (!closure_) throw std::logic_error("BackwardFn: called without a backward function (released or never set)");
    return closure_->call(grad_out, out);
  }
  explicit operator bool() const { return closure_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual TensorList call(const Tensor& grad_out, const Tensor& out) = 0;
  };
  template <typename F>
  struct Closure final : Base {
    explicit Closure(F fn) : f(std::move(fn)) {}
    TensorList call(const Tensor& grad_out, const Tensor& out) override {
      if constexpr (std::is_invocable_r_v<TensorList, F&, const Tensor&, const Tensor&>) return f(grad_out, out);
      else return f(grad_out);
    }
    F f;
  };
  std::shared_ptr<Base> closure_;
};

struct Node {
  std::string name;            // the op, for error messages and graph dumps
  TensorList inputs;           // edges to the tensors this op read
  BackwardFn backward;         // null once the graph has been released
  bool released = false;
  double grad_norm = -1;       // 2-norm of the gradient that reached this op's output, when backward recorded it
  std::source_location where;  // the call that created the op (the user's line, for the public ops)

  Node(std::string n, TensorList in, BackwardFn fn, std::source_location w)
      : name(std::move(n)), inputs(std::move(in)), backward(std::move(fn)), where(w) {}
  // Frees long chains iteratively: a recursive release of a 100k-node chain would overflow the stack.
  ~Node();
};

// --- the no-grad switch: thread-local and scoped, a field of the execution context (core/execution_context.h) ---
bool grad_enabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Sets grad mode for its lifetime, either way (NoGradGuard is the usual case: off). The engine sets it to
// create_graph while a backward runs, so rules record a graph exactly when one was asked for.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// --- anomaly detection: a second scoped, thread-local switch, off by default ---
// While a DetectAnomalyGuard is alive, every op's result and every gradient backward computes is scanned for NaN
// and Inf; the first one found throws AnomalyError naming the op, the line that created it, and its inputs'
// shapes and value ranges (for backward, the forward op whose gradient went bad). Off, it costs one branch per op.
bool anomaly_detection_enabled();

class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// --- a leaf's gradient is final: thread state, scoped ---
// While an OnLeafGradient is alive on this thread, a backward pass that adds into leaves' gradients (backward(), not
// grad()) calls on_leaf(leaf) right after adding into leaf.grad(), once per leaf and pass: PyTorch's
// post-accumulate-grad hook, for every leaf at once. The data-parallel step (train/gradient_tree.h) uses it to add a
// parameter's gradients over its shards as soon as each is final, instead of holding every shard's to the end.
// An empty on_leaf: no calls in its scope. Not part of the execution context (core/execution_context.h): a pass
// runs on the thread that starts it.
class OnLeafGradient {
 public:
  explicit OnLeafGradient(std::function<void(const Tensor& leaf)> on_leaf);
  ~OnLeafGradient();
  OnLeafGradient(const OnLeafGradient&) = delete;
  OnLeafGradient& operator=(const OnLeafGradient&) = delete;

 private:
  std::function<void(const Tensor&)> on_leaf_;
  const std::function<void(const Tensor&)>* previous_;
};

struct AnomalyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True when grad mode is on and any of the inputs requires grad: the op must then record itself.
bool needs_graph(std::initializer_list<const Tensor*> inputs);
bool needs_graph(std::span<const Tensor> inputs);  // a TensorList, or an op's inputs as an array

// True when record_op would return an op's result untouched: no node is needed and anomaly detection is off.
// record_fused checks it before building record_op's arguments, so that under no_grad (a decoding step) a fused op
// builds none of them: not the list of inputs, not the closure with the tensors its rule captures.
bool records_nothing(std::span<const Tensor> inputs);

// Attaches a node to `out` when grad mode is on and an input requires grad; returns `out`.
// The backward function must not capture `out` itself (that would be a reference cycle): capture
// `out.detach()` when backward needs the result.
// `where` is the op's creation site, for anomaly reports and graph dumps.
Tensor record_op(Tensor out, const char* name, TensorList inputs, BackwardFn backward,
                 std::source_location where = std::source_location::current());

// The same for a rule passed as a lambda (every op's case): the BackwardFn that holds the lambda (a block from the
// small-object lists) is made only when a node will keep it, so an op under no_grad (a decoding step's every op)
// makes none.
template <typename F>
  requires(std::is_invocable_r_v<TensorList, F&, const Tensor&> ||
           std::is_invocable_r_v<TensorList, F&, const Tensor&, const Tensor&>)
Tensor record_op(Tensor out, const char* name, TensorList inputs, F&& backward,
                 std::source_location where = std::source_location::current()) {
  if (!anomaly_detection_enabled() && !needs_graph(inputs)) return out;
  return record_op(std::move(out), name, std::move(inputs), BackwardFn(std::forward<F>(backward)), where);
}

// The engine behind Tensor::backward(). With record_grad_norms, every node keeps the 2-norm of the gradient that
// flowed into its output (for graph dumps and gradient-health tools); it costs one pass over each gradient.
// With create_graph, the rules' own computations are recorded: the gradients left in .grad carry a graph and can
// be differentiated again (the graph is then kept, as if retain_graph).
void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph, bool record_grad_norms = false,
                  bool create_graph = false);

namespace autograd {

// The gradients of `outputs` with respect to `inputs`, returned instead of added to .grad (libtorch's
// torch::autograd::grad). grad_outputs: one per output, shaped like it; an undefined entry (or an empty list)
// means ones for a one-element output. retain_graph defaults to create_graph. With create_graph the returned
// gradients carry a graph of their own and can be differentiated again, to any order. An input the outputs do
// not depend on is an error unless allow_unused, which gives an undefined tensor for it.
// outputs: any shapes  inputs: tensors that require grad -> one gradient per input, shaped like it
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

// True while a backward rule runs on this thread in a pass that will not run it again: the pass releases each node
// right after its rule (neither retain_graph nor create_graph), so the tensors the rule saved die with it and the
// rule may write its gradient into one of them. cross_entropy writes dlogits [N, V] over the probabilities [N, V]
// it kept: at GPT-2's vocabulary that is the largest buffer of a step, and one fewer of them is the step's peak.
// False outside backward.
bool rule_runs_once();

}  // namespace autograd

// The backward of a fused op while create_graph records a graph. A fused kernel's backward is a closed form on raw
// buffers and records nothing; this differentiates the op's readable definition instead, re-run on the same inputs,
// so the gradient carries a graph and can be differentiated again. g: shaped like the definition's result ->
// one gradient per input (undefined where that input does not require grad).
using Definition = std::function<Tensor(const TensorList&)>;
TensorList differentiate_definition(const Definition& definition, const TensorList& inputs, const Tensor& g);

// The node of a fused op, written once for all of them (layer_norm, gelu_tanh, linear, attention, cross_entropy).
// A fused op then declares only its three parts:
//   if (!fast_path(x)) return x_definition(x, ...);              // the truth, in ops (float64, reference mode)
//   Tensor y = kernels::x_forward(x, ...);                       // the shortcut
//   return record_fused(y, "x", {x, ...}, definition, kernel_backward, where);
// The node's rule is the kernel's closed-form backward, kernel_backward(g) or kernel_backward(g, out) (one gradient
// per input, as record_op's rule), except under create_graph (grad mode is on while the rule runs): a closed form on
// raw buffers records nothing, so its gradient could not be differentiated again, and the rule returns the gradient
// of `definition` (TensorList in -> the op's output, in ops) re-run on the same inputs instead.
// Under no_grad with anomaly detection off (records_nothing), `out` comes back before anything is built: no list of
// inputs and no closure, so a decoding step's fused ops allocate nothing for the graph.
// inputs: the op's differentiable inputs, in the definition's order (undefined for an absent bias).
template <std::size_t N, typename Def, typename KernelBackward>
Tensor record_fused(Tensor out, const char* name, const Tensor (&inputs)[N], Def definition,
                    KernelBackward kernel_backward, std::source_location where) {
  if (records_nothing(inputs)) return out;
  auto rule = [in = std::to_array(inputs), definition = std::move(definition),
               kernel_backward = std::move(kernel_backward)](const Tensor& g, const Tensor& result) -> TensorList {
    if (grad_enabled())  // create_graph: the definition's own graph, differentiable again
      return differentiate_definition(definition, TensorList(in.begin(), in.end()), g);
    if constexpr (std::is_invocable_v<const KernelBackward&, const Tensor&, const Tensor&>)
      return kernel_backward(g, result);
    else
      return kernel_backward(g);
  };
  return record_op(std::move(out), name, TensorList(std::begin(inputs), std::end(inputs)), std::move(rule), where);
}

}  // namespace cppgrad
