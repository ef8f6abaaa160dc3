// Forward values worked out by hand, the defined behaviour at the edges (fully masked softmax rows, all-ignored
// targets, dropout modes), and the fast kernels held equal to their readable references.
#include <cmath>
#include <iostream>
#include <tuple>
#include <memory>
#include <limits>

#include "core/attention_reference.h"
#include "core/autograd.h"
#include "core/kernels/attention.h"
#include "core/kernels/exp.h"
#include "core/kernels/gelu.h"
#include "core/kernels/gemm.h"
#include "core/ops/dropout.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor f64(std::vector<double> v, Shape s) { return Tensor::from_vector<double>(v, s); }

TEST(OpValues, ArithmeticAndBroadcast) {
  Tensor a = f64({1, 2, 3, 4}, {2, 2});
  Tensor b = f64({10, 20}, {2});
  EXPECT_THAT(add(a, b).to_vector<double>(), ElementsAre(11, 22, 13, 24));
  EXPECT_THAT(sub(a, b).to_vector<double>(), ElementsAre(-9, -18, -7, -16));
  EXPECT_THAT(mul(a, b).to_vector<double>(), ElementsAre(10, 40, 30, 80));
  EXPECT_THAT(div(b, a).to_vector<double>(), ElementsAre(10, 10, 10.0 / 3, 5));
  EXPECT_THAT((2.0 - a).to_vector<double>(), ElementsAre(1, 0, -1, -2));
  EXPECT_THAT((1.0 / a).to_vector<double>(), ElementsAre(1, 0.5, 1.0 / 3, 0.25));
  EXPECT_THAT(pow(a, 2.0).to_vector<double>(), ElementsAre(1, 4, 9, 16));
  EXPECT_THAT(neg(a).to_vector<double>(), ElementsAre(-1, -2, -3, -4));
}

TEST(OpValues, Activations) {
  Tensor x = f64({-1, 0, 1}, {3});
  EXPECT_THAT(relu(x).to_vector<double>(), ElementsAre(0, 0, 1));
  EXPECT_THAT(sigmoid(x).to_vector<double>(),
              ElementsAre(DoubleNear(0.2689414213699951, 1e-15), 0.5, DoubleNear(0.7310585786300049, 1e-15)));
  // PyTorch: torch.nn.functional.gelu(torch.tensor([-1., 0., 1.], dtype=torch.float64))
  EXPECT_THAT(gelu(x).to_vector<double>(),
              ElementsAre(DoubleNear(-0.15865525393145707, 1e-15), 0, DoubleNear(0.8413447460685429, 1e-15)));
  // PyTorch: torch.nn.functional.gelu(torch.tensor([-3., -1., 0., .5, 1., 2.5], dtype=torch.float64),
  // approximate='tanh'); in float32 too, within float32 rounding
  const std::vector<double> gelu_tanh_torch{-0.0036373920817729943, -0.15880800939172324, 0.0,
                                            0.34571400982514394,    0.8411919906082768,   2.484915733910001};
  const Tensor xs = f64({-3, -1, 0, 0.5, 1, 2.5}, {6});
  const std::vector<double> got = gelu_tanh(xs).to_vector<double>(), got32 = gelu_tanh(xs.to(DType::Float32)).to_double_vector();
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], gelu_tanh_torch[i], 1e-15) << "x = " << xs.to_vector<double>()[i];
    EXPECT_NEAR(got32[i], gelu_tanh_torch[i], 1e-6) << "x = " << xs.to_vector<double>()[i];
  }
  EXPECT_THAT(tanh(x).to_vector<double>(), ElementsAre(DoubleNear(-0.7615941559557649, 1e-15), 0, DoubleNear(0.7615941559557649, 1e-15)));
  // sigmoid must not overflow for large |x|
  EXPECT_THAT(sigmoid(f64({-1000, 1000}, {2})).to_vector<double>(), ElementsAre(0.0, 1.0));
}

TEST(OpValues, Reductions) {
  Tensor x = f64({1, 5, 3, 4, 2, 6}, {2, 3});
  EXPECT_DOUBLE_EQ(sum(x).item(), 21);
  EXPECT_THAT(sum(x, {0}).to_vector<double>(), ElementsAre(5, 7, 9));
  EXPECT_EQ(sum(x, {1}, true).shape(), (Shape{2, 1}));
  EXPECT_THAT(mean(x, {1}).to_vector<double>(), ElementsAre(3, 4));
  EXPECT_THAT(max(x, 1).to_vector<double>(), ElementsAre(5, 6));
  EXPECT_THAT(max(x, 0).to_vector<double>(), ElementsAre(4, 5, 6));
  EXPECT_THAT(argmax(x, 1).to_vector<std::int64_t>(), ElementsAre(1, 2));
  EXPECT_THAT(argmax(x, 0, true).to_vector<std::int64_t>(), ElementsAre(1, 0, 1));
}

TEST(OpValues, MaxSendsTheGradientToTheFirstMaximum) {
  Tensor x = f64({2, 7, 7, 1}, {4});
  x.set_requires_grad(true);
  max(x, 0).backward();
  EXPECT_THAT(x.grad().to_vector<double>(), ElementsAre(0, 1, 0, 0));
}

TEST(OpValues, Matmul) {
  Tensor a = f64({1, 2, 3, 4}, {2, 2}), b = f64({5, 6, 7, 8}, {2, 2});
  EXPECT_THAT(matmul(a, b).to_vector<double>(), ElementsAre(19, 22, 43, 50));
  EXPECT_THAT(matmul(a, b.t()).to_vector<double>(), ElementsAre(17, 23, 39, 53));
  EXPECT_THAT(matmul(f64({1, 1}, {2}), b).to_vector<double>(), ElementsAre(12, 14));
  EXPECT_DOUBLE_EQ(matmul(f64({1, 2}, {2}), f64({3, 4}, {2})).item(), 11);
  EXPECT_EQ(matmul(Tensor::ones({2, 1, 3, 5}), Tensor::ones({4, 5, 2})).shape(), (Shape{2, 4, 3, 2}));
}

