// Ops that choose, join or look up elements: masked_fill, where, cat, stack, index_select, gather, embedding.
#include <stdexcept>

#include "core/autograd.h"
#include "core/kernels/layout.h"
#include "core/kernels/strided.h"
#include "core/ops/elementwise.h"
#include "core/ops/index_add_to_zeros.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"
#include "core/ops/views.h"

namespace cppgrad {

namespace {

void check_bool(const Tensor& mask, const char* op) {
  if (mask.dtype() != DType::Bool)
    throw std::invalid_argument(std::string(op) + ": mask must be a bool tensor, got " + dtype_name(mask.dtype()));
}

void check_index(const Tensor& index, const char* op) {
  if (index.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": index must be an int64 tensor, got " + dtype_name(index.dtype()));
}

// out = cond ? a : b, all broadcast to out_shape (any dtype for a, b).
Tensor select_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& out_shape) {
  Tensor out = Tensor::empty(out_shape, a.dtype());
  dispatch_all(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.mutable_data<T>();
    std::int64_t o = 0;
    kernels::for_each_row<3>(out_shape,
                             {broadcast_strides(cond.shape(), cond.strides(), out_shape),
                              broadcast_strides(a.shape(), a.strides(), out_shape),
                              broadcast_strides(b.shape(), b.strides(), out_shape)},
                             [&](const std::array<std::int64_t, 3>& off, std::int64_t n,
                                 const std::array<std::int64_t, 3>& in) {
                               for (std::int64_t i = 0; i < n; ++i)
                                 po[o + i] = pc[off[0] + i * in[0]] ? pa[off[1] + i * in[1]] : pb[off[2] + i * in[2]];
                               o += n;
                             });
  });
  return out;
}

}  // namespace

// x: (..)  mask: bool, broadcastable to x -> (..);  dx = g where the mask is false, 0 where it filled
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, std::source_location where) {
  check_bool(mask, "masked_fill");
  // As PyTorch's (out-of-place) masked_fill, x and mask broadcast together: a mask larger than x gives a larger out.
  const Shape out_shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  const Tensor fill = Tensor::full({}, value, x.dtype());
  Tensor out = select_kernel(mask.detach(), fill, x.detach(), out_shape);
  Tensor m = mask.detach();
  const Shape x_shape = x.shape();
  // The fill value is an input too (a constant: no gradient), so anomaly detection sees where an infinity came from.
  return record_op(out, "masked_fill", {x, fill}, [m, x_shape](const Tensor& g) {
    return TensorList{sum_to(masked_fill(g, m, 0.0), x_shape), Tensor()};
  }, where);
}

// cond: bool  a, b: same dtype; all broadcast together. da = g where cond (summed to a's shape), db = g elsewhere
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, std::source_location where) {
  check_bool(cond, "where");
  if (a.dtype() != b.dtype())
    throw std::invalid_argument(std::string("where: dtype mismatch: a is ") + dtype_name(a.dtype()) + ", b is " +
                                dtype_name(b.dtype()));
  const Shape out_shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = select_kernel(cond.detach(), a.detach(), b.detach(), out_shape);
  Tensor c = cond.detach();
  const Shape sa = a.shape(), sb = b.shape();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return record_op(out, "where", {a, b}, [=](const Tensor& g) {
    const Tensor zero = Tensor::zeros({}, g.dtype());
    return TensorList{need_a ? sum_to(cppgrad::where(c, g, zero), sa) : Tensor(),
                      need_b ? sum_to(cppgrad::where(c, zero, g), sb) : Tensor()};
  }, where);
}

