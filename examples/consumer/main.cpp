// A program outside cppgrad's source tree that uses the installed library: it defines an op of its own, softplus,
// checks its gradients (first and second) against finite differences, then trains a two-layer MLP with it:
// y = sin(x0) * x1 from 256 points with Adam, and the loss must fall at least tenfold in 300 steps. Given a path, it
// draws the loss curve there as SVG with the training layer (<cppgrad/train.h>). Last, it trains a small BPE
// tokenizer (data/bpe.h), whose regex split needs PCRE2 from the package's dependencies.
// examples/consumer/check.sh builds it against an installed cppgrad twice (find_package and pkg-config) and runs it.
//
//   consumer [loss.svg]
//
//   x: [N, 2] -> Linear(2, 32) -> softplus -> Linear(32, 1) -> yhat: [N, 1];  loss = mean((yhat - y)^2)
#include <cppgrad/core/ops/elementwise_helpers.h>  // unary_forward: for writing a primitive op
#include <cppgrad/cppgrad.h>
#include <cppgrad/train.h>  // the loss curve's SVG

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace cppgrad;

namespace my_ops {

// A primitive op, written as cppgrad's own exp is (docs/add-an-op.md): the forward in a loop over raw memory, the
// backward in ops, so it can be differentiated again. The lambda runs in float32 (training) and float64 (gradcheck).
// out = log(1 + e^x), as max(x, 0) + log1p(e^-|x|), which never overflows;  dx = g * sigmoid(x)      x: (..) -> (..)
Tensor softplus(const Tensor& x) {
  Tensor out = op_helpers::unary_forward(x, "softplus", [](auto v) {
    return std::max(v, decltype(v)(0)) + std::log1p(std::exp(-std::abs(v)));
  });
  return record_op(out, "softplus", {x}, [x](const Tensor& g) { return TensorList{mul(g, sigmoid(x))}; });
}

}  // namespace my_ops

class Mlp : public nn::Module {
 public:
  Mlp(std::int64_t hidden, Generator& gen)
      : l1_(register_module("l1", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 2, .out = hidden}, gen))),
        l2_(register_module("l2", std::make_shared<nn::Linear>(nn::LinearOptions{.in = hidden, .out = 1}, gen))) {}
  std::string type_name() const override { return "Mlp"; }

  // x: [N, 2] -> [N, 1]
  Tensor forward(const Tensor& x) const { return l2_->forward(my_ops::softplus(l1_->forward(x))); }

 private:
  std::shared_ptr<nn::Linear> l1_, l2_;
};

int main(int argc, char** argv) {
  Generator gen(0);

  // The op's gradients, in float64 on a [3, 4] input in [-4, 4): the Jacobian, then the gradient of the gradient.
  const Tensor x0 = add(mul(Tensor::rand({3, 4}, gen, DType::Float64), 8.0), -4.0).set_requires_grad();
  const auto f = [](const std::vector<Tensor>& in) { return my_ops::softplus(in[0]); };
  for (const GradcheckResult& check : {gradcheck(f, {x0}), gradgradcheck(f, {x0})}) {
    if (!check.ok) {
      std::printf("FAILED: softplus's gradient check: %s\n", check.message.c_str());
      return 1;
    }
  }

  const std::int64_t n = 256;
  Tensor x = add(mul(Tensor::rand({n, 2}, gen), 4.0), -2.0);  // U[-2, 2): [N, 2]
  std::vector<float> xs = x.to_vector<float>(), ys(n);
  for (std::int64_t i = 0; i < n; ++i) ys[i] = std::sin(xs[2 * i]) * xs[2 * i + 1];
  const Tensor y = Tensor::from_vector<float>(ys, {n, 1});

  Mlp model(32, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 0.01});
  double first = 0, last = 0;
  train::Curve curve{"softplus MLP", {}};  // the loss of every step
  for (int step = 0; step < 300; ++step) {
    adam.zero_grad();
    Tensor loss = mean(pow(sub(model.forward(x), y), 2.0));
    loss.backward();
    adam.step();
    last = loss.item<float>();
    curve.values.push_back(last);
    if (step == 0) first = last;
  }
  if (argc > 1) {
    write_file_atomically(argv[1], train::loss_curves_svg({curve}, "consumer: training loss per step"));
    std::printf("wrote the loss curve to %s\n", argv[1]);
  }
  std::printf("cppgrad %s: softplus passes gradcheck and gradgradcheck; %lld parameters, loss %.4f -> %.4f after 300 "
              "Adam steps\n",
              CPPGRAD_VERSION, static_cast<long long>(model.num_parameters()), first, last);
  if (!(last < first / 10)) {
    std::printf("FAILED: the loss did not fall tenfold\n");
    return 1;
  }

  // A BPE tokenizer trained on a sentence (its split runs on PCRE2, which the installed package must bring along).
  const std::string text = "the cat sat on the mat; the cat ate the rat";
  const auto tok = data::BpeTokenizer::train(text, 266);
  const std::vector<std::int64_t> ids = tok.encode(text);
  std::printf("BPE: %zu bytes -> %zu tokens with %lld merges\n", text.size(), ids.size(),
              static_cast<long long>(tok.num_merges()));
  if (tok.decode(ids) != text || ids.size() >= text.size()) {
    std::printf("FAILED: the BPE tokenizer did not round-trip and compress its own text\n");
    return 1;
  }
  return 0;
}
