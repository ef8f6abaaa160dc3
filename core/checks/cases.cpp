#include "core/checks/cases.h"

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/elementwise.h"

namespace cppgrad::checks {

// A float64 leaf with values uniform in [lo, hi), requiring grad.
Tensor leaf(const Shape& shape, std::uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  Tensor t = add(mul(Tensor::rand(shape, gen, DType::Float64), hi - lo), lo);
  t.set_requires_grad(true);
  return t;
}

// Values whose magnitude is at least `gap` (away from the kinks of relu, max, ...).
Tensor leaf_away_from_zero(const Shape& shape, std::uint64_t seed, double gap) {
  Generator gen(seed);
  Tensor t = Tensor::rand(shape, gen, DType::Float64);
  double* p = t.mutable_data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = (p[i] < 0.5 ? -1.0 : 1.0) * (gap + p[i]);
  t.set_requires_grad(true);
  return t;
}

std::vector<GradcheckCase> op_cases() {
  std::vector<GradcheckCase> all;
  for (auto group : {elementwise_cases, reduce_cases, matmul_cases, softmax_cases, attention_cases, select_cases,
                     norm_cases, views_cases})
    for (GradcheckCase& c : group()) all.push_back(std::move(c));
  return all;
}

// square with a deliberately wrong derivative (x instead of 2x): every checker must refuse it.
GradcheckCase broken_case() {
  return {"BrokenSquare", "broken", [](std::uint64_t seed) {
            auto bad_square = [](const Inputs& in) {
              Tensor x = in[0];
              Tensor saved = x.detach();
              return record_op(mul(saved, saved), "bad_square", {x},
                               [saved](const Tensor& g) { return TensorList{mul(g, saved)}; });
            };
            return Prepared{bad_square, Inputs{leaf({3}, seed + 1)}};
          }};
}

// cube with a right first derivative, 3x^2, computed from a detached x: its value is right, but it records no
// dependence on x, so the second derivative comes out 0 instead of 6x.
GradcheckCase broken_double_backward_case() {
  return {"BrokenCubeDoubleBackward", "broken", [](std::uint64_t seed) {
            auto cube = [](const Inputs& in) {
              Tensor x = in[0];
              Tensor saved = x.detach();
              return record_op(mul(mul(saved, saved), saved), "cube_with_constant_derivative", {x},
                               [saved](const Tensor& g) { return TensorList{mul(g, mul(mul(saved, saved), 3.0))}; });
            };
            return Prepared{cube, Inputs{leaf({3}, seed + 2)}};
          }};
}

std::string describe_inputs(const Prepared& p, std::size_t shown) {
  std::string s;
  for (std::size_t i = 0; i < p.inputs.size() && i < shown; ++i) {
    if (i) s += ' ';
    s += shape_str(p.inputs[i].shape());
  }
  if (p.inputs.size() > shown) s += " +" + std::to_string(p.inputs.size() - shown) + " params";
  return s;
}

}  // namespace cppgrad::checks
