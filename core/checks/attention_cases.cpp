// Gradient-check cases of fused attention (core/ops/attention.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/attention.h"

namespace cppgrad::checks {

namespace {
// [L, L] bool, true on and below the diagonal: query i may attend to keys 0..i (nn::causal_mask's mask).
Tensor lower_triangle(std::int64_t L) {
  Tensor mask = Tensor::zeros({L, L}, DType::Bool);
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = 0; j <= i; ++j) mask.set({i, j}, 1);
  return mask;
}
}  // namespace

std::vector<GradcheckCase> attention_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("FusedAttention", [](std::uint64_t seed) {
    // Lk = 5 and dv = 3: the kernels' vectors are partly padding.
    return Prepared{[](const Inputs& in) { return fused_attention(in[0], in[1], in[2]).output; },
                    Inputs{leaf({2, 3, 4}, seed + 320), leaf({2, 5, 4}, seed + 321), leaf({2, 5, 3}, seed + 322)}};
  });
  check("FusedAttentionCausalMaskHeadViews", [](std::uint64_t seed) {
    // q, k, v as heads split from [B, L, D] (non-contiguous views, as MultiHeadAttention makes them), causal mask.
    Tensor mask = lower_triangle(4);
    auto heads = [](const Tensor& x) { return x.view({2, 4, 2, 3}).transpose(1, 2); };  // [2, 2, 4, 3]
    return Prepared{[=](const Inputs& in) { return fused_attention(heads(in[0]), heads(in[1]), heads(in[2]), mask).output; },
                    Inputs{leaf({2, 4, 6}, seed + 323), leaf({2, 4, 6}, seed + 324), leaf({2, 4, 6}, seed + 325)}};
  });
  check("FusedAttentionKeyPaddingAndABlockedRow", [](std::uint64_t seed) {
    // Key padding per batch item, and one query row with every key blocked (zero output, zero gradient).
    Tensor mask = Tensor::ones({2, 3, 5}, DType::Bool);
    for (std::int64_t j = 3; j < 5; ++j) mask.set({0, 0, j}, 0), mask.set({0, 1, j}, 0), mask.set({0, 2, j}, 0);
    for (std::int64_t j = 0; j < 5; ++j) mask.set({1, 2, j}, 0);
    return Prepared{[mask](const Inputs& in) { return fused_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 3, 4}, seed + 326), leaf({2, 5, 4}, seed + 327), leaf({2, 5, 2}, seed + 328)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
