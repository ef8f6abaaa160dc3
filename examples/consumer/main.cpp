// A program outside cppgrad's source tree that uses the installed library: a two-layer MLP learns
// y = sin(x0) * x1 from 256 points with Adam, and must bring the loss down at least tenfold in 300 steps.
// .ci/run builds it against an installed cppgrad twice (find_package and pkg-config) and runs it.
//
//   x: [N, 2] -> Linear(2, 32) -> tanh -> Linear(32, 1) -> yhat: [N, 1];  loss = mean((yhat - y)^2)
#include <cppgrad/cppgrad.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

using namespace cppgrad;

class Mlp : public nn::Module {
 public:
  Mlp(std::int64_t hidden, Generator& gen)
      : l1_(register_module("l1", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 2, .out = hidden}, gen))),
        l2_(register_module("l2", std::make_shared<nn::Linear>(nn::LinearOptions{.in = hidden, .out = 1}, gen))) {}
  std::string type_name() const override { return "Mlp"; }

  // x: [N, 2] -> [N, 1]
  Tensor forward(const Tensor& x) const { return l2_->forward(tanh(l1_->forward(x))); }

 private:
  std::shared_ptr<nn::Linear> l1_, l2_;
};

int main() {
  Generator gen(0);
  const std::int64_t n = 256;
  Tensor x = add(mul(Tensor::rand({n, 2}, gen), 4.0), -2.0);  // U[-2, 2): [N, 2]
  std::vector<float> xs = x.to_vector<float>(), ys(n);
  for (std::int64_t i = 0; i < n; ++i) ys[i] = std::sin(xs[2 * i]) * xs[2 * i + 1];
  const Tensor y = Tensor::from_vector<float>(ys, {n, 1});

  Mlp model(32, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 0.01});
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    adam.zero_grad();
    Tensor loss = mean(pow(sub(model.forward(x), y), 2.0));
    loss.backward();
    adam.step();
    last = loss.item<float>();
    if (step == 0) first = last;
  }
  std::printf("cppgrad %s: %lld parameters, loss %.4f -> %.4f after 300 Adam steps\n", CPPGRAD_VERSION,
              static_cast<long long>(model.num_parameters()), first, last);
  if (!(last < first / 10)) {
    std::printf("FAILED: the loss did not fall tenfold\n");
    return 1;
  }
  return 0;
}
