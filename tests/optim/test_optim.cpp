// Optimizers beyond the golden cases: they minimise a real function, Nesterov and weight decay behave,
// state round-trips, schedules give the documented learning rates, clipping only shrinks.
#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"
#include "optim/sgd.h"
#include "test_util.h"

namespace cppgrad {
namespace {

// f(w) = sum((w - target)^2): every optimizer must drive w to target.
template <typename Opt, typename Options>
std::vector<double> minimise(const Options& options, int steps) {
  Tensor w = Tensor::zeros({3}, DType::Float64);
  w.set_requires_grad(true);
  const Tensor target = Tensor::from_vector<double>({1, -2, 3}, {3});
  Opt opt({{"w", w}}, options);
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    sum(pow(sub(w, target), 2.0)).backward();
    opt.step();
  }
  return w.to_vector<double>();
}

TEST(Optim, EveryOptimizerMinimisesAQuadratic) {
  const std::vector<double> target{1, -2, 3};
  for (const auto& w : {minimise<optim::SGD>(optim::SGDOptions{.lr = 0.1}, 200),
                        minimise<optim::SGD>(optim::SGDOptions{.lr = 0.05, .momentum = 0.9}, 300),
                        minimise<optim::SGD>(optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .nesterov = true}, 300),
                        minimise<optim::Adam>(optim::AdamOptions{.lr = 0.05}, 1000)})
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(w[i], target[i], 1e-3);
}

TEST(Optim, FirstAdamStepMovesEachWeightByLr) {
  // With bias correction, step 1 is lr * g / (|g| + eps): every weight moves by ~lr against its gradient.
  Tensor w = Tensor::from_vector<double>({0.5, -3.0}, {2});
  w.set_requires_grad(true);
  optim::Adam adam({{"w", w}}, {.lr = 0.01});
  w.set_grad(Tensor::from_vector<double>({4.0, -0.001}, {2}));
  adam.step();
  EXPECT_NEAR(w.at({0}), 0.49, 1e-9);
  EXPECT_NEAR(w.at({1}), -2.99, 1e-5);
}

TEST(Optim, ParametersWithoutGradientsAreLeftAlone) {
  Tensor a = Tensor::ones({2}, DType::Float64), b = Tensor::ones({2}, DType::Float64);
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  optim::Adam adam({{"a", a}, {"b", b}}, {.lr = 0.1});
  a.set_grad(Tensor::ones({2}, DType::Float64));
  adam.step();
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_NE(a.to_vector<double>(), (std::vector<double>{1, 1}));
}

TEST(Optim, AdamWDecaysOnlyTheMatricesWhenAsked) {
  // nanoGPT's two groups: a [2, 2] weight decays, a [2] bias does not. Each is compared with an AdamW of its own,
  // with and without decay, on the same gradient: the matrix must equal the decayed one, the bias the undecayed one.
  const auto one_step = [](const Shape& shape, double weight_decay, optim::DecayOn on) {
    Tensor p = Tensor::full(shape, 2.0, DType::Float64);
    p.set_requires_grad(true);
    optim::Adam adam({{"p", p}}, {.lr = 0.1, .weight_decay = weight_decay, .decoupled_weight_decay = true,
                                  .decay_on = on});
    p.set_grad(Tensor::full(shape, 0.5, DType::Float64));
    adam.step();
    return p.to_vector<double>();
  };
  const auto every = optim::DecayOn::every_parameter, matrices = optim::DecayOn::matrices;
  EXPECT_EQ(one_step({2, 2}, 0.5, matrices), one_step({2, 2}, 0.5, every));
  EXPECT_EQ(one_step({2}, 0.5, matrices), one_step({2}, 0.0, every));
  EXPECT_NE(one_step({2}, 0.5, matrices), one_step({2}, 0.5, every));  // the decay is large enough to be seen
}

