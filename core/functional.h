#pragma once
// Derivatives of whole functions, built on autograd::grad (as torch.autograd.functional): vector-Jacobian and
// Jacobian-vector products, Hessian-vector products, full Jacobians and Hessians.
//
// f maps a list of inputs to one floating tensor. Each function calls f on detached copies of the inputs that
// require grad (as PyTorch does), so the caller's tensors are never modified and need not require grad; only with
// create_graph does an input that already requires grad stay connected, so that the results can be differentiated
// with respect to it (which is what lets these functions nest). Grad mode is on inside, even under NoGradGuard.
// An output that does not depend on an input gets zeros for it, as PyTorch's (non-strict) functional API gives.
// Inputs must be floating (float32 or float64); every v must have the shape and dtype named below.
#include <functional>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::autograd::functional {

// f: inputs -> one tensor, of any shape.
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct VjpResult {
  Tensor output;             // f(inputs); detached unless create_graph
  std::vector<Tensor> vjps;  // vjps[i] = v^T J_i, shaped like inputs[i]  (J_i = d output / d inputs[i])
};

struct JvpResult {
  Tensor output;  // f(inputs); detached unless create_graph
  Tensor jvp;     // sum_i J_i v[i], shaped like the output
};

struct HvpResult {
  Tensor value;              // f(inputs), one element; detached
  std::vector<Tensor> hvps;  // hvps[i] = sum_j H_ij v[j], shaped like inputs[i]  (H_ij = d2f / dinputs[i] dinputs[j])
};

// v: shaped like f's output (and its dtype). With create_graph the products carry a graph (they can be
// differentiated again, with respect to v or to inputs that require grad).
VjpResult vjp(const Fn& f, const std::vector<Tensor>& inputs, const Tensor& v, bool create_graph = false);

// v[i]: shaped like inputs[i]. Computed with two reverse passes (no forward mode needed): see functional.cpp.
JvpResult jvp(const Fn& f, const std::vector<Tensor>& inputs, const std::vector<Tensor>& v, bool create_graph = false);

// f: inputs -> one element (a loss).  v[i]: shaped like inputs[i]. H v without forming H.
HvpResult hvp(const Fn& f, const std::vector<Tensor>& inputs, const std::vector<Tensor>& v);

// One Jacobian per input: jacobian[i] is shaped [output.shape..., inputs[i].shape...], entry [o..., x...] being
// d output[o...] / d inputs[i][x...]. Costs one reverse pass per output element.
std::vector<Tensor> jacobian(const Fn& f, const std::vector<Tensor>& inputs);

// f: {input} -> one element.  -> [input.shape..., input.shape...], the Jacobian of f's gradient (symmetric).
// Costs one reverse pass per input element. f is called with the one-element list {input}.
Tensor hessian(const Fn& f, const Tensor& input);

}  // namespace cppgrad::autograd::functional
