// cppgrad-demo: the engine learning something real, end to end, before the nn/ and optim/ layers exist.
//
// A 1 -> H -> 1 tanh MLP fits y = sin(x) on [-3, 3] with full-batch gradient descent (plain SGD, written
// out below). Everything is float32 and built from core ops, so backward() is the only source of gradients.
//
//   x: (N, 1)   W1: (H, 1)  b1: (H)   h    = tanh(x @ W1^T + b1)  (N, H)
//               W2: (1, H)  b2: (1)   yhat = h @ W2^T + b2         (N, 1)
//   loss = mean((yhat - y)^2)
//
// Weights are stored as PyTorch's Linear stores them, (out, in), and initialised like it:
// U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, drawn from an explicit seeded Generator.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <exception>
#include <numbers>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/core.h>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/unary.h"
#include "core/tensor.h"

using namespace cppgrad;

namespace {

constexpr std::int64_t kSamples = 128;  // N: training points, evenly spaced on [-3, 3]
constexpr double kXMin = -3.0, kXMax = 3.0;

struct Config {
  std::int64_t steps = 4000;
  double lr = 0.05;
  std::uint64_t seed = 0;
  std::int64_t hidden = 32;
};

// A (out, in) weight or (out) bias drawn from U(-1/sqrt(in), 1/sqrt(in)), as torch.nn.Linear initialises both.
Tensor linear_init(const Shape& shape, std::int64_t fan_in, Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  Tensor p = add(mul(Tensor::rand(shape, gen), 2.0 * bound), -bound);  // U[0, 1) -> U[-b, b)
  p.set_requires_grad(true);
  return p;
}

struct Mlp {
  Tensor w1, b1;  // (H, 1), (H)
  Tensor w2, b2;  // (1, H), (1)

  Mlp(std::int64_t hidden, Generator& gen)
      : w1(linear_init({hidden, 1}, 1, gen)),
        b1(linear_init({hidden}, 1, gen)),
        w2(linear_init({1, hidden}, hidden, gen)),
        b2(linear_init({1}, hidden, gen)) {}

  std::vector<Tensor> parameters() const { return {w1, b1, w2, b2}; }

