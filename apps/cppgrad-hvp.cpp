// cppgrad-hvp: second derivatives of the reversal model's loss, for a learner to run and read.
//
// It trains the default model for a few epochs (float32, as cppgrad-reverse train would), converts it to float64,
// and on one batch computes a Hessian-vector product H v two ways:
//   - by double backward: g = grad(loss, params, create_graph), then H v = grad(<g, v>, params);
//   - by central differences of gradients: (grad(params + eps v) - grad(params - eps v)) / 2 eps, for several eps.
// The table shows the finite differences' error falling with eps (truncation, ~eps^2) and then rising again
// (rounding, ~1e-16 / eps), with double backward as the reference. Then the curvature of the loss along the
// gradient, g^T H g / |g|^2, and the step 1 / curvature a Newton step along -g would take. docs/higher-order.md
// explains the output.
//
//   cppgrad-hvp [--epochs 3] [--seed 42] [--batch 64]
//
// Exit status: 0 when double backward and the best finite difference agree to 1e-6, 1 when not, 2 on bad flags.
#include <fmt/format.h>

#include <cmath>
#include <cxxopts.hpp>
#include <iostream>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "core/message_text.h"
#include "cppgrad/version.h"
#include "models/reverse/trainer.h"
#include "train/flags.h"

using namespace cppgrad;

namespace {

using Tensors = std::vector<Tensor>;

double dot(const Tensors& a, const Tensors& b) {
  double total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) total += sum(mul(a[i], b[i])).item();
  return total;
}

Tensors scaled(const Tensors& a, double s) {
  Tensors out;
  for (const Tensor& t : a) out.push_back(mul(t, s));
  return out;
}

// The largest |a - b| over every element, relative to the largest |b|.
double relative_gap(const Tensors& a, const Tensors& b) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = a[i].to_double_vector(), y = b[i].to_double_vector();
    for (std::size_t e = 0; e < x.size(); ++e) gap = std::max(gap, std::abs(x[e] - y[e])), scale = std::max(scale, std::abs(y[e]));
  }
  return gap / scale;
}

struct Problem {
  nn::Seq2SeqTransformer& model;
  Tensors params;
  data::Batch batch;

  Tensor loss() const { return cross_entropy(model.forward(batch.src, batch.dec_in), batch.target, data::kPad); }
  Tensors gradient() const { return autograd::grad({loss()}, params); }
  // H v by double backward.
  Tensors hvp(const Tensors& v) const {
    const Tensors g = autograd::grad({loss()}, params, {}, std::nullopt, /*create_graph=*/true);
    Tensor g_dot_v = Tensor::zeros({}, DType::Float64);
    for (std::size_t i = 0; i < g.size(); ++i) g_dot_v = add(g_dot_v, sum(mul(g[i], v[i])));
    return autograd::grad({g_dot_v}, params);
  }
  // H v by central differences of gradients, moving the parameters in place and back.
  Tensors finite_difference_hvp(const Tensors& v, double eps) const {
    auto gradient_at = [&](double step) {
      for (std::size_t i = 0; i < v.size(); ++i) params[i].add_(mul(v[i], step));
      Tensors g = gradient();
      for (std::size_t i = 0; i < v.size(); ++i) params[i].add_(mul(v[i], -step));
      return g;
    };
    const Tensors plus = gradient_at(eps), minus = gradient_at(-eps);
    Tensors out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(mul(sub(plus[i], minus[i]), 1 / (2 * eps)));
    return out;
  }
};

int run(const reverse::TrainConfig& config, std::int64_t epochs) {
  reverse::Trainer trainer(config);
  for (std::int64_t e = 0; e < epochs; ++e) {
    const reverse::EpochMetrics m = trainer.run_epoch();
    fmt::print("epoch {}: loss {:.4f}, greedy accuracy {:.1f}%\n", e + 1, m.loss, 100 * m.test_seq_acc);
  }
  trainer.model().to(DType::Float64);  // second derivatives by finite differences need float64
  std::vector<std::int64_t> rows(static_cast<std::size_t>(config.batch_size));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
  const Problem p{trainer.model(), trainer.model().parameters(),
                  data::gather_batch(trainer.data().train, rows, config.data_config().variable_length())};
  Generator gen(config.seed);
  Tensors v;
  for (const Tensor& t : p.params) v.push_back(Tensor::randn(t.shape(), gen, DType::Float64));
  v = scaled(v, 1 / std::sqrt(dot(v, v)));  // a random unit direction
  const Tensors hv = p.hvp(v);
  fmt::print("\nloss {:.6f} on {} sequences; {} parameters; |H v| = {:.6g} for a random unit v\n", p.loss().item(),
             config.batch_size, trainer.model().num_parameters(), std::sqrt(dot(hv, hv)));
  fmt::print("{:>8}  {:>22}\n", "eps", "finite differences vs double backward (max relative gap)");
  double best = 1;
  for (double eps : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8}) {
    const double gap = relative_gap(p.finite_difference_hvp(v, eps), hv);
    best = std::min(best, gap);
    fmt::print("{:>8.0e}  {:>22.3e}\n", eps, gap);
  }
  const Tensors g = p.gradient();
  const double curvature = dot(g, p.hvp(g)) / dot(g, g);
  fmt::print("\ncurvature along the gradient, g^T H g / |g|^2: {:.6g}\n", curvature);
  if (curvature > 0) fmt::print("a Newton step along -g would take learning rate 1 / curvature = {:.6g}\n", 1 / curvature);
  fmt::print("{}: double backward and the best finite difference agree to {:.1e}\n", best < 1e-6 ? "ok" : "FAIL", best);
  return best < 1e-6 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options o("cppgrad-hvp", "Hessian-vector products of the reversal model's loss: double backward against "
                                    "finite differences of gradients.");
  o.add_options()("epochs", "epochs to train first (float32)", cxxopts::value<std::string>()->default_value("3"))
      ("seed", "seed of the data, the model and the direction v", cxxopts::value<std::string>()->default_value("42"))
      ("batch", "sequences in the batch the loss is taken on", cxxopts::value<std::string>()->default_value("64"))
      ("version", "print the version and exit")("h,help", "this help");
  reverse::TrainConfig config;
  std::int64_t epochs = 0;
  try {
    const auto r = o.parse(argc, argv);
    if (!r.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + r.unmatched()[0] + "'");
    if (r.count("help") || r.count("version")) {
      std::cout << (r.count("help") ? o.help() : std::string("cppgrad-hvp ") + CPPGRAD_VERSION) << "\n";
      return 0;
    }
    epochs = int_flag("epochs", r["epochs"].as<std::string>());
    config.seed = uint_flag("seed", r["seed"].as<std::string>());
    config.batch_size = int_flag("batch", r["batch"].as<std::string>());
    if (epochs < 0 || epochs > 100) throw std::invalid_argument("--epochs must be in 0..100");
    if (config.batch_size < 1 || config.batch_size > config.train_size)
      throw std::invalid_argument(fmt::format("--batch must be in 1..{}", config.train_size));
    config.threads = 1;
    config.validate();
  } catch (const std::exception& e) {
    std::cerr << message_line(std::string("cppgrad-hvp: ") + e.what()) << "\n";
    return 2;
  }
  try {
    return run(config, epochs);
  } catch (const std::exception& e) {
    std::cerr << message_line(std::string("cppgrad-hvp: ") + e.what()) << "\n";
    return 1;
  }
}
