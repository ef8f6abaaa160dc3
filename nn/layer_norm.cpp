#include "nn/layer_norm.h"

#include <fmt/format.h>

#include "core/ops/layer_norm.h"

namespace cppgrad::nn {

LayerNorm::LayerNorm(std::int64_t dim, double eps) : dim_(dim), eps_(eps) {
  weight_ = register_parameter("weight", Tensor::ones({dim}));
  bias_ = register_parameter("bias", Tensor::zeros({dim}));
}

std::string LayerNorm::extra_repr() const { return fmt::format("dim={}, eps={:g}", dim_, eps_); }

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, weight_, bias_, eps_); }

}  // namespace cppgrad::nn
