#pragma once
// Every differentiable op, declared with its shapes. Each is defined in core/ops/<group>.cpp as one free
// function computing the forward on raw contiguous memory, with its backward lambda right below it.
// Shape vocabulary: B batch, T/L sequence, C channels/classes, D features, H heads, V vocabulary, N rows.
#include <cstdint>
#include <optional>
#include <source_location>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"

namespace cppgrad {

class Generator;

// ---------------------------------------------------------------- elementwise (core/ops/elementwise.cpp)
// Binary ops broadcast NumPy/PyTorch style; both inputs must have the same floating dtype.
// a: (..A)  b: (..B) -> broadcast(..A, ..B); backward sums the gradient back to each input's shape.
Tensor add(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor sub(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor mul(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
Tensor div(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// Scalar variants: x: (..) -> (..)
Tensor add(const Tensor& x, double s, std::source_location where = std::source_location::current());
Tensor mul(const Tensor& x, double s, std::source_location where = std::source_location::current());
Tensor sub(double s, const Tensor& x, std::source_location where = std::source_location::current());  // s - x
Tensor div(double s, const Tensor& x, std::source_location where = std::source_location::current());  // s / x
Tensor neg(const Tensor& x, std::source_location where = std::source_location::current());
Tensor pow(const Tensor& x, double exponent, std::source_location where = std::source_location::current());

// Unary math, x: (..) -> (..)
Tensor exp(const Tensor& x, std::source_location where = std::source_location::current());
Tensor log(const Tensor& x, std::source_location where = std::source_location::current());
Tensor sqrt(const Tensor& x, std::source_location where = std::source_location::current());
Tensor tanh(const Tensor& x, std::source_location where = std::source_location::current());
Tensor sigmoid(const Tensor& x, std::source_location where = std::source_location::current());
Tensor relu(const Tensor& x, std::source_location where = std::source_location::current());
Tensor gelu(const Tensor& x, std::source_location where = std::source_location::current());  // exact: x * Phi(x), as PyTorch's default
Tensor erf(const Tensor& x, std::source_location where = std::source_location::current());

// Comparisons with a number (core/ops/compare.cpp), x: (..) -> bool (..). Not differentiable: a mask is a constant.
Tensor eq(const Tensor& x, double s);
Tensor ne(const Tensor& x, double s);
Tensor lt(const Tensor& x, double s);
Tensor le(const Tensor& x, double s);
Tensor gt(const Tensor& x, double s);
Tensor ge(const Tensor& x, double s);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& x, double s) { return add(x, s); }
inline Tensor operator+(double s, const Tensor& x) { return add(x, s); }
inline Tensor operator-(const Tensor& x, double s) { return add(x, -s); }
inline Tensor operator-(double s, const Tensor& x) { return sub(s, x); }
inline Tensor operator*(const Tensor& x, double s) { return mul(x, s); }
inline Tensor operator*(double s, const Tensor& x) { return mul(x, s); }
inline Tensor operator/(const Tensor& x, double s) { return mul(x, 1.0 / s); }
inline Tensor operator/(double s, const Tensor& x) { return div(s, x); }

// Sums a broadcast gradient back down to `shape` (the inverse of broadcasting). g: broadcast(shape, ..) -> shape
Tensor sum_to(const Tensor& g, const Shape& shape, std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- reductions (core/ops/reduce.cpp)
// x: (..) -> (..) with `dims` removed (or kept as size 1 with keepdim). Empty dims = all dims.
Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::source_location where = std::source_location::current());
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::source_location where = std::source_location::current());
// Maximum over one dim; the gradient goes to the first maximal element, as PyTorch's max(dim).
Tensor max(const Tensor& x, std::int64_t dim, bool keepdim = false, std::source_location where = std::source_location::current());
// The sum of the squares of all elements, in double, any layout and dtype; a value for norms and logs, not an op
// (nothing is recorded). 2-norm: std::sqrt(squared_norm(x)).
double squared_norm(const Tensor& x);
// Index of the first maximum along dim, int64, not differentiable.
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false, std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- matmul (core/ops/matmul.cpp)
// 1-D/2-D and batched: a: (..Ba, M, K)  b: (..Bb, K, N) -> (broadcast(..Ba, ..Bb), M, N).
// A 1-D a is a row (1, K) and a 1-D b a column (K, 1); that dim is dropped from the result, as in PyTorch.
// Inputs may be non-contiguous views (a transposed operand is not copied when its rows are contiguous).
Tensor matmul(const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// y = x W^T + b as one op (PyTorch's F.linear). x: [.., in]  weight: [out, in]  bias: [out] or undefined -> [.., out].
// Equal to add(matmul(x, weight.t()), bias), which records five graph nodes where this records one.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::source_location where = std::source_location::current());
// relu(linear(x, weight, bias)) as one op: a feed-forward block's first layer without a separate relu pass and node.
Tensor linear_relu(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- softmax family (core/ops/softmax.cpp)
// x: (..) -> (..), normalised along dim. A slice whose entries are all -inf (every key masked) has no
// distribution: softmax returns zeros there, log_softmax returns -inf, and both pass back a zero gradient.
Tensor softmax(const Tensor& x, std::int64_t dim = -1, std::source_location where = std::source_location::current());
Tensor log_softmax(const Tensor& x, std::int64_t dim = -1, std::source_location where = std::source_location::current());
// Mean negative log-likelihood of class indices. logits: (.., C) float; target: (..) int64 in [0, C) or
// ignore_index. Returns a scalar; the mean is over non-ignored targets (0 when every target is ignored).
// Note: the class dim is LAST (PyTorch puts it at dim 1 for inputs of rank > 2).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, std::int64_t ignore_index = -100, std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- selection (core/ops/select.cpp)
// mask: bool, broadcastable to x's shape; true entries of x are replaced by value. x: (..) -> (..)
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, std::source_location where = std::source_location::current());
// cond ? a : b, all three broadcast together. cond: bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// Joins along an existing dim (cat) or a new one (stack); all other sizes must agree.
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where = std::source_location::current());
Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where = std::source_location::current());
// x: (.., S, ..) with S at dim; index: (I) int64 -> (.., I, ..). Backward adds rows back (index_add).
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where = std::source_location::current());
// out[i][j][k] = x[i][index[i][j][k]][k] for dim = 1 (PyTorch's gather): index has x's rank and its sizes
// are <= x's in every dim but `dim`. Backward scatters (adds) the gradient back.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where = std::source_location::current());
// The adjoints of index_select, gather and slice (core/ops/scatter.cpp), each the other's backward:
// index_add: x: (A.., S, B..)  index: (I)  source: (A.., I, B..) -> x + source's rows added at index along dim
Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source, std::source_location where = std::source_location::current());
// scatter_add: x + src's elements added where gather would read them: out[.., index[.., j, ..], ..] += src[.., j, ..]
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, std::source_location where = std::source_location::current());
// slice_scatter: x with x.slice(dim, start, end, step) replaced by src (shaped like that slice)
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1, std::source_location where = std::source_location::current());
// Embedding lookup. weight: (V, D)  ids: (..) int64 in [0, V) -> (.., D)
Tensor embedding(const Tensor& weight, const Tensor& ids, std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- attention (core/ops/attention.cpp)
// Scaled dot-product attention as one op: weights = softmax(q k^T / sqrt(dk), blocked keys -inf), output = weights v.
// q: [.., Lq, dk]  k: [.., Lk, dk]  v: [.., Lk, dv] with equal leading dims; mask: bool (true = may attend),
// broadcast to [.., Lq, Lk], or undefined. -> output [.., Lq, dv], weights [.., Lq, Lk].
// Gradients flow through the output only: the weights are returned to be read (attention maps), as PyTorch's
// fused kernels do not return them at all. They are the buffer backward reads: do not modify them in place before
// backward. A row whose keys are all blocked gets zero weights and a zero output.
struct FusedAttention {
  Tensor output;
  Tensor weights;
};
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
                               std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- normalisation, regularisation
// Normalises over the last dim (core/ops/layer_norm.cpp). x: (.., D)  weight, bias: (D) or undefined -> (.., D)
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5, std::source_location where = std::source_location::current());
// Zeroes each element with probability p and scales the rest by 1/(1-p) (core/ops/dropout.cpp).
// Identity when !training or p == 0. x: (..) -> (..)
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen, std::source_location where = std::source_location::current());

// ---------------------------------------------------------------- views (core/ops/views.cpp)
// Differentiable views; the Tensor methods of the same names call these.
Tensor view(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor reshape(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1, std::source_location where = std::source_location::current());
Tensor permute(const Tensor& x, const Dims& dims, std::source_location where = std::source_location::current());
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1, std::source_location where = std::source_location::current());
Tensor unsqueeze(const Tensor& x, std::int64_t dim, std::source_location where = std::source_location::current());
Tensor squeeze(const Tensor& x, std::int64_t dim, std::source_location where = std::source_location::current());
Tensor expand(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor contiguous(const Tensor& x, std::source_location where = std::source_location::current());
// Attention heads: [B, L, H * dh] -> [B, H, L, dh], each head's slice its own batch entry (a view, no copy); and the
// inverse, [B, H, L, dh] -> [B, L, H * dh] (a view when x is stored as [B, L, H, dh], else a copy).
Tensor split_heads(const Tensor& x, std::int64_t n_heads, std::source_location where = std::source_location::current());
Tensor merge_heads(const Tensor& x, std::source_location where = std::source_location::current());

}  // namespace cppgrad
