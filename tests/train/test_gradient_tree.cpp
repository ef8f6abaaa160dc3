// train/gradient_tree.h: the shards' gradients added as each becomes final, in the tree's order whatever the order
// they arrive in, and the added ones let go.
#include "train/gradient_tree.h"

#include <algorithm>
#include <array>

#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "nn/linear.h"
#include "test_util.h"
#include "train/data_parallel.h"

namespace cppgrad {
namespace {

// Four shards of a Linear(2 -> 2) whose weights' gradients will be the float32 values below: ((1e8 + 1) + (-1e8 + 1))
// is 0 in the tree, where adding them in any other grouping gives 1 or 2. Shard 3 gives the bias a gradient, the
// others do not: it counts zeros there. No shard reaches nothing else.
struct FourShards {
  Generator gen{1};
  std::vector<std::unique_ptr<nn::Linear>> models;
  std::vector<std::vector<Tensor>> params;
  static constexpr std::array<double, 4> kWeightGrad = {1e8, 1.0, -1e8, 1.0};
  FourShards() {
    for (int s = 0; s < 4; ++s) {
      models.push_back(std::make_unique<nn::Linear>(nn::LinearOptions{.in = 2, .out = 2}, gen));
      params.push_back(models.back()->parameters());  // weight, bias
    }
  }
  // Shard s's backward pass: d/dw sum(w * g) = g.
  void backward(int s) const {
    const Tensor& w = params[s][0];
    Tensor loss = sum(mul(w, Tensor::full(w.shape(), kWeightGrad[s])));
    if (s == 3) loss = add(loss, sum(mul(params[s][1], Tensor::full(params[s][1].shape(), 0.5))));
    loss.backward();
  }
};

TEST(GradientTree, AddsInTheTreesOrderWhateverOrderTheShardsFinishIn) {
  FourShards reference;
  for (int s = 0; s < 4; ++s) reference.backward(s);
  train::tree_sum_gradients(reference.params);
  const std::vector<double> weight = reference.params[0][0].grad().to_double_vector();
  const std::vector<double> bias = reference.params[0][1].grad().to_double_vector();
  EXPECT_EQ(weight, std::vector<double>(4, 0.0));  // the tree's grouping; any other gives 1 or 2

  std::array<int, 4> order = {0, 1, 2, 3};
  do {
    FourShards shards;
    train::GradientTree tree(shards.params, /*threads=*/1);
    {
      const train::GradientTree::OnThread here(tree, 0);
      for (const int s : order) {
        const OnLeafGradient report(tree.reports(s));
        shards.backward(s);
      }
    }
    tree.finish();
    EXPECT_EQ(shards.params[0][0].grad().to_double_vector(), weight);
    EXPECT_EQ(shards.params[0][1].grad().to_double_vector(), bias);
    // Every weight gradient but the sum's was added into another and let go.
    for (int s = 1; s < 4; ++s) EXPECT_FALSE(shards.params[s][0].grad().defined()) << "shard " << s;
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(GradientTree, ASecondBackwardPassInOneStepIsRefused) {
  FourShards shards;
  train::GradientTree tree(shards.params, 1);
  const OnLeafGradient report(tree.reports(0));
  shards.backward(0);
  EXPECT_THROW_MSG(shards.backward(0), std::logic_error, "got a gradient twice in one step");
}

}  // namespace
}  // namespace cppgrad
