// Gradient-check cases of matmul and linear (core/ops/matmul.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/matmul.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> matmul_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("Linear", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear(in[0], in[1], in[2]); },
                    Inputs{leaf({2, 3, 4}, seed + 300), leaf({5, 4}, seed + 301), leaf({5}, seed + 302)}};
  });
  check("LinearWithoutBias", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear(in[0], in[1]); },
                    Inputs{leaf({3, 4}, seed + 303), leaf({2, 4}, seed + 304)}};
  });
  check("LinearTransposedInputAndWeight", [](std::uint64_t seed) {
    // x and W as transposed views: x is copied to rows, W is read in place through its strides.
    return Prepared{[](const Inputs& in) { return linear(in[0].t(), in[1].t(), in[2]); },
                    Inputs{leaf({4, 3}, seed + 305), leaf({4, 2}, seed + 306), leaf({2}, seed + 307)}};
  });
  check("LinearRelu", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear_relu(in[0], in[1], in[2]); },
                    Inputs{leaf({2, 3, 4}, seed + 308), leaf({5, 4}, seed + 309), leaf({5}, seed + 310)}};
  });
  check("LinearReluWithoutBias", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear_relu(in[0], in[1]); },
                    Inputs{leaf({3, 4}, seed + 311), leaf({6, 4}, seed + 312)}};
  });
  check("Matmul2D", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({3, 4}, seed + 30), leaf({4, 2}, seed + 31)}};
  });
  check("MatmulVectorMatrix", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({4}, seed + 32), leaf({4, 3}, seed + 33)}};
  });
  check("MatmulMatrixVector", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({3, 4}, seed + 34), leaf({4}, seed + 35)}};
  });
  check("MatmulDot", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({5}, seed + 36), leaf({5}, seed + 37)}};
  });
  check("MatmulBatched", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 3, 4}, seed + 38), leaf({2, 4, 2}, seed + 39)}};
  });
  check("MatmulBatchedBroadcast", [](std::uint64_t seed) {
    // (2, 1, 3, 5) @ (2, 5, 4) -> (2, 2, 3, 4): the batch dims broadcast, so b's gradient sums over a's batch.
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 1, 3, 5}, seed + 40), leaf({2, 5, 4}, seed + 41)}};
  });
  check("MatmulBatchedTimesMatrix", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 3, 4}, seed + 42), leaf({4, 2}, seed + 43)}};
  });
  check("MatmulTransposedView", [](std::uint64_t seed) {
    // a @ b^T with b^T a non-contiguous view, as attention computes q @ k^T.
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1].transpose(-2, -1)); },
                    Inputs{leaf({2, 3, 6}, seed + 44), leaf({2, 5, 6}, seed + 45)}};
  });
  check("MatmulBothTransposed", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0].t(), in[1].t()); },
                    Inputs{leaf({4, 3}, seed + 46), leaf({2, 4}, seed + 47)}};
  });
  check("MatmulSlicedView", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0].slice(1, 0, 6, 2), in[1]); },
                    Inputs{leaf({3, 6}, seed + 48), leaf({3, 2}, seed + 49)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
