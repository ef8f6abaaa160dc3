// A float64 finite-difference gradient check for every op, named after the op. Inputs are small so the full
// Jacobian is cheap; broadcasting, non-contiguous views and batched shapes each get their own case.
#include "test_util.h"

namespace cppgrad {
namespace {

using test::leaf;
using test::leaf_away_from_zero;
using Inputs = std::vector<Tensor>;

// ---------------------------------------------------------------- the checker itself
TEST(GradCheck, CatchesAWrongBackward) {
  // square with a deliberately wrong derivative (x instead of 2x): the checker must refuse it.
  auto bad_square = [](const Inputs& in) {
    Tensor x = in[0];
    Tensor out = mul(x.detach(), x.detach());
    Tensor saved = x.detach();
    return record_op(out, "bad_square", {x}, [saved](const Tensor& g) { return std::vector<Tensor>{mul(g, saved)}; });
  };
  const auto r = gradcheck(bad_square, {leaf({3}, 1)});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, ::testing::HasSubstr("Jacobian mismatch"));
}

TEST(GradCheck, CatchesAGradientSentToTheWrongElement) {
  // Correct values but the wrong place: a reversed gradient for a non-symmetric op.
  auto bad_scale = [](const Inputs& in) {
    Tensor x = in[0];
    Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
    Tensor out = mul(x.detach(), w);
    Tensor w_reversed = Tensor::from_vector<double>({3, 2, 1}, {3});
    return record_op(out, "bad_scale", {x}, [w_reversed](const Tensor& g) { return std::vector<Tensor>{mul(g, w_reversed)}; });
  };
  EXPECT_FALSE(gradcheck(bad_scale, {leaf({3}, 2)}).ok);
}

TEST(GradCheck, RefusesFloat32Inputs) {
  Tensor x = Tensor::ones({2}, DType::Float32);
  x.set_requires_grad(true);
  EXPECT_THROW_MSG(gradcheck([](const Inputs& in) { return exp(in[0]); }, {x}), std::invalid_argument, "float64");
}

// ---------------------------------------------------------------- binary arithmetic
TEST(GradCheck, Add) { EXPECT_GRADCHECK([](const Inputs& in) { return add(in[0], in[1]); }, (Inputs{leaf({2, 3}, 1), leaf({2, 3}, 2)})); }
TEST(GradCheck, AddBroadcast) {
  EXPECT_GRADCHECK([](const Inputs& in) { return add(in[0], in[1]); }, (Inputs{leaf({2, 1, 3}, 1), leaf({4, 1}, 2)}));
}
TEST(GradCheck, Sub) { EXPECT_GRADCHECK([](const Inputs& in) { return sub(in[0], in[1]); }, (Inputs{leaf({2, 3}, 3), leaf({2, 3}, 4)})); }
TEST(GradCheck, SubBroadcast) {
  EXPECT_GRADCHECK([](const Inputs& in) { return sub(in[0], in[1]); }, (Inputs{leaf({3}, 3), leaf({2, 3}, 4)}));
}
TEST(GradCheck, Mul) { EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0], in[1]); }, (Inputs{leaf({2, 3}, 5), leaf({2, 3}, 6)})); }
TEST(GradCheck, MulBroadcast) {
  EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0], in[1]); }, (Inputs{leaf({2, 1, 4}, 5), leaf({3, 1}, 6)}));
}
TEST(GradCheck, MulSameTensorTwice) {
  // x * x: both uses must contribute (2x).
  EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0], in[0]); }, (Inputs{leaf({4}, 7)}));
}
TEST(GradCheck, Div) {
  EXPECT_GRADCHECK([](const Inputs& in) { return div(in[0], in[1]); }, (Inputs{leaf({2, 3}, 7), leaf({2, 3}, 8, 0.5, 2.0)}));
}
TEST(GradCheck, DivBroadcast) {
  EXPECT_GRADCHECK([](const Inputs& in) { return div(in[0], in[1]); }, (Inputs{leaf({2, 3}, 7), leaf({1, 3}, 8, 0.5, 2.0)}));
}
TEST(GradCheck, BroadcastMulAdd) {
  // The golden case's expression: a * b + c with three different broadcast shapes.
  EXPECT_GRADCHECK([](const Inputs& in) { return add(mul(in[0], in[1]), in[2]); },
                   (Inputs{leaf({2, 1, 4}, 1), leaf({3, 1}, 2), leaf({4}, 3)}));
}

