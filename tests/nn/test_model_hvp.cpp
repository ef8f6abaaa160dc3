// Hessian-vector products of the reversal model's loss: double backward through every op the model uses
// (embedding, attention, layer_norm, linear, relu, cross_entropy), checked against finite differences of
// gradients in float64, and the float32 fast kernels' create_graph path checked against float64.
#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "nn/seq2seq.h"
#include "test_util.h"

namespace cppgrad {
namespace {

// The reversal task's shapes, by hand: src [B, L] tokens 1..9, target = src reversed, dec_in = [BOS] + target[:-1].
struct ReversalBatch {
  Tensor src, target, dec_in;
};

ReversalBatch reversal_batch(std::int64_t B, std::int64_t L, std::uint64_t seed) {
  Generator gen(seed);
  const Tensor src = Tensor::randint(1, 10, {B, L}, gen);
  Tensor target = Tensor::zeros({B, L}, DType::Int64), dec_in = Tensor::zeros({B, L}, DType::Int64);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < L; ++t) {
      target.set({b, t}, src.at({b, L - 1 - t}));
      dec_in.set({b, t}, t == 0 ? 10.0 : src.at({b, L - t}));  // BOS = 10
    }
  return {src, target, dec_in};
}

struct Model {
  std::shared_ptr<nn::Seq2SeqTransformer> net;
  std::vector<Tensor> params;
};

Model small_model(DType dtype) {
  Generator gen(7);
  auto net = std::make_shared<nn::Seq2SeqTransformer>(
      nn::Seq2SeqOptions{.d_model = 8, .n_heads = 2, .n_encoder_layers = 1, .n_decoder_layers = 1, .d_ff = 16,
                         .max_len = 8},
      gen);
  net->to(dtype);
  return {net, net->parameters()};
}

Tensor loss_of(const Model& m, const ReversalBatch& b) { return cross_entropy(m.net->forward(b.src, b.dec_in), b.target); }

// H v by double backward: the gradient with create_graph, then the gradient of <gradient, v>.
std::vector<Tensor> hessian_vector_product(const Model& m, const ReversalBatch& b, const std::vector<Tensor>& v) {
  const std::vector<Tensor> g = autograd::grad({loss_of(m, b)}, m.params, {}, std::nullopt, /*create_graph=*/true);
  Tensor dot = Tensor::zeros({}, g[0].dtype());
  for (std::size_t i = 0; i < g.size(); ++i) dot = add(dot, sum(mul(g[i], v[i])));
  return autograd::grad({dot}, m.params);
}

// (grad(theta + eps v) - grad(theta - eps v)) / 2 eps, moving the parameters in place and back.
std::vector<Tensor> finite_difference_hvp(const Model& m, const ReversalBatch& b, const std::vector<Tensor>& v,
                                          double eps) {
  auto gradient_at = [&](double step) {
    for (std::size_t i = 0; i < v.size(); ++i) m.params[i].add_(mul(v[i], step));
    std::vector<Tensor> g = autograd::grad({loss_of(m, b)}, m.params);
    for (std::size_t i = 0; i < v.size(); ++i) m.params[i].add_(mul(v[i], -step));
    return g;
  };
  const std::vector<Tensor> plus = gradient_at(eps), minus = gradient_at(-eps);
  std::vector<Tensor> fd;
  for (std::size_t i = 0; i < v.size(); ++i) fd.push_back(mul(sub(plus[i], minus[i]), 1 / (2 * eps)));
  return fd;
}

std::vector<Tensor> random_direction(const std::vector<Tensor>& params, std::uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> v;
  for (const Tensor& p : params) v.push_back(Tensor::randn(p.shape(), gen, p.dtype()));
  return v;
}

// The largest |a - b| over every element, relative to 1 + the largest |a|.
double max_relative_gap(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = a[i].to_double_vector(), y = b[i].to_double_vector();
    for (std::size_t e = 0; e < x.size(); ++e) gap = std::max(gap, std::abs(x[e] - y[e])), scale = std::max(scale, std::abs(x[e]));
  }
  return gap / (1 + scale);
}

TEST(ModelHvp, DoubleBackwardAgreesWithFiniteDifferencesOfGradients) {
  const Model m = small_model(DType::Float64);
  const ReversalBatch b = reversal_batch(4, 5, 1);
  const std::vector<Tensor> v = random_direction(m.params, 2);
  const std::vector<Tensor> hv = hessian_vector_product(m, b, v), fd = finite_difference_hvp(m, b, v, 1e-5);
  // Central differences are off by O(eps^2) (here ~1e-10) plus rounding ~1e-16/eps: 1e-7 leaves a wide margin.
  EXPECT_LT(max_relative_gap(hv, fd), 1e-7);
  // The comparison can fail: the finite differences along another direction are far from this H v.
  EXPECT_GT(max_relative_gap(hv, finite_difference_hvp(m, b, random_direction(m.params, 3), 1e-5)), 1e-2);
}

TEST(ModelHvp, Float32FastKernelsGiveTheFloat64DefinitionsHessianVectorProduct) {
  // float32 runs the fused kernels forward and, under create_graph, differentiates their definitions; float64
  // runs the definitions throughout. The same model and direction must agree to float32 precision.
  const Model m64 = small_model(DType::Float64), m32 = small_model(DType::Float32);
  const ReversalBatch b = reversal_batch(4, 5, 1);
  const std::vector<Tensor> v64 = random_direction(m64.params, 2);
  std::vector<Tensor> v32;
  for (const Tensor& t : v64) v32.push_back(t.to(DType::Float32));
  EXPECT_LT(max_relative_gap(hessian_vector_product(m64, b, v64), hessian_vector_product(m32, b, v32)), 1e-4);
}

}  // namespace
}  // namespace cppgrad
