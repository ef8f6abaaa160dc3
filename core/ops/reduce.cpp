// Reductions over dims. Every one reads the input as a contiguous [outer, inner] matrix whose rows are the
// elements being reduced (the reduced dims are permuted to the end first, which is free when they already are).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/autograd.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/strided.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/scatter.h"

namespace cppgrad {

namespace {

struct ReducePlan {
  Tensor rows;      // x as [outer, inner], contiguous, detached
  std::int64_t outer = 1, inner = 1;
  Shape keep_shape;  // x.shape with reduced dims set to 1
  Shape out_shape;   // keep_shape, or without the reduced dims
  Dims perm;  // kept dims then reduced dims
};

// reduced[i] = 1 when `dims` names dim i of a rank-r tensor (every dim when dims is empty); throws
// "<op>: dim d given twice". Inline up to rank 6, as shapes are: no allocation per reduction.
Dims reduced_dims(std::int64_t r, const Dims& dims, const char* op) {
  Dims reduced(static_cast<std::size_t>(r), dims.empty() ? 1 : 0);
  for (auto d : dims) {
    const std::int64_t nd = normalize_dim(d, r, op);
    if (r > 0 && reduced[nd]) throw std::invalid_argument(std::string(op) + ": dim " + std::to_string(d) + " given twice");
    if (r > 0) reduced[nd] = 1;
  }
  return reduced;
}

ReducePlan plan_reduce(const Tensor& x, const Dims& dims_in, bool keepdim, const char* op) {
  const std::int64_t r = x.dim();
  const Dims reduced = reduced_dims(r, dims_in, op);
  ReducePlan p;
  for (std::int64_t i = 0; i < r; ++i) {
    p.keep_shape.push_back(reduced[i] ? 1 : x.shape()[i]);
    if (!reduced[i]) {
      p.perm.push_back(i);
      p.outer *= x.shape()[i];
      p.out_shape.push_back(x.shape()[i]);
    } else if (keepdim) {
      p.out_shape.push_back(1);
    }
  }
  for (std::int64_t i = 0; i < r; ++i)
    if (reduced[i]) {
      p.perm.push_back(i);
      p.inner *= x.shape()[i];
    }
  if (!keepdim && r > 0 && p.out_shape.empty()) p.out_shape = {};
  p.rows = x.detach().permute(p.perm).contiguous().reshape({p.outer, p.inner});
  return p;
}


// True when `dims` are exactly the leading dims 0..k-1 of x (0 < k < rank): a sum over rows, leaving columns.
bool reduces_leading_dims(const Tensor& x, const Dims& dims) {
  if (dims.empty() || static_cast<std::int64_t>(dims.size()) >= x.dim()) return false;
  const Dims reduced = reduced_dims(x.dim(), dims, "sum");  // k distinct dims: exactly 0..k-1 when those are all in
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (!reduced[i]) return false;
  return true;
}

// x viewed as contiguous [rows, cols] -> out[j] = sum_i x[i, j]. Row by row, so the inner loop runs over
// contiguous columns and vectorises, and no transposed copy is made (bias and position gradients).
template <typename T>
void column_sums(const T* x, std::int64_t rows, std::int64_t cols, T* out) {
  std::fill(out, out + cols, T(0));
  for (std::int64_t i = 0; i < rows; ++i) {
    const T* row = x + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) out[j] += row[j];
  }
}

}  // namespace

// out = sum over dims of x;  dx = g broadcast back over the reduced dims
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::source_location where) {
  if (x.is_contiguous() && reduces_leading_dims(x, dims)) {
    Shape keep = x.shape(), out_shape;
    std::int64_t rows = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) rows *= x.shape()[i], keep[i] = 1;
    for (std::int64_t i = 0; i < x.dim(); ++i)
      if (i >= static_cast<std::int64_t>(dims.size()) || keepdim) out_shape.push_back(keep[i]);
    Tensor out = Tensor::empty(out_shape, x.dtype());
    dispatch_floating(x.dtype(), "sum", [&](auto tag) {
      using T = decltype(tag);
      column_sums(x.data<T>(), rows, x.numel() / std::max<std::int64_t>(rows, 1), out.mutable_data<T>());
    });
    const Shape in_shape = x.shape();
    return record_op(out, "sum", {x}, [keep, in_shape](const Tensor& g) {
      return TensorList{g.reshape(keep).expand(in_shape)};
    }, where);
  }
  ReducePlan p = plan_reduce(x, dims, keepdim, "sum");
  Tensor out = Tensor::empty(p.out_shape, x.dtype());
  dispatch_floating(x.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    const T* in = p.rows.data<T>();
    T* o = out.mutable_data<T>();
    kernels::parallel_for(p.outer, p.outer * p.inner > (1 << 16), [&](std::int64_t i) {
      // Four partial sums let the loop vectorise without reassociating across the whole row.
      T acc[4] = {0, 0, 0, 0};
      const T* row = in + i * p.inner;
      std::int64_t j = 0;
      for (; j + 4 <= p.inner; j += 4)
        for (int k = 0; k < 4; ++k) acc[k] += row[j + k];
      for (; j < p.inner; ++j) acc[0] += row[j];
      o[i] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    });
  });
  const Shape keep = p.keep_shape, in_shape = x.shape();
  return record_op(out, "sum", {x}, [keep, in_shape](const Tensor& g) {
    return TensorList{g.reshape(keep).expand(in_shape)};
  }, where);
}