// ---------------------------------------------------------------- scalar variants and unary math
TEST(GradCheck, Neg) { EXPECT_GRADCHECK([](const Inputs& in) { return neg(in[0]); }, (Inputs{leaf({2, 3}, 9)})); }
TEST(GradCheck, AddScalar) { EXPECT_GRADCHECK([](const Inputs& in) { return add(in[0], 2.5); }, (Inputs{leaf({5}, 10)})); }
TEST(GradCheck, MulScalar) { EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0], -1.5); }, (Inputs{leaf({5}, 11)})); }
TEST(GradCheck, RSubScalar) { EXPECT_GRADCHECK([](const Inputs& in) { return sub(3.0, in[0]); }, (Inputs{leaf({5}, 12)})); }
TEST(GradCheck, RDivScalar) { EXPECT_GRADCHECK([](const Inputs& in) { return div(2.0, in[0]); }, (Inputs{leaf({5}, 13, 0.5, 2.0)})); }
TEST(GradCheck, Pow) { EXPECT_GRADCHECK([](const Inputs& in) { return pow(in[0], 3.0); }, (Inputs{leaf({5}, 14)})); }
TEST(GradCheck, PowFractional) { EXPECT_GRADCHECK([](const Inputs& in) { return pow(in[0], 1.5); }, (Inputs{leaf({5}, 15, 0.2, 2.0)})); }
TEST(GradCheck, Exp) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0]); }, (Inputs{leaf({2, 3}, 16)})); }
TEST(GradCheck, Log) { EXPECT_GRADCHECK([](const Inputs& in) { return log(in[0]); }, (Inputs{leaf({2, 3}, 17, 0.2, 3.0)})); }
TEST(GradCheck, Sqrt) { EXPECT_GRADCHECK([](const Inputs& in) { return sqrt(in[0]); }, (Inputs{leaf({2, 3}, 18, 0.2, 3.0)})); }
TEST(GradCheck, Tanh) { EXPECT_GRADCHECK([](const Inputs& in) { return tanh(in[0]); }, (Inputs{leaf({2, 3}, 19, -2, 2)})); }
TEST(GradCheck, Sigmoid) { EXPECT_GRADCHECK([](const Inputs& in) { return sigmoid(in[0]); }, (Inputs{leaf({2, 3}, 20, -3, 3)})); }
TEST(GradCheck, Relu) { EXPECT_GRADCHECK([](const Inputs& in) { return relu(in[0]); }, (Inputs{leaf_away_from_zero({2, 4}, 21)})); }
TEST(GradCheck, Gelu) { EXPECT_GRADCHECK([](const Inputs& in) { return gelu(in[0]); }, (Inputs{leaf({2, 4}, 22, -3, 3)})); }

// ---------------------------------------------------------------- reductions
TEST(GradCheck, SumAll) { EXPECT_GRADCHECK([](const Inputs& in) { return sum(in[0]); }, (Inputs{leaf({2, 3}, 23)})); }
TEST(GradCheck, SumDims) { EXPECT_GRADCHECK([](const Inputs& in) { return sum(in[0], {0, 2}); }, (Inputs{leaf({2, 3, 4}, 24)})); }
TEST(GradCheck, SumKeepdim) { EXPECT_GRADCHECK([](const Inputs& in) { return sum(in[0], {1}, true); }, (Inputs{leaf({2, 3, 4}, 25)})); }
TEST(GradCheck, MeanAll) { EXPECT_GRADCHECK([](const Inputs& in) { return mean(in[0]); }, (Inputs{leaf({2, 3}, 26)})); }
TEST(GradCheck, MeanDims) { EXPECT_GRADCHECK([](const Inputs& in) { return mean(in[0], {-1}, true); }, (Inputs{leaf({2, 3, 4}, 27)})); }
TEST(GradCheck, Max) { EXPECT_GRADCHECK([](const Inputs& in) { return max(in[0], 1); }, (Inputs{leaf({2, 5, 3}, 28)})); }
TEST(GradCheck, MaxKeepdim) { EXPECT_GRADCHECK([](const Inputs& in) { return max(in[0], -1, true); }, (Inputs{leaf({3, 4}, 29)})); }