// xs[i]: (.., S_i, ..) -> (.., sum S_i, ..);  dx_i = the slice of g that x_i filled
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where) {
  if (xs.empty()) throw std::invalid_argument("cat: needs at least one tensor");
  const Tensor& first = xs[0];
  for (std::size_t i = 0; i < xs.size(); ++i)  // as PyTorch: there is no dim to join 0-d tensors along
    if (xs[i].dim() == 0)
      throw std::invalid_argument("cat: tensor " + std::to_string(i) + " is 0-d (shape []) and cannot be "
                                  "concatenated; use stack, or unsqueeze it first");
  const std::int64_t d = normalize_dim(dim, first.dim(), "cat");
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (x.dtype() != first.dtype())
      throw std::invalid_argument("cat: tensor " + std::to_string(i) + " has dtype " + dtype_name(x.dtype()) +
                                  " but tensor 0 has " + dtype_name(first.dtype()) + " (convert one with .to())");
    bool ok = x.dim() == first.dim();
    for (std::int64_t k = 0; ok && k < x.dim(); ++k) ok = k == d || x.shape()[k] == first.shape()[k];
    if (!ok)
      throw std::invalid_argument("cat: tensor " + std::to_string(i) + " has shape " + shape_str(x.shape()) +
                                  " but tensor 0 has " + shape_str(first.shape()) + "; sizes must match except in dim " +
                                  std::to_string(d));
    out_shape[d] += x.shape()[d];
  }
  Tensor out = Tensor::empty(out_shape, first.dtype());
  std::vector<std::int64_t> starts;
  std::int64_t at = 0;
  for (const Tensor& x : xs) {
    starts.push_back(at);
    out.detach().narrow(d, at, x.shape()[d]).copy_(x.detach());
    at += x.shape()[d];
  }
  std::vector<std::int64_t> sizes;
  for (const Tensor& x : xs) sizes.push_back(x.shape()[d]);
  return record_op(out, "cat", TensorList(xs.begin(), xs.end()), [d, starts, sizes](const Tensor& g) {
    TensorList grads;
    for (std::size_t i = 0; i < starts.size(); ++i) grads.push_back(g.narrow(d, starts[i], sizes[i]));
    return grads;
  }, where);
}

// xs[i]: (..S) all equal -> (.., n, ..) with the new dim at `dim`
Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where) {
  if (xs.empty()) throw std::invalid_argument("stack: needs at least one tensor");
  const std::int64_t d = normalize_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape() != xs[0].shape())
      throw std::invalid_argument("stack: tensor " + std::to_string(i) + " has shape " + shape_str(xs[i].shape()) +
                                  " but tensor 0 has " + shape_str(xs[0].shape()) + "; all must be equal");
    if (xs[i].dtype() != xs[0].dtype())
      throw std::invalid_argument("stack: tensor " + std::to_string(i) + " has dtype " + dtype_name(xs[i].dtype()) +
                                  " but tensor 0 has " + dtype_name(xs[0].dtype()) + " (convert one with .to())");
    parts.push_back(xs[i].unsqueeze(d));
  }
  return cat(parts, d, where);
}

// x: (A.., S, B..) with S at dim  index: (I) -> (A.., I, B..);  dx = zeros with g's rows added back at index
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where) {
  check_index(index, "index_select");
  // As PyTorch: a 0-d index selects one element (a dim of size 1 remains), and a 0-d x is one element to select.
  if (index.dim() == 0) return index_select(x, dim, index.reshape({1}), where);
  if (x.dim() == 0) {
    normalize_dim(dim, 0, "index_select");
    if (index.numel() != 1)
      throw std::invalid_argument("index_select: a 0-d x takes an index of one element, got " + shape_str(index.shape()));
    return index_select(x.reshape({1}), 0, index, where).reshape({});
  }
  if (index.dim() != 1)
    throw std::invalid_argument("index_select: index must be 1-D, got shape " + shape_str(index.shape()));
  const std::int64_t d = normalize_dim(dim, x.dim(), "index_select");
  const std::int64_t S = x.shape()[d], I = index.shape()[0];
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < d; ++k) outer *= x.shape()[k];
  for (std::int64_t k = d + 1; k < x.dim(); ++k) inner *= x.shape()[k];
  Tensor idx = index.detach().contiguous();
  const std::int64_t* pi = idx.data<std::int64_t>();
  for (std::int64_t i = 0; i < I; ++i)
    if (pi[i] < 0 || pi[i] >= S)
      throw std::out_of_range("index_select: index " + std::to_string(pi[i]) + " out of range for dim " +
                              std::to_string(d) + " of size " + std::to_string(S) + " (x " + shape_str(x.shape()) + ")");
  Shape out_shape = x.shape();
  out_shape[d] = I;
  Tensor xc = x.detach().contiguous();
  Tensor out = Tensor::empty(out_shape, x.dtype());
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = xc.data<T>();
    T* po = out.mutable_data<T>();
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < I; ++i) {
        const T* src = px + (o * S + pi[i]) * inner;
        T* dst = po + (o * I + i) * inner;
        for (std::int64_t k = 0; k < inner; ++k) dst[k] = src[k];
      }
  });
  const Shape in_shape = x.shape();
  return record_op(out, "index_select", {x}, [in_shape, d, idx](const Tensor& g) {
    return TensorList{index_add_to_zeros(in_shape, d, idx, g)};
  }, where);
}

