// Matrix multiplication, batched with broadcast batch dims. Operands are read in place when one of their
// two matrix dims has unit stride (a contiguous tensor or its transposed view); anything else is copied once.
#include <algorithm>
#include <stdexcept>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/elementwise_loops.h"
#include "core/kernels/gemm.h"
#include "core/kernels/layout.h"
#include "core/kernels/linear.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/strided.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/unary.h"

namespace cppgrad {

namespace {

// An operand as seen by the kernel: its storage, the strides of its matrix dims, and its batch strides.
template <typename T>
struct Operand {
  Tensor keep_alive;
  kernels::MatrixRef<T> matrix;
  Strides batch_strides;  // broadcast to the output's batch shape
};

template <typename T>
Operand<T> as_operand(const Tensor& x, const Shape& batch_shape) {
  Tensor t = x.detach();
  const std::int64_t r = t.dim();
  const bool rows_unit = t.strides()[r - 1] == 1 || t.shape()[r - 1] == 1;
  const bool cols_unit = t.strides()[r - 2] == 1 || t.shape()[r - 2] == 1;
  if (!rows_unit && !cols_unit) t = t.contiguous();
  Shape bshape(t.shape().begin(), t.shape().end() - 2);
  Strides bstrides(t.strides().begin(), t.strides().end() - 2);
  // A size-1 matrix dim may carry any stride; give it a harmless one.
  std::int64_t rs = t.strides()[r - 2], cs = t.strides()[r - 1];
  if (t.shape()[r - 1] == 1) cs = 1;
  if (t.shape()[r - 2] == 1 && cs != 1) rs = 1;
  return {t, {t.data<T>(), rs, cs}, broadcast_strides(bshape, bstrides, batch_shape)};
}

// a: (..Ba, M, K)  b: (..Bb, K, N) -> (broadcast(..Ba, ..Bb), M, N); both of rank >= 2.
Tensor batched_matmul_forward(const Tensor& a, const Tensor& b, LinearPrecision precision) {
  const std::int64_t M = a.shape()[a.dim() - 2], K = a.shape()[a.dim() - 1], N = b.shape()[b.dim() - 1];
  const Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch_shape;
  try {
    batch_shape = broadcast_shapes(ba, bb, "matmul");
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("matmul: batch dimensions cannot be broadcast: a " + shape_str(a.shape()) + " vs b " +
                                shape_str(b.shape()));
  }
  Shape out_shape = batch_shape;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty_like_layout_of(out_shape, b);
  const std::int64_t batch = numel_of(batch_shape);
  if (out.numel() == 0) return out;
  dispatch_floating(a.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    Operand<T> A = as_operand<T>(a, batch_shape), B = as_operand<T>(b, batch_shape);
    // Element offset of every batch's matrix (of a, b and the result), walking the broadcast batch dims.
    using Offsets = SmallVector<std::int64_t, 8>;  // a plain product (batch 1) allocates nothing
    Offsets a_off(static_cast<std::size_t>(batch)), b_off(a_off), c_off(a_off);
    const Strides c_strides(out.strides().begin(), out.strides().end() - 2);
    std::int64_t i = 0;
    kernels::for_each_row<3>(batch_shape.empty() ? Shape{1} : batch_shape,
                             batch_shape.empty() ? std::array<Strides, 3>{Strides{0}, Strides{0}, Strides{0}}
                                                 : std::array<Strides, 3>{A.batch_strides, B.batch_strides, c_strides},
                             [&](const std::array<std::int64_t, 3>& off, std::int64_t n,
                                 const std::array<std::int64_t, 3>& in) {
                               for (std::int64_t j = 0; j < n; ++j, ++i) {
                                 a_off[i] = off[0] + j * in[0];
                                 b_off[i] = off[1] + j * in[1];
                                 c_off[i] = off[2] + j * in[2];
                               }
                             });
    if (K == 0) {  // empty sums
      out.fill_(0.0);
      return;
    }
    kernels::batched_gemm<T>(batch, M, N, K, A.matrix, a_off.data(), B.matrix, b_off.data(), out.mutable_data<T>(),
                             c_off.data(), out.strides()[out.dim() - 2], nullptr, precision);
  });
  return out;
}

}  // namespace