// ---------------------------------------------------------------- matmul
TEST(GradCheck, Matmul2D) { EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({3, 4}, 30), leaf({4, 2}, 31)})); }
TEST(GradCheck, MatmulVectorMatrix) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({4}, 32), leaf({4, 3}, 33)}));
}
TEST(GradCheck, MatmulMatrixVector) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({3, 4}, 34), leaf({4}, 35)}));
}
TEST(GradCheck, MatmulDot) { EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({5}, 36), leaf({5}, 37)})); }
TEST(GradCheck, MatmulBatched) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({2, 3, 4}, 38), leaf({2, 4, 2}, 39)}));
}
TEST(GradCheck, MatmulBatchedBroadcast) {
  // (2, 1, 3, 5) @ (2, 5, 4) -> (2, 2, 3, 4): the batch dims broadcast, so b's gradient sums over a's batch.
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); },
                   (Inputs{leaf({2, 1, 3, 5}, 40), leaf({2, 5, 4}, 41)}));
}
TEST(GradCheck, MatmulBatchedTimesMatrix) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{leaf({2, 3, 4}, 42), leaf({4, 2}, 43)}));
}
TEST(GradCheck, MatmulTransposedView) {
  // a @ b^T with b^T a non-contiguous view, as attention computes q @ k^T.
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1].transpose(-2, -1)); },
                   (Inputs{leaf({2, 3, 6}, 44), leaf({2, 5, 6}, 45)}));
}
TEST(GradCheck, MatmulBothTransposed) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0].t(), in[1].t()); }, (Inputs{leaf({4, 3}, 46), leaf({2, 4}, 47)}));
}
TEST(GradCheck, MatmulSlicedView) {
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0].slice(1, 0, 6, 2), in[1]); },
                   (Inputs{leaf({3, 6}, 48), leaf({3, 2}, 49)}));
}

// ---------------------------------------------------------------- softmax family
TEST(GradCheck, Softmax) { EXPECT_GRADCHECK([](const Inputs& in) { return softmax(in[0], -1); }, (Inputs{leaf({2, 3, 5}, 50, -2, 2)})); }
TEST(GradCheck, SoftmaxDim0) { EXPECT_GRADCHECK([](const Inputs& in) { return softmax(in[0], 0); }, (Inputs{leaf({4, 3}, 51, -2, 2)})); }
TEST(GradCheck, SoftmaxTransposedInput) {
  EXPECT_GRADCHECK([](const Inputs& in) { return softmax(in[0].t(), -1); }, (Inputs{leaf({4, 3}, 52, -2, 2)}));
}
TEST(GradCheck, SoftmaxWithMaskedEntries) {
  // Some (not all) entries of each row at -inf: those get zero weight and zero gradient.
  Tensor mask = Tensor::from_vector<bool>({false, true, false, true, false, false, false, true}, {2, 4});
  EXPECT_GRADCHECK([mask](const Inputs& in) { return softmax(masked_fill(in[0], mask, -INFINITY), -1); },
                   (Inputs{leaf({2, 4}, 53)}));
}
TEST(GradCheck, LogSoftmax) { EXPECT_GRADCHECK([](const Inputs& in) { return log_softmax(in[0], -1); }, (Inputs{leaf({2, 3, 5}, 54, -2, 2)})); }
TEST(GradCheck, LogSoftmaxDim1) { EXPECT_GRADCHECK([](const Inputs& in) { return log_softmax(in[0], 1); }, (Inputs{leaf({2, 4, 3}, 55, -2, 2)})); }
TEST(GradCheck, CrossEntropy) {
  Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 1, 2}, {4});
  EXPECT_GRADCHECK([target](const Inputs& in) { return cross_entropy(in[0], target); }, (Inputs{leaf({4, 5}, 56, -2, 2)}));
}
TEST(GradCheck, CrossEntropyIgnoreIndex) {
  Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 0, 2, 4, 0}, {2, 3});
  EXPECT_GRADCHECK([target](const Inputs& in) { return cross_entropy(in[0], target, /*ignore_index=*/0); },
                   (Inputs{leaf({2, 3, 5}, 57, -2, 2)}));
}

