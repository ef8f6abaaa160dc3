// Gradient-check cases of layer_norm and dropout (core/ops/layer_norm.cpp, core/ops/dropout.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/dropout.h"
#include "core/ops/layer_norm.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> norm_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("LayerNorm", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0], in[1], in[2], 1e-5); },
                    Inputs{leaf({2, 3, 5}, seed + 74, -2, 2), leaf({5}, seed + 75, 0.5, 1.5), leaf({5}, seed + 76)}};
  });
  check("LayerNormWithoutAffine", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0], Tensor(), Tensor(), 1e-5); },
                    Inputs{leaf({3, 4}, seed + 77, -2, 2)}};
  });
  check("LayerNormTransposedInput", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0].t(), in[1], in[2], 1e-5); },
                    Inputs{leaf({4, 3}, seed + 78, -2, 2), leaf({4}, seed + 79, 0.5, 1.5), leaf({4}, seed + 80)}};
  });
  check("Dropout", [](std::uint64_t seed) {
    // A fresh generator with the same seed inside f: every evaluation draws the same mask.
    return Prepared{[seed](const Inputs& in) {
                      Generator gen(seed + 7);
                      return dropout(in[0], 0.4, /*training=*/true, gen);
                    },
                    Inputs{leaf({3, 5}, seed + 81)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
