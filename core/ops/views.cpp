// View ops: new shape/strides/offset over the same storage, no data copied. Each backward maps the
// gradient of the view back onto the layout of its source.
#include <algorithm>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/scatter.h"
#include "core/ops/views.h"

namespace cppgrad {

namespace {

// A view's node, only when x needs one: under no_grad (a decoding step's every view) the view is all there is, and
// record_op's arguments (the list of inputs) are never built. A view computes no values, so there is nothing for
// anomaly detection to check either (record_op skips views too).
template <typename Rule>
Tensor record_view(Tensor out, const char* name, const Tensor& x, Rule&& rule, std::source_location where) {
  if (!needs_graph({&x})) return out;
  return record_op(std::move(out), name, {x}, std::forward<Rule>(rule), where);
}

// Resolves a single -1 in `shape` against numel; checks the sizes multiply up.
Shape infer_shape(const Shape& shape, std::int64_t numel, const char* op, const Shape& from) {
  Shape out = shape;
  std::int64_t known = 1, infer_at = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) throw std::invalid_argument(std::string(op) + ": only one dim can be -1, got " + shape_str(shape));
      infer_at = static_cast<std::int64_t>(i);
    } else if (out[i] < 0) {
      throw std::invalid_argument(std::string(op) + ": invalid size " + std::to_string(out[i]) + " in " + shape_str(shape));
    } else {
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      throw std::invalid_argument(std::string(op) + ": cannot view " + shape_str(from) + " (" + std::to_string(numel) +
                                  " elements) as " + shape_str(shape));
    out[infer_at] = numel / known;
  } else if (known != numel) {
    throw std::invalid_argument(std::string(op) + ": cannot view " + shape_str(from) + " (" + std::to_string(numel) +
                                " elements) as " + shape_str(shape) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

}  // namespace

// x: (..) -> shape, same numel; x must be contiguous.
Tensor view(const Tensor& x, const Shape& shape, std::source_location where) {
  const Shape target = infer_shape(shape, x.numel(), "view", x.shape());
  if (!x.is_contiguous())
    throw std::invalid_argument("view: tensor of shape " + shape_str(x.shape()) +
                                " is not contiguous, so it cannot be viewed as " + shape_str(target) +
                                "; use reshape() (which copies) or contiguous() first");
  Tensor out = make_view(x, target, contiguous_strides(target), x.offset());
  const Shape in_shape = x.shape();
  return record_view(std::move(out), "view", x, [in_shape](const Tensor& g) {
    return TensorList{g.reshape(in_shape)};
  }, where);
}

Tensor reshape(const Tensor& x, const Shape& shape, std::source_location where) {
  infer_shape(shape, x.numel(), "reshape", x.shape());  // a refusal names the op the user called
  if (x.is_contiguous()) return view(x, shape, where);
  return view(contiguous(x, where), shape, where);
}

// x: (.., A, .., B, ..) -> (.., B, .., A, ..)
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1, std::source_location where) {
  const std::int64_t a = normalize_dim(d0, x.dim(), "transpose"), b = normalize_dim(d1, x.dim(), "transpose");
  if (x.dim() == 0) return x;  // as PyTorch: a 0-d tensor has nothing to swap (dims 0 and -1 both name "it")
  Shape shape = x.shape();
  Strides strides = x.strides();
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset());
  return record_view(std::move(out), "transpose", x, [a, b](const Tensor& g) {
    return TensorList{g.transpose(a, b)};
  }, where);
}