TEST(OpValues, SoftmaxAndLogSoftmax) {
  Tensor x = f64({1, 2, 3}, {3});
  EXPECT_THAT(softmax(x).to_vector<double>(), ElementsAre(DoubleNear(0.09003057317038046, 1e-15),
                                                          DoubleNear(0.24472847105479767, 1e-15),
                                                          DoubleNear(0.6652409557748219, 1e-15)));
  EXPECT_THAT(log_softmax(x).to_vector<double>(), ElementsAre(DoubleNear(-2.4076059644443806, 1e-14),
                                                              DoubleNear(-1.4076059644443806, 1e-14),
                                                              DoubleNear(-0.40760596444438063, 1e-14)));
  // Large logits do not overflow: the row maximum is subtracted first.
  EXPECT_THAT(softmax(f64({1000, 1000}, {2})).to_vector<double>(), ElementsAre(0.5, 0.5));
}

TEST(OpValues, SoftmaxOfAFullyMaskedRowIsZeroWithZeroGradient) {
  // Row 0 is entirely -inf (every key blocked): defined as all-zero weights, no NaN. Row 1 is normal.
  Tensor x = f64({-kInf, -kInf, -kInf, 0, 0, 0}, {2, 3});
  x.set_requires_grad(true);
  Tensor y = softmax(x, -1);
  EXPECT_THAT(y.to_vector<double>(), ElementsAre(0, 0, 0, DoubleNear(1.0 / 3, 1e-15), DoubleNear(1.0 / 3, 1e-15),
                                                 DoubleNear(1.0 / 3, 1e-15)));
  y.backward(f64({1, 2, 3, 1, 0, 0}, {2, 3}));
  for (int j = 0; j < 3; ++j) EXPECT_EQ(x.grad().at({0, j}), 0.0);
  for (double v : x.grad().to_vector<double>()) EXPECT_FALSE(std::isnan(v));
}

TEST(OpValues, LogSoftmaxOfAFullyMaskedRowIsMinusInfinityWithZeroGradient) {
  Tensor x = f64({-kInf, -kInf, 1, 2}, {2, 2});
  x.set_requires_grad(true);
  Tensor y = log_softmax(x, -1);
  EXPECT_EQ(y.at({0, 0}), -kInf);
  EXPECT_EQ(y.at({0, 1}), -kInf);
  EXPECT_NEAR(y.at({1, 1}), -0.31326168751822286, 1e-15);
  y.backward(Tensor::ones({2, 2}, DType::Float64));
  EXPECT_EQ(x.grad().at({0, 0}), 0.0);
  EXPECT_EQ(x.grad().at({0, 1}), 0.0);
}

TEST(OpValues, CrossEntropy) {
  // Uniform logits over 3 classes: -log(1/3) whatever the target.
  Tensor logits = Tensor::zeros({2, 3}, DType::Float64);
  EXPECT_NEAR(cross_entropy(logits, Tensor::from_vector<std::int64_t>({1, 2}, {2})).item(), std::log(3.0), 1e-15);
  // [2, 1, 0.1] with target 0: log(e^2 + e^1 + e^0.1) - 2
  Tensor l2 = f64({2, 1, 0.1}, {1, 3});
  EXPECT_NEAR(cross_entropy(l2, Tensor::from_vector<std::int64_t>({0}, {1})).item(), 0.4170300162778335, 1e-15);
}

TEST(OpValues, CrossEntropyMeanIsOverNonIgnoredTargetsOnly) {
  Tensor logits = f64({2, 1, 0.1, 9, 9, 9}, {2, 3});
  logits.set_requires_grad(true);
  Tensor loss = cross_entropy(logits, Tensor::from_vector<std::int64_t>({0, -100}, {2}));
  EXPECT_NEAR(loss.item(), 0.4170300162778335, 1e-15);  // the ignored row does not dilute the mean
  loss.backward();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(logits.grad().at({1, j}), 0.0);
}

TEST(OpValues, FloatCrossEntropyGivesALogitOfMinusInfinityExactlyZeroProbability) {
  // The float32 kernel's rows of 8 classes at a time and its scalar tail: a class at -inf (in either) gets exactly 0
  // probability, so exactly 0 gradient, as libm's exp(-inf) gives; the loss is the float64 definition's.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values(2 * 11);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i)) * 3;
  values[3] = -inf, values[11 + 9] = -inf;
  const Tensor x64 = Tensor::from_vector(values, {2, 11}, DType::Float64);
  Tensor x32 = x64.to(DType::Float32);
  x32.set_requires_grad(true);
  const Tensor targets = Tensor::from_vector<std::int64_t>({5, 10}, {2});
  const Tensor loss = cross_entropy(x32, targets);
  EXPECT_NEAR(loss.item(), cross_entropy(x64, targets).item(), 1e-6);
  loss.backward();
  EXPECT_EQ(x32.grad().at({0, 3}), 0.0);
  EXPECT_EQ(x32.grad().at({1, 9}), 0.0);
  EXPECT_NE(x32.grad().at({0, 4}), 0.0);
}

TEST(OpValues, CrossEntropyWithEveryTargetIgnoredIsNaNWithZeroGradient) {
  // As PyTorch: the mean over no target is 0 / 0 (F.cross_entropy(x, t, ignore_index=0) with t all 0 is nan).
  Tensor logits = f64({1, 2, 3, 4}, {2, 2});
  logits.set_requires_grad(true);
  Tensor loss = cross_entropy(logits, Tensor::from_vector<std::int64_t>({0, 0}, {2}), /*ignore_index=*/0);
  EXPECT_TRUE(std::isnan(loss.item()));
  loss.backward();
  EXPECT_THAT(logits.grad().to_vector<double>(), ElementsAre(0, 0, 0, 0));
}

