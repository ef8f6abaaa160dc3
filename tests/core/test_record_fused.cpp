// record_fused (core/autograd.h), the node every fused op records: its kernel's backward for a first derivative, its
// definition's gradient under create_graph, and nothing at all under no_grad.
#include <functional>
#include <vector>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

// Counts the copies and moves of the lambdas that capture it: a closure the helper builds moves them into it.
struct MoveCounter {
  int* moves;
  explicit MoveCounter(int* m) : moves(m) {}
  MoveCounter(const MoveCounter& o) : moves(o.moves) { ++*moves; }
  MoveCounter(MoveCounter&& o) noexcept : moves(o.moves) { ++*moves; }
  MoveCounter& operator=(const MoveCounter&) = delete;
  MoveCounter& operator=(MoveCounter&&) = delete;
  ~MoveCounter() = default;
};

// A fused op in miniature: y = x^2, its "kernel" the forward without a graph, its definition mul(x, x), and a kernel
// backward that counts its calls. Its lambdas are built in the call, as a fused op's are.
Tensor square(const Tensor& x, int* kernel_backward_calls, int* moves) {
  Tensor y;
  {
    NoGradGuard no_graph;  // the kernel's forward records nothing
    y = mul(x, x);
  }
  return record_fused(y, "square", {x}, [](const TensorList& in) { return mul(in[0], in[0]); },
                      [x, kernel_backward_calls, counter = MoveCounter(moves)](const Tensor& g) {
                        ++*kernel_backward_calls;
                        return TensorList{mul(mul(g, x), 2.0)};
                      },
                      std::source_location::current());
}

Tensor leaf_of(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Tensor::from_vector<double>(values, {n}).set_requires_grad();
}

TEST(RecordFused, AFirstDerivativeRunsTheKernelsBackwardAndCreateGraphRunsTheDefinition) {
  int calls = 0, moves = 0;
  const Tensor x = leaf_of({1.5, -2.0});
  const Tensor y = square(x, &calls, &moves);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name, "square");
  EXPECT_EQ(std::string(y.grad_fn()->where.file_name()), std::string(std::source_location::current().file_name()));

  const Tensor first = autograd::grad({sum(y)}, {x}, {}, /*retain_graph=*/true)[0];  // 2x, by the kernel's backward
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(first.requires_grad());
  EXPECT_EQ(first.to_vector<double>(), (std::vector<double>{3.0, -4.0}));

  // With create_graph the kernel's backward is not called: the definition's gradient is, and it carries a graph.
  const Tensor d1 = autograd::grad({sum(y)}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_EQ(calls, 1) << "create_graph ran the kernel's backward";
  ASSERT_TRUE(d1.requires_grad());
  EXPECT_EQ(d1.to_vector<double>(), (std::vector<double>{3.0, -4.0}));
  const Tensor d2 = autograd::grad({sum(d1)}, {x})[0];  // d/dx sum(2x) = 2
  EXPECT_EQ(d2.to_vector<double>(), (std::vector<double>{2.0, 2.0}));
}

TEST(RecordFused, UnderNoGradItBuildsNoNodeAndNoClosure) {
  int calls = 0, moves = 0;
  const Tensor x = leaf_of({1.5, -2.0});
  {
    NoGradGuard no_grad;  // a decoding step
    const Tensor y = square(x, &calls, &moves);
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_EQ(moves, 0) << "the rule was moved into a closure under no_grad";
  }
  const Tensor constant = leaf_of({1.0}).detach();  // grad mode on, but no input requires grad
  EXPECT_EQ(square(constant, &calls, &moves).grad_fn(), nullptr);
  EXPECT_EQ(moves, 0);
  EXPECT_NE(square(x, &calls, &moves).grad_fn(), nullptr);  // the counter can see a closure being built
  EXPECT_GT(moves, 0);
  EXPECT_EQ(calls, 0);
}

TEST(RecordFused, UnderNoGradTheFusedOpsRecordNothing) {
  Generator gen(5);
  const auto leaf = [&](const Shape& s) { return Tensor::randn(s, gen).set_requires_grad(); };
  const Tensor x = leaf({2, 3, 8}), w = leaf({8}), b = leaf({8}), lw = leaf({5, 8}), lb = leaf({5});
  const Tensor qkv = leaf({3, 2, 2, 3, 4});
  NoGradGuard no_grad;
  EXPECT_EQ(layer_norm(x, w, b).grad_fn(), nullptr);
  EXPECT_EQ(gelu_tanh(x).grad_fn(), nullptr);
  EXPECT_EQ(linear_relu(x, lw, lb).grad_fn(), nullptr);
  EXPECT_EQ(cross_entropy(x.view({6, 8}), Tensor::randint(0, 8, {6}, gen)).grad_fn(), nullptr);
  EXPECT_EQ(fused_attention(qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2)).output.grad_fn(), nullptr);
  EXPECT_EQ(fused_attention_stacked(qkv).output.grad_fn(), nullptr);
}

// Under create_graph a float32 fused op's gradient is its definition's, so it is the same, bit for bit, as the
// gradient reference mode (the definitions alone) takes: the kernel's closed form would round differently.
TEST(RecordFused, UnderCreateGraphEachFusedOpsGradientIsItsDefinitionsBitForBit) {
  using Op = std::function<Tensor(const std::vector<Tensor>&)>;
  Generator gen(9);
  const Tensor target = Tensor::randint(0, 8, {6}, gen);
  const std::vector<std::pair<Op, std::vector<Shape>>> cases = {
      {[](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); }, {{2, 3, 8}, {8}, {8}}},
      {[](const std::vector<Tensor>& in) { return gelu_tanh(in[0]); }, {{2, 3, 8}}},
      {[](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }, {{2, 3, 8}, {5, 8}, {5}}},
      {[](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1], in[2]); }, {{2, 3, 8}, {5, 8}, {5}}},
      {[&target](const std::vector<Tensor>& in) { return cross_entropy(in[0], target); }, {{6, 8}}},
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto& [op, shapes] = cases[c];
    std::vector<Tensor> in;
    for (const Shape& s : shapes) in.push_back(Tensor::randn(s, gen).set_requires_grad());
    auto gradients = [&, &op = op] {
      const Tensor y = op(in);
      Generator up_gen(c);
      const Tensor up = Tensor::randn(y.shape(), up_gen);
      return autograd::grad({y}, in, {up}, std::nullopt, /*create_graph=*/true);
    };
    const std::vector<Tensor> fused = gradients();
    std::vector<Tensor> definition;
    {
      ReferenceModeGuard definitions_only;
      definition = gradients();
    }
    EXPECT_TRUE(fused[0].requires_grad()) << "case " << c << ": a gradient without a graph";
    for (std::size_t i = 0; i < in.size(); ++i) {  // (a bias's gradient is g summed: constant, in both)
      EXPECT_EQ(fused[i].requires_grad(), definition[i].requires_grad()) << "case " << c << ", input " << i;
      EXPECT_EQ(fused[i].to_vector<float>(), definition[i].to_vector<float>()) << "case " << c << ", input " << i;
    }
  }
}

}  // namespace
}  // namespace cppgrad