namespace {

// matmul with its products' inputs in `precision`: float32 for matmul itself, the linear precision for linear's
// definition (core/precision.h). Backward's two products run in the same precision.
Tensor matmul_at(const Tensor& a, const Tensor& b, LinearPrecision precision, std::source_location where) {
  if (a.dtype() != b.dtype())
    throw std::invalid_argument(std::string("matmul: dtype mismatch: a is ") + dtype_name(a.dtype()) + ", b is " +
                                dtype_name(b.dtype()));
  if (a.dim() == 0 || b.dim() == 0)
    throw std::invalid_argument("matmul: both operands need at least one dim, got a " + shape_str(a.shape()) +
                                " and b " + shape_str(b.shape()));
  const std::int64_t ka = a.shape().back(), kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  if (ka != kb)
    throw std::invalid_argument("matmul: inner dimensions differ: a " + shape_str(a.shape()) + " vs b " +
                                shape_str(b.shape()));
  // 1-D operands become a row / a column, and that dim is dropped again afterwards (PyTorch's rule).
  if (a.dim() == 1 && b.dim() == 1) return matmul_at(a.unsqueeze(0), b.unsqueeze(1), precision, where).reshape({});
  if (a.dim() == 1) return matmul_at(a.unsqueeze(0), b, precision, where).squeeze(-2);
  if (b.dim() == 1) return matmul_at(a, b.unsqueeze(-1), precision, where).squeeze(-1);
  // A batch of rows times one matrix (every Linear layer): fold the batch into M, so forward is one GEMM and
  // backward's d(b) = a^T @ g is one GEMM over all rows instead of a batch of products summed afterwards.
  // a: (..B, M, K) -> (B*M, K)  @ b: (K, N) -> (B*M, N) -> (..B, M, N)
  if (b.dim() == 2 && a.dim() > 2) {
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(b.shape()[1]);
    return matmul_at(a.reshape({-1, ka}), b, precision, where).view(out_shape);
  }

  // out = a @ b;  da = g @ b^T summed to a's shape (broadcast batch dims), db = a^T @ g likewise
  Tensor out = batched_matmul_forward(a, b, precision);
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  Tensor as = need_b ? a : Tensor(), bs = need_a ? b : Tensor();
  const Shape sa = a.shape(), sb = b.shape();
  return record_op(out, "matmul", {a, b}, [=](const Tensor& g) {
    return TensorList{need_a ? sum_to(matmul_at(g, bs.transpose(-2, -1), precision, where), sa) : Tensor(),
                      need_b ? sum_to(matmul_at(as.transpose(-2, -1), g, precision, where), sb) : Tensor()};
  }, where);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, std::source_location where) {
  return matmul_at(a, b, LinearPrecision::Float32, where);
}

// y = x W^T + b, PyTorch's F.linear.  x: [.., in]  weight: [out, in]  bias: [out] or undefined -> [.., out]
// The definition is the formula in ops; float32 takes one fused op instead (core/kernels/linear.h): one GEMM over
// all rows with the bias (and relu) added in the same pass, and one graph node where the definition records five.
// Nodes are most of the cost of a small model's step.
namespace {

void check_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.dim() != 2 || x.dim() < 1 || x.shape().back() != weight.shape()[1] ||
      (bias.defined() && (bias.dim() != 1 || bias.shape()[0] != weight.shape()[0])))
    throw std::invalid_argument("linear: expected x [.., in], weight [out, in] and bias [out], got x " +
                                shape_str(x.shape()) + ", weight " + shape_str(weight.shape()) +
                                (bias.defined() ? ", bias " + shape_str(bias.shape()) : std::string(", no bias")));
  if (weight.dtype() != x.dtype() || (bias.defined() && bias.dtype() != x.dtype()))
    throw std::invalid_argument(std::string("linear: x, weight and bias must share a dtype, got x ") +
                                dtype_name(x.dtype()) + " and weight " + dtype_name(weight.dtype()));
}

Tensor linear_definition(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu_after,
                         LinearPrecision precision) {
  Tensor y = matmul_at(x, weight.t(), precision, std::source_location::current());  // [.., out]
  if (bias.defined()) y = y + bias;
  return relu_after ? relu(y) : y;
}

// linear, and with relu_after relu(linear): the fused op's backward masks g by y > 0 (relu's rule) before linear's:
// dx = g W;  dW = g^T x;  db = g summed over the rows
Tensor linear_op(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu_after, const char* name,
                 std::source_location where) {
  check_linear(x, weight, bias);
  const LinearPrecision precision = linear_precision();  // this call's, kept for its backward
  if (!fast_path(x)) return linear_definition(x, weight, bias, relu_after, precision);
  Tensor y = kernels::linear_forward(x, weight, bias, relu_after, precision);
  return record_fused(y, name, {x, weight, bias},
                      [relu_after, precision](const TensorList& in) {
                        return linear_definition(in[0], in[1], in[2], relu_after, precision);
                      },
                      [=](const Tensor& g, const Tensor& out) {
                        const Tensor g_linear = relu_after ? kernels::relu_grad(g, out) : g;
                        const auto [dx, dw, db] = kernels::linear_backward(g_linear, x, weight, x.requires_grad(),
                                                                           weight.requires_grad(),
                                                                           bias.defined() && bias.requires_grad(),
                                                                           precision);
                        return TensorList{dx, dw, db};
                      },
                      where);
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, std::source_location where) {
  return linear_op(x, weight, bias, /*relu_after=*/false, "linear", where);
}

Tensor linear_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, std::source_location where) {
  return linear_op(x, weight, bias, /*relu_after=*/true, "linear_relu", where);
}

}  // namespace cppgrad
