// Gradient-check cases of elementwise arithmetic and math (core/ops/elementwise.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/elementwise.h"
#include "core/ops/unary.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> elementwise_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("Add", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 1), leaf({2, 3}, seed + 2)}};
  });
  check("AddBroadcast", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], in[1]); }, Inputs{leaf({2, 1, 3}, seed + 1), leaf({4, 1}, seed + 2)}};
  });
  check("Sub", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 3), leaf({2, 3}, seed + 4)}};
  });
  check("SubBroadcast", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(in[0], in[1]); }, Inputs{leaf({3}, seed + 3), leaf({2, 3}, seed + 4)}};
  });
  check("Mul", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 5), leaf({2, 3}, seed + 6)}};
  });
  check("MulBroadcast", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], in[1]); }, Inputs{leaf({2, 1, 4}, seed + 5), leaf({3, 1}, seed + 6)}};
  });
  check("MulSameTensorTwice", [](std::uint64_t seed) {
    // x * x: both uses must contribute (2x).
    return Prepared{[](const Inputs& in) { return mul(in[0], in[0]); }, Inputs{leaf({4}, seed + 7)}};
  });
  check("Div", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 7), leaf({2, 3}, seed + 8, 0.5, 2.0)}};
  });
  check("DivBroadcast", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 7), leaf({1, 3}, seed + 8, 0.5, 2.0)}};
  });
  check("BroadcastMulAdd", [](std::uint64_t seed) {
    // The golden case's expression: a * b + c with three different broadcast shapes.
    return Prepared{[](const Inputs& in) { return add(mul(in[0], in[1]), in[2]); },
                    Inputs{leaf({2, 1, 4}, seed + 1), leaf({3, 1}, seed + 2), leaf({4}, seed + 3)}};
  });
  check("Neg", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return neg(in[0]); }, Inputs{leaf({2, 3}, seed + 9)}}; });
  check("AddScalar", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], 2.5); }, Inputs{leaf({5}, seed + 10)}};
  });
  check("MulScalar", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], -1.5); }, Inputs{leaf({5}, seed + 11)}};
  });
  check("RSubScalar", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(3.0, in[0]); }, Inputs{leaf({5}, seed + 12)}};
  });
  check("RDivScalar", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(2.0, in[0]); }, Inputs{leaf({5}, seed + 13, 0.5, 2.0)}};
  });
  check("Pow", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return pow(in[0], 3.0); }, Inputs{leaf({5}, seed + 14)}}; });
  check("PowFractional", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return pow(in[0], 1.5); }, Inputs{leaf({5}, seed + 15, 0.2, 2.0)}};
  });
  check("Exp", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return exp(in[0]); }, Inputs{leaf({2, 3}, seed + 16)}}; });
  check("Log", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log(in[0]); }, Inputs{leaf({2, 3}, seed + 17, 0.2, 3.0)}};
  });
  check("Sqrt", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sqrt(in[0]); }, Inputs{leaf({2, 3}, seed + 18, 0.2, 3.0)}};
  });
  check("Tanh", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return tanh(in[0]); }, Inputs{leaf({2, 3}, seed + 19, -2, 2)}};
  });
  check("Sigmoid", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sigmoid(in[0]); }, Inputs{leaf({2, 3}, seed + 20, -3, 3)}};
  });
  check("Relu", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return relu(in[0]); }, Inputs{leaf_away_from_zero({2, 4}, seed + 21)}};
  });
  check("Gelu", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return gelu(in[0]); }, Inputs{leaf({2, 4}, seed + 22, -3, 3)}};
  });
  check("GeluTanh", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return gelu_tanh(in[0]); }, Inputs{leaf({2, 4}, seed + 24, -3, 3)}};
  });
  check("Erf", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return erf(in[0]); }, Inputs{leaf({2, 4}, seed + 23, -2, 2)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