// out = sum / count;  dx = g / count broadcast back
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim, std::source_location where) {
  Tensor s = sum(x, dims, keepdim, where);
  const std::int64_t count = s.numel() == 0 ? 0 : x.numel() / s.numel();
  return mul(s, 1.0 / static_cast<double>(count), where);
}

// out = max along dim;  dx = g at the (first) maximal element of each slice, 0 elsewhere
Tensor max(const Tensor& x, std::int64_t dim, bool keepdim, std::source_location where) {
  ReducePlan p = plan_reduce(x, {dim}, keepdim, "max");
  if (p.inner == 0) throw std::invalid_argument("max: cannot reduce an empty dim of shape " + shape_str(x.shape()));
  Tensor out = Tensor::empty(p.out_shape, x.dtype());
  Tensor index = Tensor::empty(p.keep_shape, DType::Int64);  // where each maximum was, for backward
  std::int64_t* pi = index.mutable_data<std::int64_t>();  // [outer] in the kept dims' order, as keep_shape
  dispatch_floating(x.dtype(), "max", [&](auto tag) {
    using T = decltype(tag);
    const T* in = p.rows.data<T>();
    T* o = out.mutable_data<T>();
    for (std::int64_t i = 0; i < p.outer; ++i) {
      const T* row = in + i * p.inner;
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < p.inner; ++j)
        if (row[j] > row[best] || (std::isnan(row[j]) && !std::isnan(row[best]))) best = j;
      o[i] = row[best];
      pi[i] = best;
    }
  });
  const Shape keep = p.keep_shape, in_shape = x.shape();
  const std::int64_t d = normalize_dim(dim, std::max<std::int64_t>(x.dim(), 1), "max");
  if (x.dim() == 0) return record_op(out, "max", {x}, [](const Tensor& g) { return TensorList{g}; }, where);
  return record_op(out, "max", {x}, [=](const Tensor& g) {
    return TensorList{scatter_add(Tensor::zeros(in_shape, g.dtype()), d, index, g.reshape(keep))};
  }, where);
}

// Reads the storage in place through the strides: no copy, no graph (autograd and anomaly checks call it too).
double squared_norm(const Tensor& x) {
  double total = 0;
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* base = reinterpret_cast<const T*>(x.impl().storage->data()) + x.offset();
    if (x.is_contiguous()) {  // one vectorised pass (every step's gradient norm reads all parameters' gradients)
      const std::int64_t n = x.numel();
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(base[i]) * static_cast<double>(base[i]);
      total = sum;
      return;
    }
    kernels::for_each_row<1>(x.shape(), {x.strides()}, [&](const std::array<std::int64_t, 1>& off, std::int64_t n,
                                                           const std::array<std::int64_t, 1>& inner) {
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(base[off[0] + i * inner[0]]);
        total += v * v;
      }
    });
  });
  return total;
}

// Not differentiable: nothing is recorded, so `where` is not needed.
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim, [[maybe_unused]] std::source_location where) {
  ReducePlan p = plan_reduce(x, {dim}, keepdim, "argmax");
  if (p.inner == 0) throw std::invalid_argument("argmax: cannot reduce an empty dim of shape " + shape_str(x.shape()));
  Tensor out = Tensor::empty(p.out_shape, DType::Int64);
  std::int64_t* o = out.mutable_data<std::int64_t>();
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = p.rows.template data<T>();
    for (std::int64_t i = 0; i < p.outer; ++i) {
      const T* row = in + i * p.inner;
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < p.inner; ++j)
        if (row[j] > row[best]) best = j;
      o[i] = best;
    }
  });
  return out;
}

}  // namespace cppgrad