// ---------------------------------------------------------------- selection
TEST(GradCheck, MaskedFill) {
  Tensor mask = Tensor::from_vector<bool>({true, false, false, true}, {1, 4});
  EXPECT_GRADCHECK([mask](const Inputs& in) { return masked_fill(in[0], mask, -5.0); }, (Inputs{leaf({3, 4}, 58)}));
}
TEST(GradCheck, Where) {
  Tensor cond = Tensor::from_vector<bool>({true, false, true, false, false, true}, {2, 3});
  EXPECT_GRADCHECK([cond](const Inputs& in) { return where(cond, in[0], in[1]); }, (Inputs{leaf({2, 3}, 59), leaf({2, 3}, 60)}));
}
TEST(GradCheck, WhereBroadcast) {
  Tensor cond = Tensor::from_vector<bool>({true, false, true}, {3});
  EXPECT_GRADCHECK([cond](const Inputs& in) { return where(cond, in[0], in[1]); }, (Inputs{leaf({2, 3}, 61), leaf({2, 1}, 62)}));
}
TEST(GradCheck, Cat) {
  EXPECT_GRADCHECK([](const Inputs& in) { return cat({in[0], in[1], in[2]}, 1); },
                   (Inputs{leaf({2, 1, 3}, 63), leaf({2, 2, 3}, 64), leaf({2, 3, 3}, 65)}));
}
TEST(GradCheck, CatLastDim) { EXPECT_GRADCHECK([](const Inputs& in) { return cat({in[0], in[1]}, -1); }, (Inputs{leaf({2, 2}, 66), leaf({2, 3}, 67)})); }
TEST(GradCheck, Stack) { EXPECT_GRADCHECK([](const Inputs& in) { return stack({in[0], in[1]}, 1); }, (Inputs{leaf({2, 3}, 68), leaf({2, 3}, 69)})); }
TEST(GradCheck, IndexSelect) {
  Tensor idx = Tensor::from_vector<std::int64_t>({2, 0, 2, 1}, {4});  // a repeated index accumulates
  EXPECT_GRADCHECK([idx](const Inputs& in) { return index_select(in[0], 1, idx); }, (Inputs{leaf({2, 3, 2}, 70)}));
}
TEST(GradCheck, Gather) {
  Tensor idx = Tensor::from_vector<std::int64_t>({0, 2, 2, 1, 0, 0}, {2, 3});
  EXPECT_GRADCHECK([idx](const Inputs& in) { return gather(in[0], 1, idx); }, (Inputs{leaf({2, 4}, 71)}));
}
TEST(GradCheck, GatherDim0) {
  Tensor idx = Tensor::from_vector<std::int64_t>({1, 0, 1}, {1, 3});
  EXPECT_GRADCHECK([idx](const Inputs& in) { return gather(in[0], 0, idx); }, (Inputs{leaf({2, 3}, 72)}));
}
TEST(GradCheck, Embedding) {
  Tensor ids = Tensor::from_vector<std::int64_t>({1, 4, 1, 0, 3, 3}, {2, 3});
  EXPECT_GRADCHECK([ids](const Inputs& in) { return embedding(in[0], ids); }, (Inputs{leaf({5, 3}, 73)}));
}

