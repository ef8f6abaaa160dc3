// Layer normalisation over the last dim, as PyTorch's F.layer_norm with normalized_shape [D]:
//   y = (x - mean) / sqrt(var + eps) * w + b        x: [.., D]  w, b: [D] or undefined; var is biased
// The definition below is the formula in ops, so its backward (and any higher derivative) comes from theirs.
// float32 takes the fused kernel (core/kernels/layer_norm.h): one pass forward, a closed-form backward.
#include <stdexcept>
#include <string>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/layer_norm.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/reduce.h"

namespace cppgrad {

namespace {

void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (x.dim() < 1) throw std::invalid_argument("layer_norm: input needs at least one dim, got a scalar");
  const std::int64_t D = x.shape().back();
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    const std::string name = p == &weight ? "weight" : "bias";
    if (p->shape() != Shape{D})
      throw std::invalid_argument("layer_norm: " + name + " has shape " + shape_str(p->shape()) + " but must be [" +
                                  std::to_string(D) + "] for input " + shape_str(x.shape()));
    if (p->dtype() != x.dtype())
      throw std::invalid_argument(std::string("layer_norm: dtype mismatch: input is ") + dtype_name(x.dtype()) +
                                  ", " + name + " is " + dtype_name(p->dtype()));
  }
}

Tensor layer_norm_definition(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  const Tensor mu = mean(x, {-1}, /*keepdim=*/true);                             // [.., 1]
  const Tensor xc = x - mu;                                                      // [.., D]
  const Tensor rstd = pow(mean(xc * xc, {-1}, /*keepdim=*/true) + eps, -0.5);    // [.., 1]
  Tensor y = xc * rstd;                                                          // [.., D]
  if (w.defined()) y = y * w;
  if (b.defined()) y = y + b;
  return y;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, std::source_location where) {
  check_layer_norm(x, weight, bias);
  if (!fast_path(x)) return layer_norm_definition(x, weight, bias, eps);
  kernels::LayerNormSaved saved;  // what the closed-form backward reads; not kept for evaluation and decoding
  Tensor y = kernels::layer_norm_forward(x, weight, bias, eps, needs_graph({&x, &weight, &bias}) ? &saved : nullptr);
  return record_fused(y, "layer_norm", {x, weight, bias},
                      [eps](const TensorList& in) { return layer_norm_definition(in[0], in[1], in[2], eps); },
                      [=](const Tensor& g) {
                        const auto [dx, dw, db] = kernels::layer_norm_backward(g, saved, weight, x.requires_grad(),
                                                                               weight.defined(), bias.defined());
                        return TensorList{dx, dw, db};
                      },
                      where);
}

}  // namespace cppgrad
