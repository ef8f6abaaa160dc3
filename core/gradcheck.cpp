#include "core/gradcheck.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/select.h"

namespace cppgrad {

namespace {

// Every logical index of a shape, in row-major order.
std::vector<std::vector<std::int64_t>> all_indices(const Shape& shape) {
  std::vector<std::vector<std::int64_t>> out;
  const std::int64_t n = numel_of(shape);
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t e = 0; e < n; ++e) {
    out.push_back(idx);
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

std::string index_str(const std::vector<std::int64_t>& idx) { return shape_str(Shape(idx)); }

// Runs f and backward(upstream); returns each checked input's gradient as a flat row-major vector (zeros when
// no gradient reached it).
std::vector<std::vector<double>> backward_grads(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                                                const std::vector<std::size_t>& checked, const Tensor& upstream) {
  for (std::size_t i : checked) inputs[i].zero_grad();
  Tensor out = f(inputs);
  std::vector<std::vector<double>> grads;
  if (out.requires_grad()) out.backward(upstream);
  for (std::size_t i : checked) {
    Tensor g = inputs[i].grad();
    grads.push_back(g.defined() ? g.to_double_vector() : std::vector<double>(inputs[i].numel(), 0.0));
    inputs[i].zero_grad();
  }
  return grads;
}

// The inputs gradcheck perturbs (those requiring grad), refusing float32 and expanded (stride-0) ones.
std::vector<std::size_t> checked_inputs(const std::vector<Tensor>& inputs) {
  std::vector<std::size_t> checked;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    if (inputs[i].dtype() != DType::Float64)
      throw std::invalid_argument("gradcheck: input " + std::to_string(i) + " is " + dtype_name(inputs[i].dtype()) +
                                  "; finite differences need float64 (eps 1e-6 is below float32's precision)");
    for (auto s : inputs[i].strides())
      if (s == 0)
        throw std::invalid_argument("gradcheck: input " + std::to_string(i) + " " + shape_str(inputs[i].shape()) +
                                    " has a zero stride (an expanded view): perturbing one element would move many");
    checked.push_back(i);
  }
  if (checked.empty()) throw std::invalid_argument("gradcheck: no input has requires_grad");
  return checked;
}

using Jacobian = std::vector<std::vector<std::vector<double>>>;  // [input][input element][output element]

// One column per input element: (f(x + eps) - f(x - eps)) / (2 eps).
Jacobian numerical_jacobian(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                            const std::vector<std::size_t>& checked, std::int64_t n_out, double eps) {
  Jacobian numerical(checked.size());
  NoGradGuard no_grad;
  for (std::size_t c = 0; c < checked.size(); ++c) {
    const Tensor& x = inputs[checked[c]];
    for (const auto& idx : all_indices(x.shape())) {
      const double orig = x.at(idx);
      x.set(idx, orig + eps);
      const std::vector<double> plus = f(inputs).to_double_vector();
      x.set(idx, orig - eps);
      const std::vector<double> minus = f(inputs).to_double_vector();
      x.set(idx, orig);
      std::vector<double> column(n_out);
      for (std::int64_t j = 0; j < n_out; ++j) column[j] = (plus[j] - minus[j]) / (2 * eps);
      numerical[c].push_back(std::move(column));
    }
  }
  return numerical;
}

// A value as a reader should see it: NaN and infinities by name.
std::string value_str(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

using Index = std::vector<std::int64_t>;

// What a check calls the entries it compares, in its table and in its failure messages. gradcheck's Jacobian is
// d(f's output element) / d(an input element); gradgradcheck's is d(a gradient element) / d(an input element or an
// element of the upstream gradient v), and it says so.
struct Naming {
  std::string mismatch;  // begins a Jacobian failure: "Jacobian mismatch"
  std::string context;   // begins the other failures (zero upstream gradient, determinism): "" at first order
  // One Jacobian entry, by the position of its input among the checked function's inputs, that input's shape and
  // element, and the output element. brief: for a table ("input 0 [1] / out [2]"); else for a sentence.
  std::function<std::string(std::size_t input, const Shape& shape, const Index& in_idx, const Index& out_idx,
                            bool brief)>
      entry;
};

Naming first_order_naming() {
  return {"Jacobian mismatch", "",
          [](std::size_t input, const Shape& shape, const Index& in_idx, const Index& out_idx, bool brief) {
            const std::string in = "input " + std::to_string(input) + " ";
            return brief ? in + index_str(in_idx) + " / out " + index_str(out_idx)
                         : in + shape_str(shape) + " at element " + index_str(in_idx) + ", output element " +
                               index_str(out_idx);
          }};
}

// gradgradcheck's checked function takes f's n inputs and then v; its output is the gradients of f's checked
// inputs, flattened and joined, so an output element [j] is named as the gradient element it is.
Naming second_order_naming(const std::vector<Tensor>& inputs, const std::vector<std::size_t>& checked) {
  struct GradientElement {
    std::size_t input;  // of f
    Index element;      // of that input (and of its gradient)
  };
  std::vector<GradientElement> gradient_element;  // [j]
  for (std::size_t i : checked)
    for (const auto& idx : all_indices(inputs[i].shape())) gradient_element.push_back({i, idx});
  const std::size_t n = inputs.size();
  return {"second-derivative Jacobian mismatch", "second derivative: ",
          [gradient_element, n](std::size_t input, const Shape& shape, const Index& in_idx, const Index& out_idx,
                                bool brief) {
            const auto& [of, element] = gradient_element.at(static_cast<std::size_t>(out_idx.at(0)));
            const std::string grad = "grad of input " + std::to_string(of) + " " + index_str(element);
            const std::string in = input == n ? (brief ? "v " : "the upstream gradient v ")
                                              : "input " + std::to_string(input) + " ";
            return brief ? in + index_str(in_idx) + " / " + grad
                         : in + shape_str(shape) + " at element " + index_str(in_idx) + ", gradient of input " +
                               std::to_string(of) + " at element " + index_str(element);
          }};
}

// Compares the analytical Jacobian, one row per output element (backward from a one-hot upstream gradient),
// with the numerical one, entry by entry. The worst entry is the one furthest past its tolerance (or, when all
// pass, closest to it); a failure names that same entry, so the table's worst element and the FAIL line agree. A
// NaN or Inf on either side fails and is reported as such: its error is infinite, never a NaN that every
// comparison would silently pass over.
void compare_jacobians(const GradcheckFn& f, const std::vector<Tensor>& inputs, const std::vector<std::size_t>& checked,
                       const Jacobian& numerical, const Shape& out_shape, const GradcheckOptions& opt,
                       const Naming& naming, GradcheckResult& result) {
  bool worst_fails = false;
  double worst_ratio = -1;
  std::string worst_sentence;  // the worst entry in words, with both values
  const auto out_indices = all_indices(out_shape);
  std::vector<std::vector<Index>> in_indices;  // [input][element]: for messages
  for (std::size_t i : checked) in_indices.push_back(all_indices(inputs[i].shape()));
  for (std::size_t j = 0; j < out_indices.size(); ++j) {
    Tensor onehot = Tensor::zeros(out_shape, DType::Float64);
    onehot.set(out_indices[j], 1.0);
    const auto rows = backward_grads(f, inputs, checked, onehot);
    for (std::size_t c = 0; c < checked.size(); ++c) {
      for (std::size_t e = 0; e < rows[c].size(); ++e) {
        const double a = rows[c][e], n = numerical[c][e][j];
        const bool finite = std::isfinite(a) && std::isfinite(n);
        const double abs_err = finite ? std::abs(a - n) : std::numeric_limits<double>::infinity();
        const double tol = opt.atol + opt.rtol * std::abs(n);
        const bool fails = !finite || abs_err > tol;
        // > 1: outside the tolerance (0 / 0 is no error: a zero tolerance met exactly)
        const double ratio = !finite ? abs_err : abs_err == 0 ? 0.0 : abs_err / tol;
        if (result.worst.empty() || (fails && !worst_fails) || (fails == worst_fails && ratio > worst_ratio)) {
          worst_fails = fails, worst_ratio = ratio;
          const Shape& shape = inputs[checked[c]].shape();
          result.worst = naming.entry(checked[c], shape, in_indices[c][e], out_indices[j], true);
          if (!finite) result.worst += " (backward " + value_str(a) + ", numerical " + value_str(n) + ")";
          worst_sentence = naming.entry(checked[c], shape, in_indices[c][e], out_indices[j], false) +
                           ": backward gives " + value_str(a) + ", finite differences give " + value_str(n);
        }
        result.max_abs_error = std::max(result.max_abs_error, abs_err);
        if (std::abs(n) > opt.atol || !finite)
          result.max_rel_error = std::max(result.max_rel_error, finite ? abs_err / std::abs(n) : abs_err);
      }
    }
  }
  if (worst_fails) result.ok = false, result.message = naming.mismatch + " for " + worst_sentence;
}

// A zero upstream gradient must give zero gradients; "" when it does.
std::string zero_upstream_problem(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                                  const std::vector<std::size_t>& checked, const Shape& out_shape) {
  const auto rows = backward_grads(f, inputs, checked, Tensor::zeros(out_shape, DType::Float64));
  for (std::size_t c = 0; c < checked.size(); ++c)
    for (double v : rows[c])
      if (v != 0.0)
        return "a zero upstream gradient gave a gradient of " + value_str(v) + " for input " + std::to_string(checked[c]);
  return "";
}

// Backward must be deterministic: the same random upstream gradient twice gives identical gradients.
std::string determinism_problem(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                                const std::vector<std::size_t>& checked, const Shape& out_shape) {
  Generator gen(1234);
  const Tensor upstream = Tensor::randn(out_shape, gen, DType::Float64);
  const auto first = backward_grads(f, inputs, checked, upstream), second = backward_grads(f, inputs, checked, upstream);
  return first == second ? "" : "two backward passes with the same upstream gradient disagree (non-deterministic backward)";
}

// gradcheck, naming what it compares as `naming` says.
GradcheckResult check_jacobian(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opt,
                               const Naming& naming) {
  const std::vector<std::size_t> checked = checked_inputs(inputs);
  Tensor out0;
  {
    NoGradGuard no_grad;
    out0 = f(inputs);
  }
  if (out0.dtype() != DType::Float64)
    throw std::invalid_argument(std::string("gradcheck: the function returned ") + dtype_name(out0.dtype()) +
                                ", expected float64");
  GradcheckResult result;
  compare_jacobians(f, inputs, checked, numerical_jacobian(f, inputs, checked, out0.numel(), opt.eps), out0.shape(),
                    opt, naming, result);
  for (auto problem : {&zero_upstream_problem, &determinism_problem}) {
    if (!result.ok) break;
    if (std::string why = problem(f, inputs, checked, out0.shape()); !why.empty())
      result.ok = false, result.message = naming.context + why;
  }
  return result;
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  return check_jacobian(f, inputs, opt, first_order_naming());
}

GradcheckResult gradgradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opt,
                              std::uint64_t seed) {
  const std::vector<std::size_t> checked = checked_inputs(inputs);
  Tensor out0;
  {
    NoGradGuard no_grad;
    out0 = f(inputs);
  }
  Generator gen(seed + 4321);
  Tensor v = Tensor::randn(out0.shape(), gen, DType::Float64);  // the upstream gradient: [f's output shape]
  v.set_requires_grad(true);
  const std::size_t n = inputs.size();
  // (inputs..., v) -> [sum of the checked inputs' numels]. The gradients are recorded (create_graph) exactly when
  // the caller records: gradcheck's backward passes do, its finite differences (under no-grad) need values only.
  const GradcheckFn first_derivative = [f, checked, n](const std::vector<Tensor>& in) {
    const bool create_graph = grad_enabled();
    GradModeGuard grad_on(true);  // the first derivative itself always needs f's graph
    const std::vector<Tensor> x(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    const Tensor out = f(x);
    std::vector<Tensor> wanted;
    for (std::size_t i : checked) wanted.push_back(x[i]);
    std::vector<Tensor> grads(wanted.size());
    if (out.requires_grad()) grads = autograd::grad({out}, wanted, {in[n]}, true, create_graph, /*allow_unused=*/true);
    std::vector<Tensor> flat;
    for (std::size_t c = 0; c < wanted.size(); ++c)
      flat.push_back((grads[c].defined() ? grads[c] : Tensor::zeros(wanted[c].shape(), DType::Float64)).reshape({-1}));
    return cat(flat, 0);
  };
  std::vector<Tensor> with_v = inputs;
  with_v.push_back(v);
  return check_jacobian(first_derivative, with_v, opt, second_order_naming(inputs, checked));
}

}  // namespace cppgrad
