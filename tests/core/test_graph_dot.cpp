// The autograd graph as DOT: ops with shapes and gradient norms, named parameters, one edge per input.
#include <sstream>

#include "core/autograd.h"
#include "core/graph_dot.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GraphDot, DrawsOpsLeavesAndRecordedGradientNorms) {
  Tensor w = Tensor::from_vector<double>({3, 4}, {2});  // |grad| of sum(w * x) w.r.t. w is |x| = 5
  w.set_requires_grad(true);
  Tensor x = Tensor::from_vector<double>({3, 4}, {2});
  x.set_requires_grad(true);
  Tensor loss = sum(mul(w, x));
  run_backward(loss, Tensor(), /*retain_graph=*/true, /*record_grad_norms=*/true);
  std::ostringstream dot;
  write_graph_dot(loss, dot, {{w.impl_ptr().get(), "layer.weight"}});
  const std::string s = dot.str();
  EXPECT_THAT(s, ::testing::StartsWith("digraph autograd {"));
  EXPECT_THAT(s, ::testing::HasSubstr("sum\\n[]\\n|grad| 1"));       // the root, seeded with 1
  EXPECT_THAT(s, ::testing::HasSubstr("mul\\n[2]\\n|grad| 1.41"));   // |ones(2)| = sqrt 2
  EXPECT_THAT(s, ::testing::HasSubstr("layer.weight\\n[2]\\n|grad| 5"));
  EXPECT_THAT(s, ::testing::HasSubstr("input\\n[2]\\n|grad| 5"));
  EXPECT_EQ(std::count(s.begin(), s.end(), '>'), 3);  // w -> mul, x -> mul, mul -> sum
}

TEST(GraphDot, TheWalkFindsEachTensorOnceAndEachInputReadAsAnEdge) {
  Tensor x = Tensor::from_vector<double>({3, 4}, {2});
  x.set_requires_grad(true);
  const Tensor y = mul(x, 2.0);
  const Tensor loss = sum(mul(y, y));  // y read twice by one op: two edges, one node
  const AutogradGraph g = autograd_graph(loss);
  ASSERT_EQ(g.tensors.size(), 4u);  // sum, mul(y, y), y, x
  EXPECT_TRUE(g.tensors[0].impl_ptr() == loss.impl_ptr());
  EXPECT_TRUE(g.tensors[2].impl_ptr() == y.impl_ptr());
  EXPECT_TRUE(g.tensors[3].impl_ptr() == x.impl_ptr());
  EXPECT_EQ(g.edges, (std::vector<std::pair<int, int>>{{1, 0}, {2, 1}, {2, 1}, {3, 2}}));
}

TEST(GraphDot, DeepGraphsAreWalkedIteratively) {
  Tensor x = Tensor::scalar(1.0, DType::Float64);
  x.set_requires_grad(true);
  Tensor y = x;
  for (int i = 0; i < 50000; ++i) y = add(y, 1.0);
  std::ostringstream dot;
  write_graph_dot(y, dot);
  EXPECT_GT(dot.str().size(), 50000u);
}

}  // namespace
}  // namespace cppgrad
