#pragma once
// Finite-difference gradient checking, as torch.autograd.gradcheck: float64 inputs, central differences,
// the full Jacobian compared column by column against the one backward computes row by row.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

struct GradcheckOptions {
  double eps = 1e-6;   // step of the central difference
  double atol = 1e-5;  // |analytical - numerical| <= atol + rtol * |numerical|, PyTorch's defaults
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;  // over every Jacobian entry of every input
  double max_rel_error = 0;  // over the entries whose finite-difference value exceeds atol
  // The entry furthest past its tolerance, or closest to it when all pass: "input 0 [1, 2] / out [3]"
  // (gradgradcheck: "input 0 [1] / grad of input 0 [2]", or "v [1] / ..." for the upstream gradient).
  std::string worst;
  // What failed and where: a Jacobian failure names the worst entry (input, its element, output element, both
  // values); gradgradcheck's failures say "second-derivative" / "second derivative".
  std::string message;
};

// f maps the inputs to one tensor (any shape). Every floating input with requires_grad is checked; inputs
// must be float64. Besides the Jacobian it checks that a zero upstream gradient gives zero gradients and
// that backward is deterministic (two runs agree exactly).
using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;
GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

// Second derivatives, as torch.autograd.gradgradcheck: gradcheck of the function (inputs, v) -> the gradients of
// <f(inputs), v> with respect to every checked input (autograd::grad with create_graph), flattened and joined. v is
// a random float64 upstream gradient from `seed`, itself checked as an input, since the gradients depend on it too.
// It catches a backward whose values are right but which records no graph (or a wrong one) under create_graph.
// It does not check the first derivative itself (a wrong backward that records its own wrong formula passes, as in
// PyTorch): run gradcheck for that.
GradcheckResult gradgradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                              const GradcheckOptions& options = {}, std::uint64_t seed = 0);

}  // namespace cppgrad