TEST(OpValues, LayerNorm) {
  Tensor x = f64({1, 2, 3}, {1, 3});
  // mean 2, biased variance 2/3: (x - 2) / sqrt(2/3 + eps)
  const double r = 1.0 / std::sqrt(2.0 / 3.0 + 1e-5);
  EXPECT_THAT(layer_norm(x, Tensor(), Tensor(), 1e-5).to_vector<double>(),
              ElementsAre(DoubleNear(-r, 1e-15), DoubleNear(0, 1e-15), DoubleNear(r, 1e-15)));
  Tensor w = f64({2, 2, 2}, {3}), b = f64({1, 1, 1}, {3});
  EXPECT_THAT(layer_norm(x, w, b, 1e-5).to_vector<double>(),
              ElementsAre(DoubleNear(1 - 2 * r, 1e-14), DoubleNear(1, 1e-15), DoubleNear(1 + 2 * r, 1e-14)));
  EXPECT_THROW_MSG(layer_norm(x, f64({1, 1}, {2}), Tensor()), std::invalid_argument,
                   "layer_norm: weight has shape [2] but must be [3] for input [1, 3]");
}

TEST(OpValues, FusedLayerNormEqualsItsCompositionFromPrimitives) {
  // The same math written with mean/sub/pow/sqrt/div: forward values and every gradient must agree.
  Generator gen(21);
  Tensor x = Tensor::randn({3, 4, 6}, gen, DType::Float64), w = Tensor::randn({6}, gen, DType::Float64);
  Tensor b = Tensor::randn({6}, gen, DType::Float64), up = Tensor::randn({3, 4, 6}, gen, DType::Float64);
  auto grads = [&](bool fused) {
    Tensor xl = x.clone().set_requires_grad(), wl = w.clone().set_requires_grad(), bl = b.clone().set_requires_grad();
    Tensor y;
    if (fused) {
      y = layer_norm(xl, wl, bl, 1e-5);
    } else {
      Tensor centred = sub(xl, mean(xl, {-1}, true));
      Tensor var = mean(pow(centred, 2.0), {-1}, true);
      y = add(mul(div(centred, sqrt(add(var, 1e-5))), wl), bl);
    }
    sum(mul(y, up)).backward();
    return std::vector<std::vector<double>>{y.to_double_vector(), xl.grad().to_double_vector(),
                                            wl.grad().to_double_vector(), bl.grad().to_double_vector()};
  };
  const auto fused = grads(true), composed = grads(false);
  for (std::size_t k = 0; k < fused.size(); ++k)
    for (std::size_t i = 0; i < fused[k].size(); ++i) EXPECT_NEAR(fused[k][i], composed[k][i], 1e-12) << k << "/" << i;
}

TEST(OpValues, MaskedFillAndWhere) {
  Tensor x = f64({1, 2, 3, 4}, {2, 2});
  Tensor m = Tensor::from_vector<bool>({false, true}, {2});  // broadcast over rows
  EXPECT_THAT(masked_fill(x, m, -9).to_vector<double>(), ElementsAre(1, -9, 3, -9));
  EXPECT_THAT(where(m, x, Tensor::zeros({}, DType::Float64)).to_vector<double>(), ElementsAre(0, 2, 0, 4));
}