// out dim i is x dim dims[i].
Tensor permute(const Tensor& x, const Dims& dims, std::source_location where) {
  const std::int64_t r = x.dim();
  if (static_cast<std::int64_t>(dims.size()) != r)
    throw std::invalid_argument("permute: got " + std::to_string(dims.size()) + " dims for a tensor of shape " +
                                shape_str(x.shape()));
  Dims perm(r), inverse(r, -1);
  Shape shape(r);
  Strides strides(r);
  for (std::int64_t i = 0; i < r; ++i) {
    perm[i] = normalize_dim(dims[i], r, "permute");
    if (inverse[perm[i]] != -1)
      throw std::invalid_argument("permute: dim " + std::to_string(perm[i]) + " appears twice in the permutation");
    inverse[perm[i]] = i;
    shape[i] = x.shape()[perm[i]];
    strides[i] = x.strides()[perm[i]];
  }
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset());
  return record_view(std::move(out), "permute", x, [inverse](const Tensor& g) {
    return TensorList{g.permute(inverse)};
  }, where);
}

// Python-style bounds: negative start/end count from the end, out-of-range ends are clamped.
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step, std::source_location where) {
  if (x.dim() == 0) throw std::invalid_argument("slice: cannot be applied to a 0-d tensor (shape [])");  // as PyTorch
  const std::int64_t d = normalize_dim(dim, x.dim(), "slice");
  if (step <= 0) throw std::invalid_argument("slice: step must be positive, got " + std::to_string(step));
  const std::int64_t n = x.shape()[d];
  auto clamp = [n](std::int64_t i) { return std::clamp(i < 0 ? i + n : i, std::int64_t{0}, n); };
  const std::int64_t s = clamp(start), e = std::max(clamp(end), clamp(start));
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset() + s * x.strides()[d]);
  const Shape in_shape = x.shape();
  return record_view(std::move(out), "slice", x, [in_shape, d, s, e, step](const Tensor& g) {
    // The gradient of the untouched elements is zero; the sliced ones receive g.
    return TensorList{slice_scatter(Tensor::zeros(in_shape, g.dtype()), g, d, s, e, step)};
  }, where);
}

// x: (..) -> (.., 1, ..) with the new size-1 dim at `dim` (which may equal the rank: appended).
Tensor unsqueeze(const Tensor& x, std::int64_t dim, std::source_location where) {
  const std::int64_t d = normalize_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape();
  Strides strides = x.strides();
  const std::int64_t stride = d < x.dim() ? x.shape()[d] * x.strides()[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset());
  return record_view(std::move(out), "unsqueeze", x, [d](const Tensor& g) { return TensorList{g.squeeze(d)}; }, where);
}

// Drops `dim` if its size is 1 (otherwise returns x unchanged, as PyTorch does).
Tensor squeeze(const Tensor& x, std::int64_t dim, std::source_location where) {
  const std::int64_t d = normalize_dim(dim, x.dim(), "squeeze");
  if (x.dim() == 0 || x.shape()[d] != 1) return x;  // a 0-d tensor, or a dim that is not 1: unchanged, as PyTorch
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset());
  return record_view(std::move(out), "squeeze", x, [d](const Tensor& g) { return TensorList{g.unsqueeze(d)}; }, where);
}

// x: (.., n, ..) -> (.., ..), the elements at `index` of dim `dim`;  dx = g placed at index, zeros elsewhere
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index, std::source_location where) {
  if (x.dim() == 0) throw std::invalid_argument("select: cannot be applied to a 0-d tensor (shape [])");  // as PyTorch
  const std::int64_t d = normalize_dim(dim, x.dim(), "select"), n = x.shape()[d];
  const std::int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw std::out_of_range("select: index " + std::to_string(index) + " out of range for dim " + std::to_string(dim) +
                            " of size " + std::to_string(n));
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(x, std::move(shape), std::move(strides), x.offset() + i * x.strides()[d]);
  const Shape in_shape = x.shape();
  return record_view(std::move(out), "select", x, [in_shape, d, i](const Tensor& g) {
    return TensorList{slice_scatter(Tensor::zeros(in_shape, g.dtype()), g.unsqueeze(d), d, i, i + 1, 1)};
  }, where);
}

