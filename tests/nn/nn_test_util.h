#pragma once
#include "nn/module.h"
#include "test_util.h"

namespace cppgrad::test {

// Gradient-checks a module in float64: its parameters become extra inputs of the check, so the Jacobian
// covers d(output)/d(every parameter) as well as d(output)/d(inputs).
inline GradcheckResult gradcheck_module(nn::Module& module, std::vector<Tensor> inputs, const GradcheckFn& f) {
  module.to(DType::Float64);
  for (const Tensor& p : module.parameters()) inputs.push_back(p);
  return gradcheck(f, inputs);
}

// A random [B, L] int64 id tensor in [low, high).
inline Tensor random_ids(const Shape& shape, std::int64_t low, std::int64_t high, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor::randint(low, high, shape, gen);
}

}  // namespace cppgrad::test

#define EXPECT_MODULE_GRADCHECK(module, inputs, fn)                                     \
  do {                                                                                   \
    const auto gc_result_ = ::cppgrad::test::gradcheck_module((module), (inputs), (fn)); \
    EXPECT_TRUE(gc_result_.ok) << gc_result_.message;                                    \
  } while (0)