TEST(Optim, StateDictRoundTripContinuesIdentically) {
  auto make = [] {
    Tensor w = Tensor::from_vector<double>({1, 2}, {2});
    w.set_requires_grad(true);
    return w;
  };
  Tensor w1 = make(), w2 = make();
  optim::Adam a1({{"w", w1}}, {.lr = 0.1}), a2({{"w", w2}}, {.lr = 0.1});
  auto grad_step = [](optim::Optimizer& opt, const Tensor& w) {
    w.set_grad(mul(w.detach(), 2.0));
    opt.step();
  };
  grad_step(a1, w1);
  grad_step(a1, w1);
  w2.detach().copy_(w1.detach());
  a2.load_state_dict(a1.state_dict());
  EXPECT_EQ(a2.steps(), 2);
  grad_step(a1, w1);
  grad_step(a2, w2);
  EXPECT_EQ(w1.to_vector<double>(), w2.to_vector<double>());
  nn::StateDict bad = a1.state_dict();
  bad["w.exp_avg"] = Tensor::zeros({3}, DType::Float64);
  EXPECT_THROW_MSG(a2.load_state_dict(bad), std::invalid_argument, "entry 'w.exp_avg' has shape [3] but parameter 'w'");

  // Every loaded scalar is checked before it is used (a checkpoint is a file anyone can edit).
  const std::int64_t steps_before = a2.steps();
  for (const Tensor& step : {Tensor::from_vector<std::int64_t>({INT64_MAX}, {}),
                             Tensor::scalar(-1.0, DType::Int64), Tensor::scalar(std::nan(""), DType::Float64),
                             Tensor::from_vector<std::int64_t>({1, 2}, {2})}) {
    nn::StateDict s = a1.state_dict();
    s["step"] = step;
    EXPECT_THROW_MSG(a2.load_state_dict(s), std::invalid_argument, "optimizer load_state_dict: 'step' must be");
  }
  nn::StateDict nan_lr = a1.state_dict();
  nan_lr["lr"] = Tensor::scalar(std::nan(""), DType::Float64);
  EXPECT_THROW_MSG(a2.load_state_dict(nan_lr), std::invalid_argument, "'lr' must be one finite number");
  nn::StateDict nan_moment = a1.state_dict();
  nan_moment["w.exp_avg"] = Tensor::from_vector<double>({1, std::nan("")}, {2});
  EXPECT_THROW_MSG(a2.load_state_dict(nan_moment), std::invalid_argument, "entry 'w.exp_avg' holds NaN or Inf");
  EXPECT_EQ(a2.steps(), steps_before) << "a refused state changes nothing";
}

TEST(Optim, ClipGradNormScalesOnlyWhenAboveTheLimit) {
  Tensor a = Tensor::zeros({2}, DType::Float64), b = Tensor::zeros({1}, DType::Float64);
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  a.set_grad(Tensor::from_vector<double>({3, 0}, {2}));
  b.set_grad(Tensor::from_vector<double>({4}, {1}));
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm({a, b}, 10.0), 5.0);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{3, 0}));  // below the limit: untouched
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm({a, b}, 1.0), 5.0);
  EXPECT_NEAR(a.grad().at({0}), 0.6, 1e-6);
  EXPECT_NEAR(b.grad().at({0}), 0.8, 1e-6);
}

TEST(Optim, Schedules) {
  optim::Schedule constant{.kind = optim::Schedule::Kind::Constant, .base_lr = 0.1};
  EXPECT_DOUBLE_EQ(constant.lr_at(1000), 0.1);
  optim::Schedule step{.kind = optim::Schedule::Kind::Step, .base_lr = 1.0, .step_size = 10, .gamma = 0.5};
  EXPECT_DOUBLE_EQ(step.lr_at(9), 1.0);
  EXPECT_DOUBLE_EQ(step.lr_at(10), 0.5);
  EXPECT_DOUBLE_EQ(step.lr_at(25), 0.25);
  optim::Schedule cosine{.kind = optim::Schedule::Kind::WarmupCosine, .base_lr = 1.0, .warmup_steps = 4,
                         .total_steps = 14, .min_lr = 0.0};
  EXPECT_DOUBLE_EQ(cosine.lr_at(0), 0.25);
  EXPECT_DOUBLE_EQ(cosine.lr_at(3), 1.0);
  EXPECT_DOUBLE_EQ(cosine.lr_at(4), 1.0);
  EXPECT_NEAR(cosine.lr_at(9), 0.5, 1e-12);  // halfway through the decay
  EXPECT_NEAR(cosine.lr_at(14), 0.0, 1e-12);
  EXPECT_THROW_MSG(optim::parse_schedule_kind("linear"), std::invalid_argument, "schedule must be constant, step or cosine");
}

}  // namespace
}  // namespace cppgrad
