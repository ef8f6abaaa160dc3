#include "nn/linear.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/unary.h"
#include "nn/init.h"

namespace cppgrad::nn {

Linear::Linear(const LinearOptions& options, Generator& gen) : options_(options) {
  if (options.in <= 0 || options.out <= 0)
    throw std::invalid_argument(fmt::format("Linear: in and out must be positive, got in={}, out={}", options.in, options.out));
  const double bound = init::linear_bound(options.in);
  weight_ = register_parameter("weight", init::uniform({options.out, options.in}, -bound, bound, gen));
  if (options.bias) bias_ = register_parameter("bias", init::uniform({options.out}, -bound, bound, gen));
}

Linear::Linear(const LinearOptions& options, const Tensor& tied_weight) : options_(options) {
  if (options.bias) throw std::invalid_argument("Linear: a tied weight comes without bias (set bias = false)");
  if (!tied_weight.defined() || tied_weight.shape() != Shape{options.out, options.in})
    throw std::invalid_argument(fmt::format("Linear: the tied weight must be [out={}, in={}], got {}", options.out,
                                            options.in, tied_weight.defined() ? shape_str(tied_weight.shape()) : "none"));
  weight_ = register_tied_parameter("weight", tied_weight);
}

std::string Linear::extra_repr() const {
  return fmt::format("in={}, out={}{}{}", options_.in, options_.out, options_.bias ? ", bias" : "",
                     named_parameters().empty() ? ", tied" : "");
}

void Linear::check_input(const Tensor& x) const {
  if (x.dim() < 1 || x.shape().back() != options_.in)
    throw std::invalid_argument("Linear: input " + shape_str(x.shape()) + " must end in in=" + std::to_string(options_.in));
}

void Linear::add_lora(const LoRAOptions& options, Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  if (lora_) throw std::invalid_argument("Linear: this layer has a LoRA already");
  if (named_parameters().empty())
    throw std::invalid_argument("Linear: a tied weight cannot take a LoRA (it is another module's parameter)");
  lora_ = register_module("lora", std::make_shared<LoRA>(options_.in, options_.out, options, gen,
                                                         std::move(dropout_gen)));
  weight_.set_requires_grad(false);
  if (bias_.defined()) bias_.set_requires_grad(false);
}

Tensor Linear::forward(const Tensor& x) const {
  check_input(x);
  if (lora_) return lora_->forward_with(x, weight_, bias_);  // x W^T + b + the adapter's change, one op
  return linear(x, weight_, bias_);  // [.., in] @ [in, out] + [out] -> [.., out]
}

Tensor Linear::forward_relu(const Tensor& x) const {
  check_input(x);
  return lora_ ? relu(forward(x)) : linear_relu(x, weight_, bias_);
}

}  // namespace cppgrad::nn
