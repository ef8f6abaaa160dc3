// Gradient-check cases of reductions (core/ops/reduce.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/reduce.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> reduce_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("SumAll", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return sum(in[0]); }, Inputs{leaf({2, 3}, seed + 23)}}; });
  check("SumDims", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sum(in[0], {0, 2}); }, Inputs{leaf({2, 3, 4}, seed + 24)}};
  });
  check("SumKeepdim", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sum(in[0], {1}, true); }, Inputs{leaf({2, 3, 4}, seed + 25)}};
  });
  check("MeanAll", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mean(in[0]); }, Inputs{leaf({2, 3}, seed + 26)}};
  });
  check("MeanDims", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mean(in[0], {-1}, true); }, Inputs{leaf({2, 3, 4}, seed + 27)}};
  });
  check("Max", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return max(in[0], 1); }, Inputs{leaf({2, 5, 3}, seed + 28)}};
  });
  check("MaxKeepdim", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return max(in[0], -1, true); }, Inputs{leaf({3, 4}, seed + 29)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