TEST(OpValues, CatStackIndexSelectGatherEmbedding) {
  Tensor a = f64({1, 2}, {1, 2}), b = f64({3, 4, 5, 6}, {2, 2});
  EXPECT_THAT(cat({a, b}, 0).to_vector<double>(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(stack({a, a}, 0).shape(), (Shape{2, 1, 2}));
  EXPECT_THAT(index_select(b, 1, Tensor::from_vector<std::int64_t>({1, 1, 0}, {3})).to_vector<double>(),
              ElementsAre(4, 4, 3, 6, 6, 5));
  EXPECT_THAT(gather(b, 1, Tensor::from_vector<std::int64_t>({1, 0}, {2, 1})).to_vector<double>(), ElementsAre(4, 5));
  Tensor table = f64({0, 0, 1, 1, 2, 2}, {3, 2});
  Tensor e = embedding(table, Tensor::from_vector<std::int64_t>({2, 0, 1, 2}, {2, 2}));
  EXPECT_EQ(e.shape(), (Shape{2, 2, 2}));
  EXPECT_THAT(e.to_vector<double>(), ElementsAre(2, 2, 0, 0, 1, 1, 2, 2));
}

TEST(OpValues, DropoutModes) {
  Tensor x = Tensor::ones({10000}, DType::Float64);
  Generator gen(1);
  EXPECT_TRUE(dropout(x, 0.5, /*training=*/false, gen).same(x));  // eval: identity, no copy
  EXPECT_TRUE(dropout(x, 0.0, /*training=*/true, gen).same(x));
  Tensor y = dropout(x, 0.25, true, gen);
  std::int64_t zeros = 0;
  for (double v : y.to_vector<double>()) {
    if (v == 0.0) ++zeros;
    else EXPECT_DOUBLE_EQ(v, 1.0 / 0.75);  // survivors are scaled so the mean is unchanged
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 10000, 0.25, 0.02);
  Generator g1(9), g2(9);
  EXPECT_EQ(dropout(x, 0.3, true, g1).to_vector<double>(), dropout(x, 0.3, true, g2).to_vector<double>());
  EXPECT_EQ(sum(dropout(x, 1.0, true, gen)).item(), 0.0);
  EXPECT_THROW_MSG(dropout(x, 1.5, true, gen), std::invalid_argument, "dropout: p must be in [0, 1]");
}

TEST(OpValues, Float32AndFloat64RunTheSameCode) {
  Generator gen(11);
  Tensor x64 = Tensor::randn({4, 8}, gen, DType::Float64);
  Tensor w64 = Tensor::randn({8, 8}, gen, DType::Float64);
  auto f = [](const Tensor& x, const Tensor& w) { return log_softmax(layer_norm(gelu(matmul(x, w)), Tensor(), Tensor()), -1); };
  const auto y64 = f(x64, w64).to_vector<double>();
  const auto y32 = f(x64.to(DType::Float32), w64.to(DType::Float32)).to(DType::Float64).to_vector<double>();
  for (std::size_t i = 0; i < y64.size(); ++i) EXPECT_NEAR(y32[i], y64[i], 1e-4 * (1 + std::abs(y64[i])));
}

// ---------------------------------------------------------------- fast kernels against the references
template <typename T>
void expect_gemm_matches_reference(std::int64_t M, std::int64_t N, std::int64_t K, bool a_transposed, bool b_transposed) {
  Generator gen(static_cast<std::uint64_t>(M * 131 + N * 17 + K));
  const DType dt = dtype_of<T>();
  Tensor A = Tensor::randn(a_transposed ? Shape{K, M} : Shape{M, K}, gen, dt);
  Tensor B = Tensor::randn(b_transposed ? Shape{N, K} : Shape{K, N}, gen, dt);
  kernels::MatrixRef<T> a{A.data<T>(), a_transposed ? 1 : K, a_transposed ? M : 1};
  kernels::MatrixRef<T> b{B.data<T>(), b_transposed ? 1 : N, b_transposed ? K : 1};
  std::vector<T> fast(M * N), ref(M * N);
  kernels::gemm<T>(M, N, K, a, b, fast.data());
  kernels::gemm_reference<T>(M, N, K, a, b, ref.data());
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  for (std::size_t i = 0; i < fast.size(); ++i)
    ASSERT_NEAR(fast[i], ref[i], tol * std::sqrt(static_cast<double>(K)) * (1 + std::abs(ref[i])))
        << "M=" << M << " N=" << N << " K=" << K << " at " << i;
}

TEST(OpValues, LinearEqualsMatmulPlusBiasWithTheSameGradients) {
  for (const DType dtype : {DType::Float64, DType::Float32}) {
    const double tol = dtype == DType::Float64 ? 1e-12 : 1e-5;
    Generator gen(21);
    const Tensor x0 = Tensor::randn({3, 5, 7}, gen, dtype), w0 = Tensor::randn({6, 7}, gen, dtype),
                 b0 = Tensor::randn({6}, gen, dtype), up = Tensor::randn({3, 5, 6}, gen, dtype);
    std::vector<std::vector<double>> results[2];
    for (int fused = 0; fused < 2; ++fused) {
      Tensor x = x0.clone(), w = w0.clone(), b = b0.clone();
      for (Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
      const Tensor y = fused ? linear(x, w, b) : add(matmul(x, w.t()), b);
      sum(mul(y, up)).backward();
      for (const Tensor& t : {y, x.grad(), w.grad(), b.grad()}) results[fused].push_back(t.to(DType::Float64).to_vector<double>());
    }
    for (std::size_t k = 0; k < results[0].size(); ++k)
      for (std::size_t i = 0; i < results[0][k].size(); ++i)
        ASSERT_NEAR(results[1][k][i], results[0][k][i], tol) << "tensor " << k << " element " << i;
  }
  EXPECT_THROW_MSG(linear(Tensor::zeros({2, 3}), Tensor::zeros({4, 5})), std::invalid_argument,
                   "x [2, 3], weight [4, 5]");
  // No input features: every row is the bias (an empty sum plus b), as PyTorch's F.linear.
  const Tensor y = linear(Tensor::zeros({3, 0}), Tensor::zeros({2, 0}), Tensor::from_vector<float>({5, -1}, {2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, -1, 5, -1, 5, -1}));
  EXPECT_EQ(linear_relu(Tensor::zeros({3, 0}), Tensor::zeros({2, 0}), Tensor::from_vector<float>({5, -1}, {2}))
                .to_vector<float>(),
            (std::vector<float>{5, 0, 5, 0, 5, 0}));
}

TEST(OpValues, LinearReluEqualsReluOfLinearWithTheSameGradients) {
  for (const DType dtype : {DType::Float64, DType::Float32}) {
    const double tol = dtype == DType::Float64 ? 1e-12 : 1e-5;
    for (const bool with_bias : {true, false}) {
      Generator gen(22);
      const Tensor x0 = Tensor::randn({3, 5, 7}, gen, dtype), w0 = Tensor::randn({6, 7}, gen, dtype),
                   b0 = Tensor::randn({6}, gen, dtype), up = Tensor::randn({3, 5, 6}, gen, dtype);
      std::vector<std::vector<double>> results[2];
      for (int fused = 0; fused < 2; ++fused) {
        Tensor x = x0.clone(), w = w0.clone(), b = with_bias ? b0.clone() : Tensor();
        for (Tensor* t : {&x, &w}) t->set_requires_grad(true);
        if (with_bias) b.set_requires_grad(true);
        const Tensor y = fused ? linear_relu(x, w, b) : relu(linear(x, w, b));
        sum(mul(y, up)).backward();
        for (const Tensor& t : {y, x.grad(), w.grad()}) results[fused].push_back(t.to(DType::Float64).to_vector<double>());
        if (with_bias) results[fused].push_back(b.grad().to(DType::Float64).to_vector<double>());
      }
      std::int64_t zeros = 0;
      for (double v : results[0][0]) zeros += v == 0.0;
      ASSERT_GT(zeros, 10) << "the relu must cut some outputs, or its mask goes untested";
      if (dtype == DType::Float32 && with_bias) {  // NaN goes to 0, as relu's does
        const Tensor x_nan = Tensor::full({1, 7}, std::nan(""));
        EXPECT_EQ(linear_relu(x_nan, w0, b0).to_vector<float>(), relu(linear(x_nan, w0, b0)).to_vector<float>());
      }
      for (std::size_t k = 0; k < results[0].size(); ++k)
        for (std::size_t i = 0; i < results[0][k].size(); ++i)
          ASSERT_NEAR(results[1][k][i], results[0][k][i], tol) << "tensor " << k << " element " << i;
    }
  }
}

TEST(Kernels, ExpFloatOfNaNIsNaN) {
  // A diverged run's logits are NaN: e^NaN must be NaN (so the loss check sees it), without the undefined
  // float-to-int conversion the exponent step would make of it (the sanitizer build stops at that).
  EXPECT_TRUE(std::isnan(cppgrad::kernels::exp_float(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(cppgrad::kernels::exp_float(-std::numeric_limits<float>::quiet_NaN())));
}

TEST(Kernels, ExpFloatMatchesLibm) {
  // Every 1/1000 across the range softmax sees after subtracting the row maximum, and up to the overflow edge.
  double worst = 0;
  for (int i = -87000; i <= 88000; ++i) {
    const float x = static_cast<float>(i) / 1000.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(kernels::exp_float(x) - want) / want);
  }
  EXPECT_LT(worst, 2.5e-7) << "more than about 2 ulp from the exact value";  // float ulp: 1.19e-7 relative
  EXPECT_EQ(kernels::exp_float(0.0f), 1.0f);
  EXPECT_LT(kernels::exp_float(-std::numeric_limits<float>::infinity()), 1e-37f);
}

TEST(Kernels, EverySimdLevelsGeluTanhMatchesTheDefinition) {
  // The fused GELU loops on each path the CPU can run (8 lanes always; 16 with AVX-512) against the definition in
  // double, forward and backward, over [-12, 12] and lengths that leave a scalar tail.
  std::vector<kernels::SimdLevel> levels{kernels::SimdLevel::Avx2};
  if (kernels::cpu_has_avx512()) levels.push_back(kernels::SimdLevel::Avx512);
  constexpr double c = 0.7978845608028654, a = 0.044715;
  for (const kernels::SimdLevel level : levels)
    for (const std::int64_t n : {1, 7, 8, 15, 16, 17, 100, 2401}) {
      std::vector<float> x(static_cast<std::size_t>(n)), g(x.size()), y(x.size()), dx(x.size());
      for (std::int64_t i = 0; i < n; ++i)
        x[i] = static_cast<float>(-12.0 + 24.0 * static_cast<double>(i) / static_cast<double>(std::max<std::int64_t>(1, n - 1))),
        g[i] = static_cast<float>(std::cos(0.7 * static_cast<double>(i)));
      kernels::gelu_tanh_forward_at(level, x.data(), y.data(), n);
      kernels::gelu_tanh_backward_at(level, g.data(), x.data(), dx.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = x[i], t = std::tanh(c * (v + a * v * v * v));
        const double want_y = 0.5 * v * (1 + t);
        const double want_dx = g[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * c * (1 + 3 * a * v * v));
        ASSERT_NEAR(y[i], want_y, 4e-7 * (1 + std::abs(want_y))) << kernels::simd_level_name(level) << " x = " << v;
        ASSERT_NEAR(dx[i], want_dx, 4e-7 * (1 + std::abs(want_dx))) << kernels::simd_level_name(level) << " x = " << v;
      }
    }
}

TEST(OpValues, FloatSoftmaxGivesMaskedEntriesExactZerosAndMatchesFloat64) {
  Generator gen(8);
  Tensor x = Tensor::randn({4, 37}, gen, DType::Float64);  // 37: vector lanes and a remainder
  x = mul(x, 6.0);
  Tensor mask = Tensor::zeros({4, 37}, DType::Bool);
  for (std::int64_t j = 0; j < 37; j += 3) mask.set({1, j}, 1);
  x = masked_fill(x, mask, -std::numeric_limits<double>::infinity());
  const auto want = softmax(x, -1).to_vector<double>();
  const auto got = softmax(x.to(DType::Float32), -1).to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0.0) {
      EXPECT_EQ(got[i], 0.0f) << i;
    }
    EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, want[i])) << i;
  }
}