// x: (..S) -> shape, where each size of S is 1 or equal to its target (-1 keeps it); new dims lead.
Tensor expand(const Tensor& x, const Shape& shape, std::source_location where) {
  if (shape.size() < x.shape().size())
    throw std::invalid_argument("expand: cannot expand " + shape_str(x.shape()) + " to fewer dims " + shape_str(shape));
  const std::size_t lead = shape.size() - x.shape().size();
  Shape target = shape;
  Strides strides(shape.size(), 0);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      if (shape[i] < 0) throw std::invalid_argument("expand: size -1 is not allowed for a new leading dim");
      continue;
    }
    const std::int64_t src = x.shape()[i - lead];
    if (target[i] == -1) target[i] = src;
    if (src == target[i]) {
      strides[i] = x.strides()[i - lead];
    } else if (src != 1) {
      throw std::invalid_argument("expand: cannot expand " + shape_str(x.shape()) + " to " + shape_str(shape) +
                                  " (dim " + std::to_string(i) + " has size " + std::to_string(src) + ", not 1)");
    }
  }
  Tensor out = make_view(x, target, strides, x.offset());
  const Shape in_shape = x.shape();
  return record_view(std::move(out), "expand", x, [in_shape](const Tensor& g) {
    return TensorList{sum_to(g, in_shape)};
  }, where);
}

Tensor contiguous(const Tensor& x, std::source_location where) {
  if (x.is_contiguous()) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  out.copy_(x);
  return record_op(out, "contiguous", {x}, [](const Tensor& g) { return TensorList{g}; }, where);
}

// ------------------------------------------------------------------------------------------- attention heads
// Each is one op with its backward beside it, rather than view + transpose (two graph nodes each): a step splits
// heads 18 times and merges them 6 times, and graph nodes are a large part of a small model's step.
// x: [B, L, D] read as [B, H, L, dh] through strides (L*D, dh, D, 1);  dx = merge_heads(g)
Tensor split_heads(const Tensor& x, std::int64_t n_heads, std::source_location where) {
  if (x.dim() != 3 || n_heads <= 0 || x.shape()[2] % n_heads != 0)
    throw std::invalid_argument("split_heads: x " + shape_str(x.shape()) + " cannot be split into " +
                                std::to_string(n_heads) + " heads: it must be [B, L, D] with D a multiple of the heads");
  const std::int64_t B = x.shape()[0], L = x.shape()[1], D = x.shape()[2], dh = D / n_heads;
  const Tensor xc = contiguous(x, where);  // Linear's output already is: no copy
  Tensor out = make_view(xc, {B, n_heads, L, dh}, {L * D, dh, D, 1}, xc.offset());
  return record_op(out, "split_heads", {xc}, [B, L, D](const Tensor& g) {
    return TensorList{g.transpose(1, 2).reshape({B, L, D})};
  }, where);
}

// x: [B, H, L, dh] -> [B, L, H * dh]; a view when x is stored as [B, L, H, dh] (fused_attention's output is: see
// core/kernels/layout.h), a copy otherwise;  dx = split of g, read back as [B, H, L, dh]
Tensor merge_heads(const Tensor& x, std::source_location where) {
  if (x.dim() != 4) throw std::invalid_argument("merge_heads: x must be [B, H, L, dh], got " + shape_str(x.shape()));
  const std::int64_t B = x.shape()[0], H = x.shape()[1], L = x.shape()[2], dh = x.shape()[3];
  Tensor t = x.detach().transpose(1, 2);  // [B, L, H, dh]
  if (!t.is_contiguous()) t = t.contiguous();
  Tensor out = make_view(t, {B, L, H * dh}, {L * H * dh, H * dh, 1}, t.offset());
  return record_op(out, "merge_heads", {x}, [B, H, L, dh](const Tensor& g) {
    return TensorList{g.reshape({B, L, H, dh}).transpose(1, 2)};
  }, where);
}

}  // namespace cppgrad