// out[..., j, ...] = x[..., index[..., j, ...], ...] along dim;  dx = g scattered (added) back to where it was read
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where) {
  check_index(index, "gather");
  // As PyTorch: a 0-d x is read as one element, with a 0-d or 1-D index of zeros; out has the index's shape.
  if (x.dim() == 0) {
    normalize_dim(dim, 0, "gather");
    if (index.dim() > 1)
      throw std::invalid_argument("gather: index " + shape_str(index.shape()) + " must have the same rank as x [] "
                                  "(or be 1-D)");
    return gather(x.reshape({1}), 0, index.reshape({index.numel()}), where).reshape(index.shape());
  }
  const std::int64_t d = normalize_dim(dim, x.dim(), "gather");
  if (index.dim() != x.dim())
    throw std::invalid_argument("gather: index " + shape_str(index.shape()) + " must have the same rank as x " +
                                shape_str(x.shape()));
  for (std::int64_t k = 0; k < x.dim(); ++k)
    if (k != d && index.shape()[k] > x.shape()[k])
      throw std::invalid_argument("gather: index " + shape_str(index.shape()) + " is larger than x " +
                                  shape_str(x.shape()) + " in dim " + std::to_string(k));
  Tensor xc = x.detach().contiguous();
  // Element offsets in x of every output element (backward, scatter_add, finds them again from the index).
  const std::vector<std::int64_t> offsets = gather_offsets(x.shape(), d, index, "gather");
  Tensor out = Tensor::empty(index.shape(), x.dtype());
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = xc.data<T>();
    T* po = out.mutable_data<T>();
    for (std::size_t e = 0; e < offsets.size(); ++e) po[e] = px[offsets[e]];
  });
  const Shape in_shape = x.shape();
  return record_op(out, "gather", {x}, [in_shape, d, index](const Tensor& g) {
    return TensorList{scatter_add(Tensor::zeros(in_shape, g.dtype()), d, index, g)};
  }, where);
}

// weight: (V, D)  ids: (..) -> (.., D)
Tensor embedding(const Tensor& weight, const Tensor& ids, std::source_location where) {
  check_index(ids, "embedding");
  if (weight.dim() != 2)
    throw std::invalid_argument("embedding: weight must be a (V, D) table, got shape " + shape_str(weight.shape()));
  const std::int64_t V = weight.shape()[0];
  const Tensor flat_ids = ids.contiguous();
  const std::int64_t* id_data = flat_ids.data<std::int64_t>();
  for (std::int64_t i = 0, n = flat_ids.numel(); i < n; ++i)
    if (const std::int64_t id = id_data[i]; id < 0 || id >= V)
      throw std::out_of_range("embedding: id " + std::to_string(id) + " is out of range for a table of " +
                              std::to_string(V) + " rows");
  Shape out_shape = ids.shape();
  out_shape.push_back(weight.shape()[1]);
  return reshape(index_select(weight, 0, ids.reshape({-1}), where), out_shape, where);
}

}  // namespace cppgrad
