#include "core/gradcheck.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops.h"

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

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<std::size_t> checked;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    if (inputs[i].dtype() != DType::Float64)
      throw std::invalid_argument("gradcheck: input " + std::to_string(i) + " is " + dtype_name(inputs[i].dtype()) +
                                  "; finite differences need float64 (eps 1e-6 is below float32's precision)");
    for (auto s : inputs[i].strides())
      if (s == 0)
        throw std::invalid_argument("gradcheck: input " + std::to_string(i) +
                                    " has a zero stride (an expanded view): perturbing one element would move many");
    checked.push_back(i);
  }
  if (checked.empty()) throw std::invalid_argument("gradcheck: no input has requires_grad");

  GradcheckResult result;
  Tensor out0;
  {
    NoGradGuard no_grad;
    out0 = f(inputs);
  }
  if (out0.dtype() != DType::Float64)
    throw std::invalid_argument(std::string("gradcheck: the function returned ") + dtype_name(out0.dtype()) +
                                ", expected float64");
  const std::int64_t n_out = out0.numel();

  // Numerical Jacobian, one column per input element: (f(x + eps) - f(x - eps)) / (2 eps).
  std::vector<std::vector<std::vector<double>>> numerical(checked.size());  // [input][in_elem][out_elem]
  for (std::size_t c = 0; c < checked.size(); ++c) {
    const Tensor& x = inputs[checked[c]];
    for (const auto& idx : all_indices(x.shape())) {
      const double orig = x.at(idx);
      std::vector<double> plus, minus;
      {
        NoGradGuard no_grad;
        x.set(idx, orig + opt.eps);
        plus = f(inputs).to_double_vector();
        x.set(idx, orig - opt.eps);
        minus = f(inputs).to_double_vector();
        x.set(idx, orig);
      }
      std::vector<double> column(n_out);
      for (std::int64_t j = 0; j < n_out; ++j) column[j] = (plus[j] - minus[j]) / (2 * opt.eps);
      numerical[c].push_back(std::move(column));
    }
  }

  // Analytical Jacobian, one row per output element: backward from a one-hot upstream gradient.
  double worst_ratio = -1;
  const auto out_indices = all_indices(out0.shape());
  std::vector<std::vector<std::vector<std::int64_t>>> in_indices;  // [input][element]: for messages
  for (std::size_t i : checked) in_indices.push_back(all_indices(inputs[i].shape()));
  for (std::int64_t j = 0; j < n_out; ++j) {
    Tensor onehot = Tensor::zeros(out0.shape(), DType::Float64);
    onehot.set(out_indices[j], 1.0);
    const auto rows = backward_grads(f, inputs, checked, onehot);
    for (std::size_t c = 0; c < checked.size(); ++c) {
      for (std::size_t e = 0; e < rows[c].size(); ++e) {
        const double a = rows[c][e], n = numerical[c][e][j];
        const double abs_err = std::abs(a - n), rel_err = abs_err / std::max(std::abs(n), 1e-300);
        const double ratio = abs_err / (opt.atol + opt.rtol * std::abs(n));  // > 1: outside the tolerance
        if (ratio > worst_ratio || result.worst.empty()) {
          worst_ratio = ratio;
          result.worst = "input " + std::to_string(checked[c]) + " " + index_str(in_indices[c][e]) + " / out " +
                         index_str(out_indices[j]);
        }
        result.max_abs_error = std::max(result.max_abs_error, abs_err);
        if (std::abs(n) > opt.atol) result.max_rel_error = std::max(result.max_rel_error, rel_err);
        if (!(abs_err <= opt.atol + opt.rtol * std::abs(n)) && result.ok) {
          std::ostringstream os;
          os.precision(10);
          os << "Jacobian mismatch for input " << checked[c] << " " << shape_str(inputs[checked[c]].shape())
             << " at element " << index_str(in_indices[c][e]) << ", output element " << index_str(out_indices[j])
             << ": backward gives " << a << ", finite differences give " << n;
          result.ok = false;
          result.message = os.str();
        }
      }
    }
  }

  // A zero upstream gradient must give zero gradients.
  const auto zero_rows = backward_grads(f, inputs, checked, Tensor::zeros(out0.shape(), DType::Float64));
  for (std::size_t c = 0; c < checked.size() && result.ok; ++c)
    for (double v : zero_rows[c])
      if (v != 0.0) {
        result.ok = false;
        result.message = "a zero upstream gradient gave a non-zero gradient for input " + std::to_string(checked[c]);
        break;
      }

  // Backward must be deterministic: the same random upstream gradient twice gives identical gradients.
  Generator gen(1234);
  Tensor upstream = Tensor::randn(out0.shape(), gen, DType::Float64);
  const auto first = backward_grads(f, inputs, checked, upstream);
  const auto second = backward_grads(f, inputs, checked, upstream);
  if (result.ok && first != second) {
    result.ok = false;
    result.message = "two backward passes with the same upstream gradient disagree (non-deterministic backward)";
  }
  return result;
}

}  // namespace cppgrad
