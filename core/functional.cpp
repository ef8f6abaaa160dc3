#include "core/functional.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/autograd.h"
#include "core/ops/select.h"
#include "core/ops/views.h"

namespace cppgrad::autograd::functional {

namespace {

std::string describe(const Tensor& t) {
  return t.defined() ? shape_str(t.shape()).append(" ").append(dtype_name(t.dtype())) : std::string("undefined");
}

// Only floating tensors have derivatives; an undefined input is a caller's slip worth naming.
void check_inputs(const std::vector<Tensor>& inputs, const char* api) {
  if (inputs.empty()) throw std::invalid_argument(std::string(api).append(": got no inputs; pass the tensors f reads"));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() || !is_floating(inputs[i].dtype()))
      throw std::invalid_argument(std::string(api).append(": input ").append(std::to_string(i)).append(" is ")
                                      .append(describe(inputs[i]))
                                      .append("; only floating tensors (float32, float64) have derivatives: "
                                              "convert it with .to(DType::Float64)"));
}

// v pairs with `like` (an input, or f's output) and must match it in shape and dtype.
void check_like(const Tensor& v, const Tensor& like, const char* api, const std::string& v_name,
                const std::string& like_name) {
  if (!v.defined() || v.shape() != like.shape() || v.dtype() != like.dtype())
    throw std::invalid_argument(std::string(api).append(": ").append(v_name).append(" is ").append(describe(v))
                                    .append(" but must be shaped like ").append(like_name).append(", ")
                                    .append(describe(like)));
}

// v: one tensor per input, v[i] shaped like inputs[i].
void check_each_like(const std::vector<Tensor>& v, const std::vector<Tensor>& inputs, const char* api) {
  if (v.size() != inputs.size())
    throw std::invalid_argument(std::string(api).append(": got ").append(std::to_string(v.size()))
                                    .append(" tensors in v for ").append(std::to_string(inputs.size()))
                                    .append(" inputs; pass one per input, shaped like it"));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = std::string("[").append(std::to_string(i)).append("]");
    check_like(v[i], inputs[i], api, std::string("v").append(at), std::string("inputs").append(at));
  }
}

// Calls f, refusing an output nothing can be differentiated through.
Tensor call(const Fn& f, const std::vector<Tensor>& xs, const char* api) {
  Tensor output = f(xs);
  if (!output.defined() || !is_floating(output.dtype()))
    throw std::invalid_argument(std::string(api).append(": f returned ").append(describe(output))
                                    .append("; it must return one floating tensor computed from its inputs"));
  return output;
}

// hvp and hessian differentiate a loss: one value.
void check_one_element(const Tensor& value, const char* api) {
  if (value.numel() != 1)
    throw std::invalid_argument(std::string(api).append(": f must return one element (a loss) but returned shape ")
                                    .append(shape_str(value.shape()))
                                    .append("; for a vector-valued f use jacobian, vjp or jvp"));
}

// The tensors f is called with (PyTorch's _grad_preprocess): detached copies that require grad, so the graph starts
// here and the caller's tensors are untouched. With create_graph, an input that already requires grad goes through
// a recorded identity instead, so the results stay differentiable with respect to it (a jacobian of a function that
// itself calls vjp with create_graph needs that).
std::vector<Tensor> prepare_inputs(const std::vector<Tensor>& inputs, bool create_graph) {
  std::vector<Tensor> xs;
  for (const Tensor& x : inputs) {
    if (create_graph && x.requires_grad()) {
      xs.push_back(reshape(x, x.shape()));
      continue;
    }
    Tensor copy = x.detach();
    copy.set_requires_grad(true);
    xs.push_back(std::move(copy));
  }
  return xs;
}

// sum_k <outputs[k], seeds[k]> differentiated with respect to each input, as autograd::grad, but zeros where no
// output depends on an input (and everywhere when no output requires grad: f is constant in its inputs).
// seeds[k]: shaped like outputs[k] -> one tensor per input, shaped like it. The graph is kept (jacobian runs one
// pass per row over it); it goes when the tensors holding it do.
std::vector<Tensor> grads_or_zeros(const std::vector<Tensor>& outputs, const std::vector<Tensor>& seeds,
                                   const std::vector<Tensor>& inputs, bool create_graph) {
  std::vector<Tensor> live_outputs, live_seeds;
  for (std::size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k].requires_grad()) {
      live_outputs.push_back(outputs[k]);
      live_seeds.push_back(seeds[k]);
    }
  std::vector<Tensor> grads(inputs.size());
  if (!live_outputs.empty())
    grads = autograd::grad(live_outputs, inputs, live_seeds, /*retain_graph=*/true, create_graph,
                           /*allow_unused=*/true);
  for (std::size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = Tensor::zeros(inputs[i].shape(), inputs[i].dtype());
  return grads;
}

}  // namespace