  // x: (N, 1) -> (N, 1)
  Tensor forward(const Tensor& x) const {
    Tensor h = tanh(add(matmul(x, w1.t()), b1));  // (N, 1) @ (1, H) + (H) -> (N, H)
    return add(matmul(h, w2.t()), b2);            // (N, H) @ (H, 1) + (1) -> (N, 1)
  }
};

// yhat, y: (N, 1) -> scalar
Tensor mse(const Tensor& yhat, const Tensor& y) { return mean(pow(sub(yhat, y), 2.0)); }

// x: (n, 1) evenly spaced on [lo, hi]
Tensor linspace_column(double lo, double hi, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(lo + (hi - lo) * i / static_cast<double>(n - 1));
  return Tensor::from_vector<float>(v, {n, 1});
}

// y = sin(x), elementwise; x: (n, 1) -> (n, 1). Data, not part of the graph.
Tensor sin_of(const Tensor& x) {
  std::vector<float> v = x.to_vector<float>();
  for (float& e : v) e = std::sin(e);
  return Tensor::from_vector<float>(v, x.shape());
}

int train(const Config& cfg) {
  Generator gen(cfg.seed);
  Mlp model(cfg.hidden, gen);
  std::int64_t n_params = 0;
  for (const Tensor& p : model.parameters()) n_params += p.numel();

  const Tensor x = linspace_column(kXMin, kXMax, kSamples);  // (N, 1)
  const Tensor y = sin_of(x);                                 // (N, 1)

  fmt::print("cppgrad-demo: fit y = sin(x) on [{}, {}] with a 1 -> {} tanh -> 1 MLP (float32, plain SGD)\n", kXMin,
             kXMax, cfg.hidden);
  fmt::print("parameters: {}   samples: {}   steps: {}   lr: {}   seed: {}\n", n_params, kSamples, cfg.steps, cfg.lr,
             cfg.seed);

  const std::int64_t log_every = std::max<std::int64_t>(1, cfg.steps / 10);
  double initial_loss = 0, loss_value = 0;
  for (std::int64_t step = 0; step <= cfg.steps; ++step) {
    Tensor loss = mse(model.forward(x), y);
    loss_value = loss.item();
    if (step == 0) initial_loss = loss_value;
    if (step % log_every == 0 || step == cfg.steps) fmt::print("step {:>6}  loss {:.6f}\n", step, loss_value);
    if (!std::isfinite(loss_value)) {
      std::fflush(stdout);  // keep the log lines before the message when both go to one pipe
      fmt::print(stderr, "cppgrad-demo: the loss diverged at step {} (try a smaller --lr)\n", step);
      return 1;
    }
    if (step == cfg.steps) break;  // the last line reports the loss of the final parameters

    loss.backward();
    // SGD: p <- p - lr * dloss/dp. The update itself must not be recorded by autograd.
    NoGradGuard no_grad;
    for (const Tensor& p : model.parameters()) {
      p.copy_(sub(p, mul(p.grad(), cfg.lr)));
      p.zero_grad();
    }
  }

  fmt::print("final loss {:.6f} (initial {:.6f}, {:.1f}x lower)\n", loss_value, initial_loss,
             loss_value > 0 ? initial_loss / loss_value : INFINITY);

  NoGradGuard no_grad;
  const std::vector<double> probe_x = {-3.0, -2.0, -std::numbers::pi / 2, -0.5, 0.0, 0.5, std::numbers::pi / 2, 2.0, 3.0};
  std::vector<float> probe_f(probe_x.begin(), probe_x.end());
  const Tensor probe = Tensor::from_vector<float>(probe_f, {static_cast<std::int64_t>(probe_f.size()), 1});
  const std::vector<float> pred = model.forward(probe).to_vector<float>();
  fmt::print("{:>8}  {:>10}  {:>10}  {:>10}\n", "x", "predicted", "sin(x)", "error");
  for (std::size_t i = 0; i < probe_x.size(); ++i) {
    const double target = std::sin(static_cast<double>(probe_f[i]));
    fmt::print("{:>8.3f}  {:>10.5f}  {:>10.5f}  {:>+10.5f}\n", probe_x[i], pred[i], target, pred[i] - target);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("cppgrad-demo", "Trains a small tanh MLP to fit sin(x) with the cppgrad autograd engine.");
  Config cfg;
  // clang-format off
  options.add_options()
    ("steps", "gradient descent steps", cxxopts::value<std::int64_t>()->default_value(std::to_string(cfg.steps)))
    ("lr", "learning rate", cxxopts::value<double>()->default_value(fmt::format("{}", cfg.lr)))
    ("seed", "seed of the weight initialisation", cxxopts::value<std::uint64_t>()->default_value(std::to_string(cfg.seed)))
    ("hidden", "hidden units H", cxxopts::value<std::int64_t>()->default_value(std::to_string(cfg.hidden)))
    ("h,help", "print this help");
  // clang-format on

  auto usage_error = [&](const std::string& what) {
    fmt::print(stderr, "cppgrad-demo: {}\n\n{}", what, options.help());
    return 2;
  };

  try {
    const auto args = options.parse(argc, argv);
    if (args.count("help")) {
      fmt::print("{}", options.help());
      return 0;
    }
    if (!args.unmatched().empty()) return usage_error("unexpected argument '" + args.unmatched().front() + "'");
    cfg.steps = args["steps"].as<std::int64_t>();
    cfg.lr = args["lr"].as<double>();
    cfg.seed = args["seed"].as<std::uint64_t>();
    cfg.hidden = args["hidden"].as<std::int64_t>();
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error(e.what());
  }
  if (cfg.steps < 0 || cfg.steps > 10'000'000) return usage_error("--steps must be in [0, 10000000]");
  if (!std::isfinite(cfg.lr) || cfg.lr <= 0) return usage_error("--lr must be a positive number");
  if (cfg.hidden < 1 || cfg.hidden > 4096) return usage_error("--hidden must be in [1, 4096]");

  try {
    return train(cfg);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cppgrad-demo: error: {}\n", e.what());
    return 1;
  }
}
