#pragma once
// What a kernel reads of an op's operands: their values, never their graph.
#include "core/tensor.h"

namespace cppgrad::kernels {

// x's values in row-major order: x itself when already contiguous (a kernel only reads its data, so its grad_fn
// does no harm and no view need be made: at a decoding step's sizes that header is a measurable part of an op),
// otherwise a contiguous copy that records no op.
inline Tensor contiguous_values(const Tensor& x) { return x.is_contiguous() ? x : x.detach().contiguous(); }

}  // namespace cppgrad::kernels
