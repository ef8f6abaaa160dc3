// The linear precision (core/precision.h): under bfloat16, linear's three products are the bfloat16 GEMM's definition
// (core/kernels/gemm_bf16.h) bit for bit, forward and backward, in the fused op and in linear's definition alike,
// and the backward keeps its forward's precision; matmul, float64 and everything outside the scope stay as they were.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/gemm.h"
#include "core/kernels/gemm_bf16.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/precision.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using kernels::MatrixRef;

// Element bits of a float32 tensor, for comparisons that must be exact.
std::vector<std::uint32_t> bits_of(const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// C [M, N] = the definition's product of A and B, each read with the strides given.
std::vector<float> bf16_product(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A,
                                MatrixRef<float> B) {
  std::vector<float> c(static_cast<std::size_t>(M * N));
  kernels::gemm_bf16_reference(M, N, K, A, B, c.data(), N);
  return c;
}

struct LinearRun {
  Tensor y, dx, dw, db;
};

// y = linear(x, w, b) under `precision` (the scope ends before backward), then backward with upstream g.
LinearRun run_linear(LinearPrecision precision, const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& g) {
  Tensor x = x0.detach().clone().set_requires_grad(), w = w0.detach().clone().set_requires_grad(),
         b = b0.detach().clone().set_requires_grad();
  Tensor y;
  {
    LinearPrecisionGuard scope(precision);
    y = linear(x, w, b);
  }
  sum(mul(y, g)).backward();
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

class LinearPrecisionTest : public ::testing::Test {
 protected:
  // 37 rows (not a multiple of any tile's), 70 inputs (over two k-pairs' blocks: odd K would be 69), 45 outputs.
  static constexpr std::int64_t rows = 37, in = 70, out = 45;
  Generator gen{7};
  Tensor x = Tensor::randn({rows, in}, gen), w = Tensor::randn({out, in}, gen), b = Tensor::randn({out}, gen),
         g = Tensor::randn({rows, out}, gen);
};

TEST_F(LinearPrecisionTest, EachProductIsTheBfloat16DefinitionForwardAndBackward) {
  const LinearRun r = run_linear(LinearPrecision::BFloat16, x, w, b, g);
  const float *px = x.data<float>(), *pw = w.data<float>(), *pg = g.data<float>();
  // y = x W^T + b: the product, then the bias added in float32
  std::vector<float> y = bf16_product(rows, out, in, {px, in, 1}, {pw, 1, in});
  const std::vector<float> bias = b.to_vector<float>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < out; ++j) y[i * out + j] += bias[j];
  EXPECT_EQ(bits_of(r.y), bits_of(y));
  EXPECT_EQ(bits_of(r.dx), bits_of(bf16_product(rows, in, out, {pg, out, 1}, {pw, in, 1})));  // dx = g W
  EXPECT_EQ(bits_of(r.dw), bits_of(bf16_product(out, in, rows, {pg, 1, out}, {px, in, 1})));  // dW = g^T x
  const LinearRun fp32 = run_linear(LinearPrecision::Float32, x, w, b, g);
  EXPECT_EQ(bits_of(r.db), bits_of(fp32.db));  // a sum of g, no product
  EXPECT_NE(bits_of(r.y), bits_of(fp32.y));    // the scope changed the products
}

TEST_F(LinearPrecisionTest, LinearsDefinitionGivesTheKernelsBits) {
  const LinearRun fused = run_linear(LinearPrecision::BFloat16, x, w, b, g);
  ReferenceModeGuard definitions;
  const LinearRun composed = run_linear(LinearPrecision::BFloat16, x, w, b, g);
  EXPECT_EQ(bits_of(fused.y), bits_of(composed.y));
  EXPECT_EQ(bits_of(fused.dx), bits_of(composed.dx));
  EXPECT_EQ(bits_of(fused.dw), bits_of(composed.dw));
}

TEST_F(LinearPrecisionTest, OutsideTheScopeAndOutsideLinearNothingChanges) {
  const Tensor before = linear(x, w, b);
  Tensor inside, product_inside;
  {
    LinearPrecisionGuard scope(LinearPrecision::BFloat16);
    product_inside = matmul(x, w.t());  // matmul is float32 under the scope (attention's products run through it)
    const Tensor x64 = x.to(DType::Float64), w64 = w.to(DType::Float64);
    EXPECT_EQ(linear(x64, w64, Tensor()).to_vector<double>(), matmul(x64, w64.t()).to_vector<double>());
  }
  EXPECT_EQ(bits_of(product_inside), bits_of(matmul(x, w.t())));
  EXPECT_EQ(bits_of(linear(x, w, b)), bits_of(before));
  EXPECT_EQ(linear_precision(), LinearPrecision::Float32);
}

}  // namespace
}  // namespace cppgrad
