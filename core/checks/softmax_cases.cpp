// Gradient-check cases of the softmax family (core/ops/softmax.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> softmax_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("Softmax", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0], -1); }, Inputs{leaf({2, 3, 5}, seed + 50, -2, 2)}};
  });
  check("SoftmaxDim0", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0], 0); }, Inputs{leaf({4, 3}, seed + 51, -2, 2)}};
  });
  check("SoftmaxTransposedInput", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0].t(), -1); }, Inputs{leaf({4, 3}, seed + 52, -2, 2)}};
  });
  check("SoftmaxWithMaskedEntries", [](std::uint64_t seed) {
    // Some (not all) entries of each row at -inf: those get zero weight and zero gradient.
    Tensor mask = Tensor::from_vector<bool>({false, true, false, true, false, false, false, true}, {2, 4});
    return Prepared{[mask](const Inputs& in) { return softmax(masked_fill(in[0], mask, -INFINITY), -1); },
                    Inputs{leaf({2, 4}, seed + 53)}};
  });
  check("LogSoftmax", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log_softmax(in[0], -1); }, Inputs{leaf({2, 3, 5}, seed + 54, -2, 2)}};
  });
  check("LogSoftmaxDim1", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log_softmax(in[0], 1); }, Inputs{leaf({2, 4, 3}, seed + 55, -2, 2)}};
  });
  check("CrossEntropy", [](std::uint64_t seed) {
    Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 1, 2}, {4});
    return Prepared{[target](const Inputs& in) { return cross_entropy(in[0], target); },
                    Inputs{leaf({4, 5}, seed + 56, -2, 2)}};
  });
  check("CrossEntropyIgnoreIndex", [](std::uint64_t seed) {
    Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 0, 2, 4, 0}, {2, 3});
    return Prepared{[target](const Inputs& in) { return cross_entropy(in[0], target, /*ignore_index=*/0); },
                    Inputs{leaf({2, 3, 5}, seed + 57, -2, 2)}};
  });
  check("LinearCrossEntropy", [](std::uint64_t seed) {
    Tensor target = Tensor::from_vector<std::int64_t>({0, 3, -100, 2, 4, 1}, {2, 3});
    return Prepared{[target](const Inputs& in) { return linear_cross_entropy(in[0], in[1], target); },
                    Inputs{leaf({2, 3, 4}, seed + 58, -2, 2), leaf({5, 4}, seed + 59, -1, 1)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
