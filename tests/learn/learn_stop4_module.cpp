// Stop 4 (docs/learn.md): a module and its parameters. Read nn/module.h (register_parameter, register_module,
// named_parameters) and nn/linear.h.
//
// Exercise: a two-layer MLP, 3 -> 4 -> 2 with tanh between, as a Module whose parameters are named as PyTorch
// would name them (fc1.weight, fc1.bias, fc2.weight, fc2.bias), so its state dict loads into the same model there.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

class TwoLayer : public nn::Module {
 public:
  explicit TwoLayer(Generator& gen) {
    fc1_ = register_module("fc1", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 3, .out = 4}, gen));
    // the mistake: the second layer without its bias (2 parameters fewer, one name missing)
    const bool bias = !kPlantedWrong;
    fc2_ = register_module("fc2", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 4, .out = 2, .bias = bias}, gen));
  }
  std::string type_name() const override { return "TwoLayer"; }

  Tensor forward(const Tensor& x) const { return fc2_->forward(tanh(fc1_->forward(x))); }  // [N, 3] -> [N, 2]

 private:
  std::shared_ptr<nn::Linear> fc1_, fc2_;
};

TEST(Stop4, ParametersAreNamedInRegistrationOrderWithTheirShapes) {
  Generator gen(0);
  const TwoLayer model(gen);
  std::vector<std::pair<std::string, Shape>> names;
  for (const auto& [name, p] : model.named_parameters()) names.emplace_back(name, p.shape());
  EXPECT_EQ(names, (std::vector<std::pair<std::string, Shape>>{
                       {"fc1.weight", {4, 3}}, {"fc1.bias", {4}}, {"fc2.weight", {2, 4}}, {"fc2.bias", {2}}}));
  EXPECT_EQ(model.num_parameters(), 4 * 3 + 4 + 2 * 4 + 2);
}

TEST(Stop4, BackwardReachesEveryParameter) {
  Generator gen(1);
  const TwoLayer model(gen);
  sum(model.forward(Tensor::randn({5, 3}, gen))).backward();
  for (const auto& [name, p] : model.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
}

}  // namespace
}  // namespace cppgrad::learn
