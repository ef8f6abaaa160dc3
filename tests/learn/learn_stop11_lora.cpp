// Stop 11 (docs/learn.md): LoRA, a module that changes another without touching its weights. Read nn/lora.h and
// nn/lora.cpp, then Linear::add_lora and Linear::forward in nn/linear.cpp.
//
// Question: why does freezing W remove a whole matrix product from backward, when the input's gradient still flows
// through W? Backward of y = x W^T needs dx = g W (for the layers below) and dW = g^T x (for W itself): frozen, W
// needs no dW, and dW's product is as large as the forward's.
// Exercise: merge by hand. Write the weight a plain Linear needs to compute what base + adapter computes, and check
// that the merged layer gives the adapted layer's outputs, and that the adapted layer's backward leaves W without a
// gradient while A and B get one.
#include <cmath>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// W + (alpha / r) B A: [out, in] + [out, r] @ [r, in].
Tensor my_merged_weight(const nn::Linear& adapted) {
  NoGradGuard no_grad;
  const nn::LoRA& lora = *adapted.lora();
  const double scaling = kPlantedWrong ? 1.0 : lora.scaling();  // the mistake: alpha / r forgotten
  return adapted.weight() + matmul(lora.B(), lora.A()) * scaling;
}

TEST(Stop11, YourMergedWeightGivesTheAdaptedLayersOutputs) {
  Generator gen(0);
  nn::Linear adapted({.in = 12, .out = 10}, gen);
  adapted.add_lora({.rank = 3, .alpha = 12.0}, gen);  // scaling 4
  adapted.lora()->B().set_data(Tensor::randn({10, 3}, gen));  // as training would leave it (it starts at zero)
  Generator again(0);
  nn::Linear merged({.in = 12, .out = 10}, again);  // the same W and b: the same draws
  merged.weight().set_data(my_merged_weight(adapted));
  const Tensor x = Tensor::randn({5, 12}, gen);
  const std::vector<float> want = adapted.forward(x).to_vector<float>(), got = merged.forward(x).to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(Stop11, BackwardLeavesTheFrozenWeightWithoutAGradient) {
  Generator gen(1);
  nn::Linear adapted({.in = 6, .out = 4}, gen);
  adapted.add_lora({.rank = 2}, gen);
  adapted.lora()->B().set_data(Tensor::randn({4, 2}, gen));
  sum(adapted.forward(Tensor::randn({3, 6}, gen))).backward();
  EXPECT_FALSE(adapted.weight().grad().defined());
  EXPECT_FALSE(adapted.bias().grad().defined());
  EXPECT_TRUE(adapted.lora()->A().grad().defined());
  EXPECT_TRUE(adapted.lora()->B().grad().defined());
  // Merged, the weight is the adapted layer's sum, not the frozen one: the adapter changed it.
  const Tensor change = my_merged_weight(adapted) - adapted.weight();
  EXPECT_GT(sum(change * change).item(), 0.01);
}

}  // namespace
}  // namespace cppgrad::learn