TEST(OpValues, FloatLayerNormMatchesFloat64) {
  // Rows of 32 (whole 8-lane vectors: the vector kernel) and of 13 (the plain loops), affine, with and without a
  // graph (without one, the op keeps no normalised copy for backward); gradients too, against float64.
  Generator gen(21);
  for (std::int64_t D : {32, 13}) {
    Tensor x = add(mul(Tensor::randn({9, D}, gen, DType::Float64), 3.0), 1.5);
    Tensor w = Tensor::randn({D}, gen, DType::Float64), b = Tensor::randn({D}, gen, DType::Float64);
    const Tensor want = layer_norm(x, w, b);
    Tensor xf = x.to(DType::Float32).set_requires_grad(), wf = w.to(DType::Float32).set_requires_grad();
    const Tensor got = layer_norm(xf, wf, b.to(DType::Float32));
    test::expect_all_close(got, want, 2e-6);
    {
      NoGradGuard no_grad;
      EXPECT_EQ(layer_norm(xf, wf, b.to(DType::Float32)).to_vector<float>(), got.to_vector<float>());
    }
    const Tensor upstream = Tensor::randn({9, D}, gen, DType::Float64);
    sum(mul(got, upstream.to(DType::Float32))).backward();
    Tensor x64 = x.detach().set_requires_grad(), w64 = w.detach().set_requires_grad();
    sum(mul(layer_norm(x64, w64, b), upstream)).backward();
    test::expect_all_close(xf.grad(), x64.grad(), 2e-5);
    test::expect_all_close(wf.grad(), w64.grad(), 2e-5);
  }
}

TEST(Kernels, GemmMatchesReference) {
  // Plain-loop sizes, and tiled sizes with partial micro-tiles (M % 6, N % 16), several k-blocks (K > 256) and
  // several column blocks (N > 256).
  for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {8, 8, 8}, {64, 32, 32},
                                                                  {100, 50, 300}, {7, 33, 65}, {512, 64, 32}, {13, 300, 20},
                                                                  {9, 4, 70}, {5, 8, 80}, {6, 4, 3}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        expect_gemm_matches_reference<float>(M, N, K, ta, tb);
        expect_gemm_matches_reference<double>(M, N, K, ta, tb);
      }
}

