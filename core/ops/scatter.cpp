// The adjoints of the reading ops: index_add puts rows back where index_select read them, scatter_add puts
// elements back where gather read them, slice_scatter puts a slice back where slice cut it. Each is the other's
// backward, so both directions stay differentiable to any order.
#include <stdexcept>

#include "core/autograd.h"
#include "core/kernels/layout.h"
#include "core/ops/elementwise.h"
#include "core/ops/index_add_to_zeros.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"

namespace cppgrad {

namespace {

void check_adjoint_args(const Tensor& x, const Tensor& index, const Tensor& src, const char* op) {
  if (index.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": index must be an int64 tensor, got " + dtype_name(index.dtype()));
  if (x.dtype() != src.dtype())
    throw std::invalid_argument(std::string(op) + ": x is " + dtype_name(x.dtype()) + " but the source is " +
                                dtype_name(src.dtype()) + " (convert one with .to())");
}

// x: (A.., S, B..)  index: (I) in [0, S)  source: (A.., I, B..) -> x's shape, with source's rows added at index
// dx = g;  dsource = index_select(g, dim, index)
// `x_is_scratch`: x is the caller's own fresh contiguous buffer (no graph), written in place instead of copied.
Tensor index_add_rows(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source, bool x_is_scratch,
                      std::source_location where) {
  check_adjoint_args(x, index, source, "index_add");
  const std::int64_t d = normalize_dim(dim, x.dim(), "index_add");
  Shape expected = x.shape();
  if (x.dim() > 0) expected[d] = index.numel();
  if (index.dim() > 1 || source.shape() != expected)
    throw std::invalid_argument("index_add: index must be 1-D and source shaped like x with dim " + std::to_string(d) +
                                " of the index's length: x " + shape_str(x.shape()) + ", index " +
                                shape_str(index.shape()) + ", source " + shape_str(source.shape()));
  if (x.dim() == 0) return add(x, source.reshape({}), where);
  const Tensor idx = index.detach().contiguous().reshape({-1}), src = source.detach().contiguous();
  Tensor out = x_is_scratch ? x : x.detach().clone();  // contiguous
  // x seen as [outer, S, inner] and source as [outer, I, inner]: row (o, idx[i]) of out += row (o, i) of source.
  const std::int64_t S = x.shape()[d], I = idx.numel();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < d; ++k) outer *= x.shape()[k];
  for (std::int64_t k = d + 1; k < x.dim(); ++k) inner *= x.shape()[k];
  const std::int64_t* pi = idx.data<std::int64_t>();
  for (std::int64_t i = 0; i < I; ++i)
    if (pi[i] < 0 || pi[i] >= S)
      throw std::out_of_range("index_add: index " + std::to_string(pi[i]) + " out of range for dim " +
                              std::to_string(d) + " of size " + std::to_string(S));
  dispatch_floating(x.dtype(), "index_add", [&](auto tag) {
    using T = decltype(tag);
    const T* ps = src.data<T>();
    T* po = out.mutable_data<T>();
    // Serial on purpose: a repeated index adds into the same row, and a fixed order keeps results reproducible.
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < I; ++i) {
        T* dst = po + (o * S + pi[i]) * inner;
        const T* row = ps + (o * I + i) * inner;
        for (std::int64_t k = 0; k < inner; ++k) dst[k] += row[k];
      }
  });
  return record_op(out, "index_add", {x, source}, [d, idx](const Tensor& g) {
    return TensorList{g, index_select(g, d, idx)};
  }, where);
}

}  // namespace

Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source, std::source_location where) {
  return index_add_rows(x, dim, index, source, /*x_is_scratch=*/false, where);
}

Tensor index_add_to_zeros(const Shape& shape, std::int64_t dim, const Tensor& index, const Tensor& source,
                          std::source_location where) {
  const Tensor zeros = Tensor::zeros(shape, source.dtype());
  // With a graph, out and zeros must stay two tensors (zeros is an input of the recorded op); without, one buffer.
  const bool graph = source.requires_grad() && grad_enabled();
  return index_add_rows(zeros, dim, index, source, /*x_is_scratch=*/!graph, where);
}

// x: (..)  index: x's rank, each size <= src's (and <= x's but along dim)  src: (..) -> x's shape, with
// out[..., index[..., j, ...], ...] += src[..., j, ...] along dim.  dx = g;  dsrc = gather(g, dim, index)
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, std::source_location where) {
  check_adjoint_args(x, index, src, "scatter_add");
  const std::int64_t d = normalize_dim(dim, x.dim(), "scatter_add");
  bool ok = index.dim() == x.dim() && src.dim() == x.dim();
  for (std::int64_t k = 0; ok && k < x.dim(); ++k)
    ok = index.shape()[k] <= src.shape()[k] && (k == d || index.shape()[k] <= x.shape()[k]);
  if (!ok)
    throw std::invalid_argument("scatter_add: index " + shape_str(index.shape()) + " must have x's rank and be no "
                                "larger than src " + shape_str(src.shape()) + " in any dim, nor than x " +
                                shape_str(x.shape()) + " in any dim but " + std::to_string(d));
  if (x.dim() == 0) return add(x, src.reshape({}), where);
  Tensor part = src;  // only the index-shaped corner of src is read, as PyTorch
  for (std::int64_t k = 0; k < x.dim(); ++k) part = part.narrow(k, 0, index.shape()[k]);
  const std::vector<std::int64_t> offsets = gather_offsets(x.shape(), d, index, "scatter_add");
  Tensor out = x.detach().clone();
  const Tensor s = part.detach().contiguous();
  dispatch_floating(x.dtype(), "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    const T* ps = s.data<T>();
    T* po = out.mutable_data<T>();
    for (std::size_t e = 0; e < offsets.size(); ++e) po[offsets[e]] += ps[e];  // serial: a fixed order
  });
  return record_op(out, "scatter_add", {x, part}, [d, index](const Tensor& g) {
    return TensorList{g, gather(g, d, index)};
  }, where);
}

// x: (..)  src: shaped like x.slice(dim, start, end, step) -> x's shape with that slice replaced by src.
// dx = g with the slice zeroed;  dsrc = g.slice(dim, start, end, step)
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::int64_t start, std::int64_t end,
                     std::int64_t step, std::source_location where) {
  if (x.dtype() != src.dtype())
    throw std::invalid_argument(std::string("slice_scatter: x is ") + dtype_name(x.dtype()) + " but src is " +
                                dtype_name(src.dtype()) + " (convert one with .to())");
  const Tensor part = x.detach().slice(dim, start, end, step);
  if (part.shape() != src.shape())
    throw std::invalid_argument("slice_scatter: src " + shape_str(src.shape()) + " must have the shape of the slice " +
                                shape_str(part.shape()) + " of x " + shape_str(x.shape()));
  Tensor out = x.detach().clone();
  out.slice(dim, start, end, step).copy_(src.detach());
  return record_op(out, "slice_scatter", {x, src}, [=](const Tensor& g) {
    return TensorList{slice_scatter(g, Tensor::zeros(src.shape(), g.dtype()), dim, start, end, step),
                      g.slice(dim, start, end, step)};
  }, where);
}

}  // namespace cppgrad
