#pragma once
#include <vector>

#include "core/tensor.h"

namespace cppgrad::optim {

// The 2-norm of all the parameters' gradients taken together (parameters without a gradient count as zero).
double grad_norm(const std::vector<Tensor>& params);

// Scales every gradient by max_norm / total_norm when the global 2-norm over all of them exceeds max_norm
// (PyTorch's clip_grad_norm_, with its 1e-6 guard). Returns the total norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

}  // namespace cppgrad::optim