TEST(Kernels, EverySimdLevelsGemmMatchesTheReference) {
  // The tiled float GEMM on each path the CPU can run (AVX2 + FMA always; AVX-512 when the CPU has it; WebAssembly's
  // 5 x 8 tile in that build) against the plain loops: panels partly past N, several k-blocks, transposed operands (a
  // transposed A is packed, a transposed B gathered column by column), every count of rows in the last row block
  // (M % 5 from 0 to 4). CPPGRAD_SIMD only picks the default.
  std::vector<kernels::SimdLevel> levels{kernels::SimdLevel::Avx2};
  if (kernels::cpu_has_avx512()) levels.push_back(kernels::SimdLevel::Avx512);
  else std::cout << "[ info ] this CPU has no AVX-512: only the AVX2 path is tested\n";
  Generator gen(31);
  for (const kernels::SimdLevel level : levels)
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{64, 32, 32}, {512, 64, 32}, {37, 70, 300},
                                                                    {6, 32, 8}, {100, 33, 65}, {512, 512, 512},
                                                                    {70, 100, 600}, {71, 64, 40}, {59, 96, 300},
                                                                    {23, 44, 257}})
      for (const bool a_transposed : {false, true})
        for (const bool b_transposed : {false, true}) {
          const Tensor a = Tensor::randn(a_transposed ? Shape{K, M} : Shape{M, K}, gen);
          const Tensor b = Tensor::randn(b_transposed ? Shape{N, K} : Shape{K, N}, gen);
          const kernels::MatrixRef<float> A{a.data<float>(), a_transposed ? 1 : K, a_transposed ? M : 1};
          const kernels::MatrixRef<float> B{b.data<float>(), b_transposed ? 1 : N, b_transposed ? K : 1};
          std::vector<float> fast(static_cast<std::size_t>(M * N)), ref(fast.size());
          kernels::gemm_at_level(level, M, N, K, A, B, fast.data());
          kernels::gemm_reference<float>(M, N, K, A, B, ref.data());
          for (std::size_t i = 0; i < ref.size(); ++i)
            ASSERT_NEAR(fast[i], ref[i], 1e-4 * std::sqrt(static_cast<double>(K)) * (1 + std::abs(ref[i])))
                << kernels::simd_level_name(level) << " M=" << M << " N=" << N << " K=" << K << " A^T " << a_transposed
                << " B^T " << b_transposed << " at " << i;
        }
}

TEST(Kernels, FastAttentionMatchesTheReferenceKernel) {
  // The 8-lane float kernels against the plain loops, forward and backward, at the model's head size and at sizes
  // that leave vectors partly padded (Lk, dk, dv not multiples of 8, several vectors per row), with strided rows, a
  // random mask and one query row with no key at all.
  Generator gen(12);
  // One query against at most 8 keys (a decoding step) has a path of its own: {1, 5, 8, 8}, {1, 8, 16, 16}, {1, 3, 8, 24}.
  for (auto [Lq, Lk, dk, dv] : std::vector<std::array<std::int64_t, 4>>{{8, 8, 8, 8}, {1, 9, 8, 8}, {7, 13, 11, 19},
                                                                       {3, 17, 24, 5}, {5, 1, 3, 2}, {1, 5, 8, 8},
                                                                       {1, 8, 16, 16}, {1, 3, 8, 24},
                                                                       {17, 35, 32, 40}}) {  // the last on the GEMM
    const std::int64_t rs = 40;  // every matrix's rows are 40 floats apart, as heads inside a wider row are
    auto rows = [&](std::int64_t n) { return Tensor::randn({n, rs}, gen).to_vector<float>(); };
    const auto q = rows(Lq), k = rows(Lk), v = rows(Lk), dout = rows(Lq);
    std::vector<char> mask_bytes(static_cast<std::size_t>(Lq * Lk));
    const auto coin = Tensor::rand({Lq * Lk}, gen).to_vector<float>();
    for (std::size_t e = 0; e < mask_bytes.size(); ++e) mask_bytes[e] = coin[e] < 0.7f;
    if (Lq > 1)
      for (std::int64_t j = 0; j < Lk; ++j) mask_bytes[static_cast<std::size_t>(j)] = 0;  // query 0: no key
    else
      mask_bytes[0] = 1;  // a single query keeps at least one key
    std::unique_ptr<bool[]> mask(new bool[mask_bytes.size()]);
    for (std::size_t e = 0; e < mask_bytes.size(); ++e) mask[e] = mask_bytes[e] != 0;
    const kernels::AttentionDims dims{Lq, Lk, dk, dv, 1.0 / std::sqrt(static_cast<double>(dk))};
    const kernels::AttentionHead<float> head{q.data(), rs, k.data(), rs, v.data(), rs, mask.get(), Lk, 1};
    std::vector<float> w_fast(Lq * Lk), w_ref(Lq * Lk), o_fast(Lq * rs, -1), o_ref(Lq * rs, -1);
    kernels::attention_forward<float>(dims, head, w_fast.data(), o_fast.data(), rs);
    test::attention_forward_reference<float>(dims, head, w_ref.data(), o_ref.data(), rs);
    for (std::size_t e = 0; e < w_ref.size(); ++e) EXPECT_NEAR(w_fast[e], w_ref[e], 1e-6) << "weight " << e;
    for (std::size_t e = 0; e < o_ref.size(); ++e) EXPECT_NEAR(o_fast[e], o_ref[e], 1e-5) << "output " << e;
    std::vector<float> g_fast[3], g_ref[3];
    for (int t = 0; t < 3; ++t) g_fast[t].assign(std::max(Lq, Lk) * rs, -1), g_ref[t].assign(std::max(Lq, Lk) * rs, -1);
    kernels::attention_backward<float>(dims, head, w_ref.data(),
                                       {dout.data(), rs, g_fast[0].data(), rs, g_fast[1].data(), rs, g_fast[2].data(), rs});
    test::attention_backward_reference<float>(dims, head, w_ref.data(),
                                                 {dout.data(), rs, g_ref[0].data(), rs, g_ref[1].data(), rs, g_ref[2].data(), rs});
    for (int t = 0; t < 3; ++t)
      for (std::size_t e = 0; e < g_ref[t].size(); ++e) EXPECT_NEAR(g_fast[t][e], g_ref[t][e], 1e-5) << "grad " << t << " " << e;
  }
}