// ---------------------------------------------------------------- normalisation, dropout
TEST(GradCheck, LayerNorm) {
  EXPECT_GRADCHECK([](const Inputs& in) { return layer_norm(in[0], in[1], in[2], 1e-5); },
                   (Inputs{leaf({2, 3, 5}, 74, -2, 2), leaf({5}, 75, 0.5, 1.5), leaf({5}, 76)}));
}
TEST(GradCheck, LayerNormWithoutAffine) {
  EXPECT_GRADCHECK([](const Inputs& in) { return layer_norm(in[0], Tensor(), Tensor(), 1e-5); },
                   (Inputs{leaf({3, 4}, 77, -2, 2)}));
}
TEST(GradCheck, LayerNormTransposedInput) {
  EXPECT_GRADCHECK([](const Inputs& in) { return layer_norm(in[0].t(), in[1], in[2], 1e-5); },
                   (Inputs{leaf({4, 3}, 78, -2, 2), leaf({4}, 79, 0.5, 1.5), leaf({4}, 80)}));
}
TEST(GradCheck, Dropout) {
  // A fresh generator with the same seed inside f: every evaluation draws the same mask.
  EXPECT_GRADCHECK([](const Inputs& in) {
    Generator gen(7);
    return dropout(in[0], 0.4, /*training=*/true, gen);
  }, (Inputs{leaf({3, 5}, 81)}));
}

// ---------------------------------------------------------------- views and copies
TEST(GradCheck, Transpose) { EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0].transpose(0, 2), 2.0); }, (Inputs{leaf({2, 3, 4}, 82)})); }
TEST(GradCheck, Permute) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].permute({2, 0, 1})); }, (Inputs{leaf({2, 3, 4}, 83)})); }
TEST(GradCheck, Slice) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].slice(1, 1, 3)); }, (Inputs{leaf({2, 4}, 84)})); }
TEST(GradCheck, SliceWithStep) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].slice(0, 0, 5, 2)); }, (Inputs{leaf({5, 2}, 85)})); }
TEST(GradCheck, Select) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].select(1, 2)); }, (Inputs{leaf({2, 3}, 86)})); }
TEST(GradCheck, Unsqueeze) { EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0].unsqueeze(1), in[1]); }, (Inputs{leaf({2, 3}, 87), leaf({2, 2, 3}, 88)})); }
TEST(GradCheck, Squeeze) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].squeeze(1)); }, (Inputs{leaf({2, 1, 3}, 89)})); }
TEST(GradCheck, Expand) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].expand({4, 2, 3})); }, (Inputs{leaf({2, 1}, 90)})); }
TEST(GradCheck, View) { EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].view({3, -1})); }, (Inputs{leaf({2, 3, 2}, 91)})); }
TEST(GradCheck, ReshapeNonContiguous) {
  EXPECT_GRADCHECK([](const Inputs& in) { return exp(in[0].t().reshape({-1})); }, (Inputs{leaf({3, 4}, 92)}));
}
TEST(GradCheck, Contiguous) { EXPECT_GRADCHECK([](const Inputs& in) { return in[0].t().contiguous(); }, (Inputs{leaf({3, 2}, 93)})); }
TEST(GradCheck, Clone) { EXPECT_GRADCHECK([](const Inputs& in) { return mul(in[0].clone(), in[0]); }, (Inputs{leaf({3}, 94)})); }
TEST(GradCheck, NonContiguousLeaf) {
  // The leaf itself is a transposed view of its storage: the checker perturbs it through its strides.
  Tensor base = leaf({3, 4}, 95).detach();
  Tensor x = base.t();
  x.set_requires_grad(true);
  EXPECT_GRADCHECK([](const Inputs& in) { return matmul(in[0], in[1]); }, (Inputs{x, leaf({3, 2}, 96)}));
}

}  // namespace
}  // namespace cppgrad
