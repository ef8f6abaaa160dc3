// linear_lora: a frozen Linear and its LoRA (nn/lora.h) as one op.
#include <stdexcept>
#include <array>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/elementwise_loops.h"
#include "core/kernels/linear.h"
#include "core/kernels/parallel_for.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"

namespace cppgrad {

namespace {

void check_lora(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& adapter_x, const Tensor& a,
                const Tensor& b) {
  const bool fits = a.dim() == 2 && b.dim() == 2 && weight.dim() == 2 && x.dim() >= 1 &&
                    x.shape().back() == weight.shape()[1] && weight.dtype() == x.dtype() &&
                    (!bias.defined() || (bias.shape() == Shape{weight.shape()[0]} && bias.dtype() == x.dtype())) &&
                    a.shape()[1] == weight.shape()[1] &&
                    b.shape()[0] == weight.shape()[0] && b.shape()[1] == a.shape()[0] &&
                    adapter_x.shape() == x.shape() && a.dtype() == x.dtype() && b.dtype() == x.dtype();
  if (!fits)
    throw std::invalid_argument("linear_lora: x " + shape_str(x.shape()) + ", weight " + shape_str(weight.shape()) +
                                (bias.defined() ? ", bias " + shape_str(bias.shape()) : std::string()) + ", adapter input " + shape_str(adapter_x.shape()) + ", A " + shape_str(a.shape()) +
                                " and B " + shape_str(b.shape()) + " do not fit: weight [out, in], bias [out], A [r, in], "
                                "B [out, r], the adapter's input shaped like x [.., in], all of x's dtype");
}

// The truth, in ops: linear(x, W, b) + linear(linear(xa, A), B) * s. in: x, W, b, xa (undefined: x itself), A, B.
Tensor linear_lora_definition(const TensorList& in, double scaling) {
  const Tensor& xa = in[3].defined() ? in[3] : in[0];
  return linear(in[0], in[1], in[2]) + linear(linear(xa, in[4]), in[5]) * scaling;
}

// y += d * s, elementwise: the definition's mul, then its add, each rounded as those ops round them.
void add_scaled(Tensor& y, const Tensor& d, double scaling) {
  float* py = y.mutable_data<float>();
  const float* pd = d.data<float>();
  kernels::parallel_for(y.numel(), y.numel() > kernels::kParallelGrain, [&](std::int64_t i) {
    py[i] += static_cast<float>(static_cast<double>(pd[i]) * scaling);  // mul(d, s) computes in double, as here
  });
}

}  // namespace

// y = x W^T + b + s (xa A^T) B^T        x, xa: [.., in]  W: [out, in]  b: [out]  A: [r, in]  B: [out, r]
// backward, with gs = g * s and h = xa A^T [.., r] (kept from the forward: r numbers a row):
//   dx = g W;  dW = g^T x;  db = g summed over rows;  dB = gs^T h;  dh = gs B;  dA = dh^T xa;  dxa = dh A
// Equal to the definition's four nodes, which keep x W^T + b, (xa A^T) B^T and its scaled copy ([.., out] each) for
// backward: this keeps h alone.
Tensor linear_lora(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& adapter_x, const Tensor& a,
                   const Tensor& b, double scaling, std::source_location where) {
  check_lora(x, weight, bias, adapter_x, a, b);
  const auto definition = [scaling](const TensorList& in) { return linear_lora_definition(in, scaling); };
  // The adapter reading x itself is one input, not two: its gradient is the sum of both paths', taken once.
  const bool shared = adapter_x.impl_ptr() == x.impl_ptr();
  const Tensor own_xa = shared ? Tensor() : adapter_x;
  if (!fast_path(x) || !fast_path(adapter_x)) return definition({x, weight, bias, own_xa, a, b});
  const LinearPrecision precision = linear_precision();  // this call's, kept for its backward
  Tensor y = kernels::linear_forward(x, weight, bias, false, precision);  // [.., out]
  const Tensor h = kernels::linear_forward(adapter_x, a, Tensor(), false, precision);  // [.., r]
  add_scaled(y, kernels::linear_forward(h, b, Tensor(), false, precision), scaling);
  return record_fused(y, "linear_lora", {x, weight, bias, own_xa, a, b}, definition,
                      [=](const Tensor& g) {
                        const auto [dx, dw, dbias] = kernels::linear_backward(
                            g, x, weight, x.requires_grad(), weight.requires_grad(),
                            bias.defined() && bias.requires_grad(), precision);
                        // The definition's mul, backward; times 1 (alpha = rank, the default) is g itself.
                        const Tensor gs = scaling == 1.0 ? g : (g * scaling).detach();
                        const bool need_xa = adapter_x.requires_grad(), need_a = a.requires_grad();
                        const auto [dh, db, unused_h] =
                            kernels::linear_backward(gs, h, b, need_xa || need_a, b.requires_grad(), false, precision);
                        std::array<Tensor, 3> adapter;  // dxa, dA
                        if (dh.defined())
                          adapter = kernels::linear_backward(dh, adapter_x, a, need_xa, need_a, false, precision);
                        if (!shared) return TensorList{dx, dw, dbias, adapter[0], adapter[1], db};
                        // One input read twice: the two paths' gradients summed, into dx (this rule's own tensor).
                        if (dx.defined() && adapter[0].defined()) dx.add_(adapter[0]);
                        return TensorList{dx, dw, dbias, Tensor(), adapter[1], db};
                      },
                      where);
}

}  // namespace cppgrad