VjpResult vjp(const Fn& f, const std::vector<Tensor>& inputs, const Tensor& v, bool create_graph) {
  GradModeGuard grad_on(true);
  check_inputs(inputs, "vjp");
  const std::vector<Tensor> xs = prepare_inputs(inputs, create_graph);
  const Tensor output = call(f, xs, "vjp");
  check_like(v, output, "vjp", "v", "f's output");
  std::vector<Tensor> vjps = grads_or_zeros({output}, {v}, xs, create_graph);
  return {create_graph ? output : output.detach(), std::move(vjps)};
}

// J v from reverse passes alone, the double-vjp trick. For a dummy u shaped like the output, the vjp
// g[i](u) = J_i^T u is linear in u, so sum_i <g[i](u), v[i]> = u^T (sum_i J_i v[i]), whose gradient with respect
// to u is sum_i J_i v[i] = J v, whatever u's value (zeros here). The first pass runs with create_graph so that g
// records how it depends on u; the second differentiates <g, v> with respect to u. It costs two reverse passes
// where forward mode would need one forward pass, and needs no forward-mode rules.
JvpResult jvp(const Fn& f, const std::vector<Tensor>& inputs, const std::vector<Tensor>& v, bool create_graph) {
  GradModeGuard grad_on(true);
  check_inputs(inputs, "jvp");
  check_each_like(v, inputs, "jvp");
  const std::vector<Tensor> xs = prepare_inputs(inputs, create_graph);
  const Tensor output = call(f, xs, "jvp");
  Tensor u = Tensor::zeros(output.shape(), output.dtype());  // u: shaped like the output
  u.set_requires_grad(true);
  const std::vector<Tensor> g = grads_or_zeros({output}, {u}, xs, /*create_graph=*/true);  // g[i]: like inputs[i]
  Tensor jv = grads_or_zeros(g, v, {u}, create_graph)[0];                                 // jv: like the output
  return {create_graph ? output : output.detach(), std::move(jv)};
}

HvpResult hvp(const Fn& f, const std::vector<Tensor>& inputs, const std::vector<Tensor>& v) {
  GradModeGuard grad_on(true);
  check_inputs(inputs, "hvp");
  check_each_like(v, inputs, "hvp");
  const std::vector<Tensor> xs = prepare_inputs(inputs, /*create_graph=*/false);
  const Tensor value = call(f, xs, "hvp");
  check_one_element(value, "hvp");
  // g[i] = df / d inputs[i], recorded (create_graph) so that it can be differentiated again
  const std::vector<Tensor> g = grads_or_zeros({value}, {Tensor::ones(value.shape(), value.dtype())}, xs, true);
  // d/d inputs[i] of sum_j <g[j], v[j]> = sum_j H_ji v[j] = (H v)[i]: v is a constant and H symmetric
  return {value.detach(), grads_or_zeros(g, v, xs, /*create_graph=*/false)};
}

std::vector<Tensor> jacobian(const Fn& f, const std::vector<Tensor>& inputs) {
  GradModeGuard grad_on(true);
  check_inputs(inputs, "jacobian");
  const std::vector<Tensor> xs = prepare_inputs(inputs, /*create_graph=*/false);
  const Tensor output = call(f, xs, "jacobian");
  // Row k of every J_i is the vjp with v = e_k, the k-th one-hot of the output: rows[i][k] shaped like inputs[i].
  std::vector<std::vector<Tensor>> rows(inputs.size());
  for (std::int64_t k = 0; k < output.numel(); ++k) {
    std::vector<double> one_hot(static_cast<std::size_t>(output.numel()), 0.0);
    one_hot[static_cast<std::size_t>(k)] = 1.0;
    const Tensor e_k = Tensor::from_vector(one_hot, output.shape(), output.dtype());
    const std::vector<Tensor> row = grads_or_zeros({output}, {e_k}, xs, /*create_graph=*/false);
    for (std::size_t i = 0; i < inputs.size(); ++i) rows[i].push_back(row[i]);
  }
  std::vector<Tensor> jacobians;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Shape shape = output.shape();  // [output.shape..., inputs[i].shape...]
    shape.insert(shape.end(), inputs[i].shape().begin(), inputs[i].shape().end());
    jacobians.push_back(rows[i].empty() ? Tensor::zeros(shape, inputs[i].dtype())  // an empty output
                                        : stack(rows[i], 0).reshape(shape));       // [numel(out), in...] -> shape
  }
  return jacobians;
}

Tensor hessian(const Fn& f, const Tensor& input) {
  check_inputs({input}, "hessian");
  // f's gradient as a function of its own: with create_graph it records how it was computed from x, so jacobian
  // can differentiate it. x: {like input} -> like input.
  const Fn gradient = [&f](const std::vector<Tensor>& x) {
    const Tensor value = call(f, x, "hessian");
    check_one_element(value, "hessian");
    return grads_or_zeros({value}, {Tensor::ones(value.shape(), value.dtype())}, x, /*create_graph=*/true)[0];
  };
  return jacobian(gradient, {input})[0];
}

}  // namespace cppgrad::autograd::functional