TEST(Kernels, FastAttentionReadsTightRowsAndBroadcastMasks) {
  // Every matrix exactly its size on the heap, rows packed tight (a read past the last row shows under ASan), and
  // the two broadcast masks: one row of key padding for every query (row stride 0) and one flag per query for every
  // key (column stride 0).
  Generator gen(13);
  for (auto [Lq, Lk, dk, dv] : std::vector<std::array<std::int64_t, 4>>{{8, 8, 8, 8}, {1, 5, 8, 8}, {3, 9, 5, 11},
                                                                       {6, 16, 16, 3}, {16, 33, 32, 35}}) {
    auto matrix = [&](std::int64_t rows, std::int64_t cols) { return Tensor::randn({rows, cols}, gen).to_vector<float>(); };
    const auto q = matrix(Lq, dk), k = matrix(Lk, dk), v = matrix(Lk, dv), dout = matrix(Lq, dv);
    std::unique_ptr<bool[]> keys(new bool[static_cast<std::size_t>(Lk)]), queries(new bool[static_cast<std::size_t>(Lq)]);
    for (std::int64_t j = 0; j < Lk; ++j) keys[static_cast<std::size_t>(j)] = j % 3 != 2;
    for (std::int64_t i = 0; i < Lq; ++i) queries[static_cast<std::size_t>(i)] = i % 2 == 0;
    const kernels::AttentionDims dims{Lq, Lk, dk, dv, 1.0 / std::sqrt(static_cast<double>(dk))};
    for (const auto& [mask, rs, cs] : std::vector<std::tuple<const bool*, std::int64_t, std::int64_t>>{
             {keys.get(), 0, 1}, {queries.get(), 1, 0}}) {
      const kernels::AttentionHead<float> head{q.data(), dk, k.data(), dk, v.data(), dv, mask, rs, cs};
      std::vector<float> w_fast(Lq * Lk), w_ref(Lq * Lk), o_fast(Lq * dv), o_ref(Lq * dv);
      kernels::attention_forward<float>(dims, head, w_fast.data(), o_fast.data(), dv);
      test::attention_forward_reference<float>(dims, head, w_ref.data(), o_ref.data(), dv);
      for (std::size_t e = 0; e < w_ref.size(); ++e) EXPECT_NEAR(w_fast[e], w_ref[e], 1e-6) << "weight " << e;
      for (std::size_t e = 0; e < o_ref.size(); ++e) EXPECT_NEAR(o_fast[e], o_ref[e], 1e-5) << "output " << e;
      std::vector<float> dq_f(Lq * dk), dk_f(Lk * dk), dv_f(Lk * dv), dq_r(Lq * dk), dk_r(Lk * dk), dv_r(Lk * dv);
      kernels::attention_backward<float>(dims, head, w_ref.data(),
                                         {dout.data(), dv, dq_f.data(), dk, dk_f.data(), dk, dv_f.data(), dv});
      test::attention_backward_reference<float>(dims, head, w_ref.data(),
                                                   {dout.data(), dv, dq_r.data(), dk, dk_r.data(), dk, dv_r.data(), dv});
      for (std::size_t e = 0; e < dq_r.size(); ++e) EXPECT_NEAR(dq_f[e], dq_r[e], 1e-5) << "dq " << e;
      for (std::size_t e = 0; e < dk_r.size(); ++e) EXPECT_NEAR(dk_f[e], dk_r[e], 1e-5) << "dk " << e;
      for (std::size_t e = 0; e < dv_r.size(); ++e) EXPECT_NEAR(dv_f[e], dv_r[e], 1e-5) << "dv " << e;
    }
  }
}

TEST(Kernels, FastAttentionSkipsOnlyWhatTheMasksReachLeavesOut) {
  // With a mask's reach (attention_reach) the kernels leave out the pairs it blocks wholesale. Causal masks at the GPT
  // benchmarks' head sizes (24 x 16 on the 8-lane products, 128 x 64 on the GEMM) and others, and a random mask with
  // holes, some rows keyless and the second half of the keys blocked for every query; the rows of K and V from the
  // first whole vector of 8 keys past the reach hold NaN, which a kernel that read them (0 * NaN) would spread (the
  // 8-lane kernels read the reach rounded up to whole vectors): the reference reads finite copies.
  Generator gen(14);
  for (auto [Lq, Lk, dk, dv] : std::vector<std::array<std::int64_t, 4>>{{24, 24, 16, 16}, {128, 128, 64, 64}, {40, 40, 32, 32},
                                                                       {17, 35, 32, 40}, {13, 13, 8, 8}, {9, 21, 5, 3}}) {
    for (bool causal : {true, false}) {
      const std::int64_t rs = 72;
      auto rows = [&](std::int64_t n) { return Tensor::randn({n, rs}, gen).to_vector<float>(); };
      const auto q = rows(Lq), k = rows(Lk), v = rows(Lk), dout = rows(Lq);
      std::unique_ptr<bool[]> mask(new bool[static_cast<std::size_t>(Lq * Lk)]);
      const auto coin = Tensor::rand({Lq * Lk}, gen).to_vector<float>();
      const std::int64_t unreached = causal ? 0 : Lk / 2;  // the last keys, blocked for every query
      for (std::int64_t i = 0; i < Lq; ++i)
        for (std::int64_t j = 0; j < Lk; ++j)
          mask[i * Lk + j] = causal ? j <= i : (j < Lk - unreached && i % 5 != 1 && coin[i * Lk + j] < 0.6f);
      std::vector<std::int64_t> key_end(Lq), query_begin(Lk);
      const kernels::AttentionDims dims{Lq, Lk, dk, dv, 1.0 / std::sqrt(static_cast<double>(dk))};
      kernels::attention_reach(dims, mask.get(), Lk, 1, key_end.data(), query_begin.data());
      for (std::int64_t i = 0; causal && i < Lq; ++i) EXPECT_EQ(key_end[i], std::min(i + 1, Lk));
      auto k_nan = k, v_nan = v;
      for (std::int64_t j = (Lk - unreached + 7) / 8 * 8; j < Lk; ++j)
        for (std::int64_t e = 0; e < rs; ++e) k_nan[j * rs + e] = v_nan[j * rs + e] = std::nanf("");
      kernels::AttentionHead<float> head{q.data(), rs, k_nan.data(), rs, v_nan.data(), rs, mask.get(), Lk, 1};
      head.key_end = key_end.data(), head.query_begin = query_begin.data();
      const kernels::AttentionHead<float> finite{q.data(), rs, k.data(), rs, v.data(), rs, mask.get(), Lk, 1};
      std::vector<float> w_fast(Lq * Lk), w_ref(Lq * Lk), o_fast(Lq * rs, -1), o_ref(Lq * rs, -1);
      kernels::attention_forward<float>(dims, head, w_fast.data(), o_fast.data(), rs);
      test::attention_forward_reference<float>(dims, finite, w_ref.data(), o_ref.data(), rs);
      for (std::size_t e = 0; e < w_ref.size(); ++e) ASSERT_NEAR(w_fast[e], w_ref[e], 1e-6) << "weight " << e << " " << Lq;
      for (std::size_t e = 0; e < o_ref.size(); ++e) ASSERT_NEAR(o_fast[e], o_ref[e], 1e-5) << "output " << e << " " << Lq;
      std::vector<float> g_fast[3], g_ref[3];
      for (int t = 0; t < 3; ++t) g_fast[t].assign(std::max(Lq, Lk) * rs, -1), g_ref[t].assign(std::max(Lq, Lk) * rs, -1);
      kernels::attention_backward<float>(dims, head, w_ref.data(),
                                         {dout.data(), rs, g_fast[0].data(), rs, g_fast[1].data(), rs, g_fast[2].data(), rs});
      test::attention_backward_reference<float>(dims, finite, w_ref.data(),
                                                   {dout.data(), rs, g_ref[0].data(), rs, g_ref[1].data(), rs, g_ref[2].data(), rs});
      for (int t = 0; t < 3; ++t)
        for (std::size_t e = 0; e < g_ref[t].size(); ++e)
          ASSERT_NEAR(g_fast[t][e], g_ref[t][e], 1e-4) << "grad " << t << " " << e << " " << Lq << (causal ? " causal" : "");
    }
  }
}

