#include "core/kernels/linear.h"

#include <algorithm>

#include "core/kernels/elementwise_loops.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/tensor_values.h"

namespace cppgrad::kernels {

namespace {

// The weight's storage when its packing may be kept by a ReusePackedWeights scope (core/kernels/packed_weights.h): a
// leaf (a parameter), whose values every shard of a step multiplies by. A weight computed in the graph is new each
// pass, so keeping its packing would only hold memory.
const std::shared_ptr<Storage>* kept_weight(const Tensor& w) { return w.is_leaf() ? &w.impl().storage : nullptr; }

// A weight only a few columns wide (a LoRA's B, [out, r]) would get its gradient g^T x from the row loops, reading
// g^T a column at a time: one cache line per multiply-add (GPT-2 124M's LoRA step at 8 x 256 spent 7% of its time
// there). Its transpose x^T g [in, out] is wide, so the tiled kernel streams g's rows. Float32 only: the bfloat16
// kernel takes every shape already.
bool transpose_weight_gradient(std::int64_t out, std::int64_t in, std::int64_t rows, LinearPrecision precision) {
  return precision == LinearPrecision::Float32 && !gemm_is_tiled(out, in, rows) && gemm_is_tiled(in, out, rows);
}

// dw [out, in] = (x^T [in, rows] @ g [rows, out])^T; g [rows, out] and x [rows, in] contiguous.
void weight_gradient_transposed(const Tensor& g, const Tensor& x, const Tensor& dw) {
  const std::int64_t out = dw.shape()[0], in = dw.shape()[1], rows = g.numel() / out, zero = 0;
  Tensor dwt = Tensor::empty({in, out}, DType::Float32);  // [in, out]
  batched_gemm<float>(1, in, out, rows, {x.data<float>(), 1, in}, &zero, {g.data<float>(), out, 1}, &zero,
                      dwt.mutable_data<float>(), &zero, out);
  dw.copy_(dwt.t());
}

}  // namespace

Tensor linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, bool relu_after, LinearPrecision precision) {
  const std::int64_t in = w.shape()[1], out = w.shape()[0];
  const Tensor xs = contiguous_values(x), ws = w, bs = b.defined() ? contiguous_values(b) : Tensor();
  const std::int64_t rows = numel_of(Shape(x.shape().begin(), x.shape().end() - 1));  // also when in == 0
  Shape out_shape = x.shape();
  out_shape.back() = out;
  Tensor y = Tensor::empty(out_shape, DType::Float32);
  const std::int64_t zero = 0;
  float* py = y.mutable_data<float>();
  if (in == 0) {
    std::fill(py, py + y.numel(), 0.0f);
  } else if (rows > 0 && out > 0) {
    // y [rows, out] = x [rows, in] @ W^T [in, out]: W^T is W read with its strides swapped, in place.
    batched_gemm<float>(1, rows, out, in, {xs.data<float>(), in, 1}, &zero,
                        {ws.data<float>(), ws.strides()[1], ws.strides()[0]}, &zero, py, &zero, out, kept_weight(ws), precision);
  }
  if (!bs.defined() && !relu_after) return y;
  const float* pb = bs.defined() ? bs.data<float>() : nullptr;
  parallel_for(rows, rows * out > kParallelGrain, [&](std::int64_t i) {
    float* yi = py + i * out;
    if (pb && relu_after)
      for (std::int64_t j = 0; j < out; ++j) yi[j] = yi[j] + pb[j] > 0.0f ? yi[j] + pb[j] : 0.0f;  // as relu: NaN -> 0
    else if (pb)
      for (std::int64_t j = 0; j < out; ++j) yi[j] += pb[j];
    else
      for (std::int64_t j = 0; j < out; ++j) yi[j] = yi[j] > 0.0f ? yi[j] : 0.0f;
  });
  return y;
}

std::array<Tensor, 3> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, bool need_x, bool need_w,
                                      bool need_b, LinearPrecision precision) {
  const std::int64_t in = w.shape()[1], out = w.shape()[0];
  const std::int64_t rows = numel_of(Shape(x.shape().begin(), x.shape().end() - 1));
  const Tensor gs = g.contiguous(), ws = w, xs = need_w ? contiguous_values(x) : Tensor();
  Tensor dx = need_x ? Tensor::empty(x.shape(), DType::Float32) : Tensor();
  Tensor dw = need_w ? Tensor::empty({out, in}, DType::Float32) : Tensor();
  Tensor db = need_b ? Tensor::zeros({out}, DType::Float32) : Tensor();
  const float* pg = gs.data<float>();
  const std::int64_t zero = 0;
  if (need_x && dx.numel() > 0) {
    if (out == 0) std::fill_n(dx.mutable_data<float>(), dx.numel(), 0.0f);
    else  // dx [rows, in] = g [rows, out] @ W [out, in]
      batched_gemm<float>(1, rows, in, out, {pg, out, 1}, &zero, {ws.data<float>(), ws.strides()[0], ws.strides()[1]},
                          &zero, dx.mutable_data<float>(), &zero, in, kept_weight(ws), precision);
  }
  if (need_w && dw.numel() > 0) {
    if (rows == 0) std::fill_n(dw.mutable_data<float>(), dw.numel(), 0.0f);
    else if (transpose_weight_gradient(out, in, rows, precision))
      weight_gradient_transposed(gs, xs, dw);
    else  // dW [out, in] = g^T [out, rows] @ x [rows, in]
      batched_gemm<float>(1, out, in, rows, {pg, 1, out}, &zero, {xs.data<float>(), in, 1}, &zero, dw.mutable_data<float>(),
                          &zero, in, nullptr, precision);
  }
  if (need_b) {  // column sums, row after row (a fixed order), each row a vector loop
    float* pdb = db.mutable_data<float>();
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < out; ++j) pdb[j] += pg[i * out + j];
  }
  return {dx, dw, db};
}

}  // namespace cppgrad::kernels
