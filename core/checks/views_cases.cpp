// Gradient-check cases of views and copies (core/ops/views.cpp, core/tensor.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/unary.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> views_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("Transpose", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].transpose(0, 2), 2.0); }, Inputs{leaf({2, 3, 4}, seed + 82)}};
  });
  check("Permute", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].permute({2, 0, 1})); }, Inputs{leaf({2, 3, 4}, seed + 83)}};
  });
  check("Slice", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].slice(1, 1, 3)); }, Inputs{leaf({2, 4}, seed + 84)}};
  });
  check("SliceWithStep", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].slice(0, 0, 5, 2)); }, Inputs{leaf({5, 2}, seed + 85)}};
  });
  check("Select", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].select(1, 2)); }, Inputs{leaf({2, 3}, seed + 86)}};
  });
  check("Unsqueeze", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].unsqueeze(1), in[1]); },
                    Inputs{leaf({2, 3}, seed + 87), leaf({2, 2, 3}, seed + 88)}};
  });
  check("Squeeze", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].squeeze(1)); }, Inputs{leaf({2, 1, 3}, seed + 89)}};
  });
  check("Expand", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].expand({4, 2, 3})); }, Inputs{leaf({2, 1}, seed + 90)}};
  });
  check("View", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].view({3, -1})); }, Inputs{leaf({2, 3, 2}, seed + 91)}};
  });
  check("ReshapeNonContiguous", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].t().reshape({-1})); }, Inputs{leaf({3, 4}, seed + 92)}};
  });
  check("Contiguous", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return in[0].t().contiguous(); }, Inputs{leaf({3, 2}, seed + 93)}};
  });
  check("Clone", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].clone(), in[0]); }, Inputs{leaf({3}, seed + 94)}};
  });
  check("NonContiguousLeaf", [](std::uint64_t seed) {
    // The leaf itself is a transposed view of its storage: the checker perturbs it through its strides.
    Tensor base = leaf({3, 4}, seed + 95).detach();
    Tensor x = base.t();
    x.set_requires_grad(true);
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{x, leaf({3, 2}, seed + 96)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