TEST(Kernels, FastAttentionGivesAQueryWithNoKeyZeroWeightsAndOutput) {
  // One query (the decoding path) and a row of eight (the general path), every key blocked.
  for (std::int64_t Lq : {1, 8}) {
    std::vector<float> q(Lq * 8, 1.0f), k(5 * 8, 2.0f), v(5 * 8, 3.0f), w(Lq * 5, -1.0f), o(Lq * 8, -1.0f);
    bool mask[8 * 5] = {};
    const kernels::AttentionHead<float> head{q.data(), 8, k.data(), 8, v.data(), 8, mask, 5, 1};
    kernels::attention_forward<float>({Lq, 5, 8, 8, 0.35}, head, w.data(), o.data(), 8);
    for (float x : w) EXPECT_EQ(x, 0.0f);
    for (float x : o) EXPECT_EQ(x, 0.0f);
  }
}

TEST(Kernels, GroupedOneQueryAttentionMatchesTheReferenceHeadByHead) {
  // Eight decoding heads at once (one per lane) against the plain loops run on each head alone. The heads differ in
  // every way the group must keep apart: their own memory and row strides, a mask on some heads and none on others
  // (one head with every key blocked), and key counts on both sides of a whole vector.
  Generator gen(14);
  for (std::int64_t Lk : {std::int64_t{1}, std::int64_t{3}, std::int64_t{8}, std::int64_t{9}, std::int64_t{17}, kernels::kMaxGroupedKeys}) {
    const kernels::AttentionDims dims{1, Lk, 8, 8, 1.0 / std::sqrt(8.0)};
    ASSERT_TRUE(kernels::one_query_group_applies(dims));
    std::vector<float> q[8], k[8], v[8], o_ref[8], o_group[8];
    std::unique_ptr<bool[]> mask[8];
    kernels::AttentionHead<float> heads[8];
    float* outs[8];
    for (int i = 0; i < 8; ++i) {
      const std::int64_t rs = 8 + 4 * i;  // head i's rows are 8 + 4i floats apart
      q[i] = Tensor::randn({8}, gen).to_vector<float>();
      k[i] = Tensor::randn({Lk * rs}, gen).to_vector<float>();
      v[i] = Tensor::randn({Lk * rs}, gen).to_vector<float>();
      o_ref[i].assign(8, -1.0f), o_group[i].assign(8, -2.0f);
      outs[i] = o_group[i].data();
      heads[i] = {q[i].data(), 8, k[i].data(), rs, v[i].data(), rs};
      if (i % 3 == 0) continue;  // heads 0, 3 and 6 have no mask
      mask[i].reset(new bool[static_cast<std::size_t>(Lk)]);
      for (std::int64_t j = 0; j < Lk; ++j) mask[i][static_cast<std::size_t>(j)] = i != 5 && (j + i) % 3 != 0;
      heads[i].mask = mask[i].get(), heads[i].mask_rs = 0, heads[i].mask_cs = 1;  // head 5: every key blocked
    }
    std::vector<float> w_group(8 * Lk, -2.0f), w_ref(8 * Lk, -1.0f);
    kernels::attention_forward_one_query_group(dims, heads, w_group.data(), outs);
    for (int i = 0; i < 8; ++i) {
      test::attention_forward_reference<float>(dims, heads[i], w_ref.data() + i * Lk, o_ref[i].data(), 8);
      for (std::int64_t j = 0; j < Lk; ++j)
        EXPECT_NEAR(w_group[i * Lk + j], w_ref[i * Lk + j], 1e-6) << "Lk " << Lk << " head " << i << " key " << j;
      for (int e = 0; e < 8; ++e) EXPECT_NEAR(o_group[i][e], o_ref[i][e], 1e-5) << "Lk " << Lk << " head " << i;
    }
    for (std::int64_t j = 0; j < Lk; ++j) EXPECT_EQ(w_group[5 * Lk + j], 0.0f) << "head 5 has no key";
  }
}

TEST(Kernels, BatchedMatmulMatchesPerMatrixProducts) {
  Generator gen(5);
  Tensor a = Tensor::randn({3, 1, 4, 6}, gen, DType::Float64);
  Tensor b = Tensor::randn({2, 6, 5}, gen, DType::Float64);
  Tensor c = matmul(a, b);  // (3, 2, 4, 5)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      Tensor expect = matmul(a.select(0, i).select(0, 0).contiguous(), b.select(0, j).contiguous());
      const auto got = c.select(0, i).select(0, j).to_vector<double>();
      const auto want = expect.to_vector<double>();
      for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-12);
    }
}

TEST(Kernels, ParallelMatmulIsBitIdenticalToSerial) {
  // Large enough to take the threaded path; threads own disjoint rows, so results cannot depend on timing.
  Generator gen(8);
  Tensor a = Tensor::randn({256, 128}, gen), b = Tensor::randn({128, 96}, gen);
  const auto first = matmul(a, b).to_vector<float>();
  for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(matmul(a, b).to_vector<float>(), first);
}

}  // namespace
}  // namespace cppgrad
