#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/kernels/strided.h"
#include "core/ops/views.h"

namespace cppgrad {

namespace {

// A double as a value of dtype T. Into int64, a value that does not fit (or NaN) is refused, as PyTorch refuses
// it ("value cannot be converted to type int64_t without overflow"): the plain conversion is undefined behaviour.
template <typename T>
T value_as(double v, const char* op) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    // [-2^63, 2^63): every double in it converts exactly (after truncation toward zero).
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      throw std::invalid_argument(std::string(op) + ": value " + std::to_string(v) +
                                  " cannot be converted to int64 without overflow");
  }
  return static_cast<T>(v);
}

}  // namespace

namespace {

void check_dtype(DType actual, DType wanted, const char* what) {
  if (actual != wanted)
    throw std::invalid_argument(std::string(what) + ": tensor has dtype " + dtype_name(actual) + ", asked for " +
                                dtype_name(wanted));
}

std::int64_t element_offset(const Tensor& t, const std::vector<std::int64_t>& index) {
  if (static_cast<std::int64_t>(index.size()) != t.dim())
    throw std::out_of_range("at: index has " + std::to_string(index.size()) + " coordinates for a tensor of shape " +
                            shape_str(t.shape()));
  std::int64_t off = t.offset();
  for (std::size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= t.shape()[d])
      throw std::out_of_range("at: index " + std::to_string(index[d]) + " out of range for dim " + std::to_string(d) +
                              " of shape " + shape_str(t.shape()));
    off += index[d] * t.strides()[d];
  }
  return off;
}

}  // namespace

TensorImpl& Tensor::impl() const {
  if (!impl_) throw std::logic_error("use of an undefined tensor (a default-constructed Tensor or a missing grad)");
  return *impl_;
}

std::int64_t Tensor::size(std::int64_t d) const {
  if (dim() == 0) throw std::out_of_range("size: a 0-d tensor (shape []) has no dim " + std::to_string(d));
  return shape()[normalize_dim(d, dim(), "size")];
}

bool Tensor::is_contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t i = shape().size(); i-- > 0;) {
    if (shape()[i] == 1) continue;
    if (strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

// ------------------------------------------------------------------------------------------- factories
namespace {
Tensor allocate(const Shape& shape, DType dtype, bool zero) {
  for (auto d : shape)
    if (d < 0) throw std::invalid_argument("empty: negative size in shape " + shape_str(shape));
  // In 64 bits even where size_t has 32 (WebAssembly): there a shape of more than 4 GiB is refused, not wrapped.
  constexpr std::uint64_t kMaxBytes = std::min<std::uint64_t>(std::uint64_t{1} << 48, SIZE_MAX);
  std::uint64_t nbytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel_of(shape)), std::uint64_t{dtype_size(dtype)}, &nbytes) ||
      nbytes > kMaxBytes)
    throw std::length_error("empty: shape " + shape_str(shape) + " of " + dtype_name(dtype) + " is too large to allocate");
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->storage = std::allocate_shared<Storage>(PoolAllocator<Storage>(), static_cast<std::size_t>(nbytes), zero);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype) { return allocate(shape, dtype, /*zero=*/false); }
Tensor Tensor::zeros(const Shape& shape, DType dtype) { return allocate(shape, dtype, /*zero=*/true); }
Tensor Tensor::ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.fill_(value);
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::arange(std::int64_t start, std::int64_t end, DType dtype) {
  Tensor t = empty({std::max<std::int64_t>(0, end - start)}, dtype);
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(start + i);
  });
  return t;
}

// A fresh tensor of `shape` for `count` values, or the error naming both.
static Tensor empty_for_values(std::size_t count, const Shape& shape, DType dtype) {
  if (static_cast<std::int64_t>(count) != numel_of(shape))
    throw std::invalid_argument("from_vector: " + std::to_string(count) + " values do not fill shape " + shape_str(shape));
  return Tensor::empty(shape, dtype);
}

// (std::vector<bool> has no data(), so elements are copied one by one for every T alike.)
template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  Tensor t = empty_for_values(values.size(), shape, dtype_of<T>());
  T* p = t.mutable_data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}
template Tensor Tensor::from_vector<float>(const std::vector<float>&, const Shape&);
template Tensor Tensor::from_vector<double>(const std::vector<double>&, const Shape&);
template Tensor Tensor::from_vector<std::int64_t>(const std::vector<std::int64_t>&, const Shape&);
template Tensor Tensor::from_vector<bool>(const std::vector<bool>&, const Shape&);

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  Tensor t = empty_for_values(values.size(), shape, dtype);
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) p[i] = value_as<T>(values[i], "from_vector");
  });
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch_floating(dtype, "randn", [&](auto tag) {
    using T = decltype(tag);
    gen.fill_normal(std::span<T>(t.mutable_data<T>(), static_cast<std::size_t>(t.numel())));
  });
  return t;
}

Tensor Tensor::rand(const Shape& shape, Generator& gen, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch_floating(dtype, "rand", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(gen.uniform());
  });
  return t;
}

Tensor Tensor::randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& gen) {
  Tensor t = empty(shape, DType::Int64);
  auto* p = t.mutable_data<std::int64_t>();
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) p[i] = gen.randint(low, high);
  return t;
}

// ------------------------------------------------------------------------------------------- element access
template <typename T>
const T* Tensor::data() const {
  check_dtype(dtype(), dtype_of<T>(), "data");
  return reinterpret_cast<const T*>(impl().storage->data()) + offset();
}
template const float* Tensor::data<float>() const;
template const double* Tensor::data<double>() const;
template const std::int64_t* Tensor::data<std::int64_t>() const;
template const bool* Tensor::data<bool>() const;

template <typename T>
T* Tensor::mutable_data() const {
  check_dtype(dtype(), dtype_of<T>(), "mutable_data");
  return reinterpret_cast<T*>(impl().storage->mutable_data()) + offset();
}
template float* Tensor::mutable_data<float>() const;
template double* Tensor::mutable_data<double>() const;
template std::int64_t* Tensor::mutable_data<std::int64_t>() const;
template bool* Tensor::mutable_data<bool>() const;

template <typename T>
T Tensor::item() const {
  if (numel() != 1)
    throw std::invalid_argument("item: tensor of shape " + shape_str(shape()) + " has " + std::to_string(numel()) +
                                " elements, expected exactly one");
  return *data<T>();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template std::int64_t Tensor::item<std::int64_t>() const;
template bool Tensor::item<bool>() const;

double Tensor::item() const {
  if (numel() != 1)
    throw std::invalid_argument("item: tensor of shape " + shape_str(shape()) + " has " + std::to_string(numel()) +
                                " elements, expected exactly one");
  return dispatch_all(dtype(), [&](auto tag) { return static_cast<double>(*data<decltype(tag)>()); });
}

double Tensor::at(const std::vector<std::int64_t>& index) const {
  const std::int64_t off = element_offset(*this, index);
  return dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(reinterpret_cast<const T*>(impl().storage->data())[off]);
  });
}

void Tensor::set(const std::vector<std::int64_t>& index, double value) const {
  const std::int64_t off = element_offset(*this, index);
  dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    reinterpret_cast<T*>(impl().storage->mutable_data())[off] = value_as<T>(value, "set");
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check_dtype(dtype(), dtype_of<T>(), "to_vector");
  Tensor c = detach().contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>() const;
template <>
std::vector<bool> Tensor::to_vector<bool>() const {
  check_dtype(dtype(), DType::Bool, "to_vector");
  Tensor c = detach().contiguous();
  const bool* p = c.data<bool>();
  return std::vector<bool>(p, p + c.numel());
}

std::vector<double> Tensor::to_double_vector() const {
  Tensor c = detach().contiguous();
  return dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = c.data<T>();
    std::vector<double> out(static_cast<std::size_t>(c.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
    return out;
  });
}

// ------------------------------------------------------------------------------------------- copies
Tensor Tensor::contiguous() const { return cppgrad::contiguous(*this); }

Tensor Tensor::clone() const {
  // contiguous() returns self when already contiguous; a clone must never alias.
  Tensor out = empty(shape(), dtype());
  out.copy_(*this);
  return record_op(out, "clone", {*this}, [](const Tensor& g) { return TensorList{g}; });
}

Tensor Tensor::to(DType target) const {
  if (target == dtype()) return *this;
  Tensor src = detach().contiguous();
  Tensor out = empty(shape(), target);
  dispatch_all(dtype(), [&](auto stag) {
    using S = decltype(stag);
    dispatch_all(target, [&](auto dtag) {
      using D = decltype(dtag);
      const S* s = src.data<S>();
      D* d = out.mutable_data<D>();
      for (std::int64_t i = 0; i < out.numel(); ++i) d[i] = static_cast<D>(s[i]);
    });
  });
  if (is_floating(dtype()) && is_floating(target)) {
    const DType from = dtype();
    return record_op(out, "to", {*this}, [from](const Tensor& g) { return TensorList{g.to(from)}; });
  }
  return out;
}

// A view of the same elements with no grad_fn and requires_grad off (make_view's header carries neither).
Tensor Tensor::detach() const { return make_view(*this, shape(), strides(), offset()); }

Tensor make_view(const Tensor& base, Shape shape, Strides strides, std::int64_t offset) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->storage = base.impl().storage;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  return Tensor(std::move(impl));
}

// ------------------------------------------------------------------------------------------- views
Tensor Tensor::view(const Shape& s) const { return cppgrad::view(*this, s); }
Tensor Tensor::reshape(const Shape& s) const { return cppgrad::reshape(*this, s); }
Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const { return cppgrad::transpose(*this, d0, d1); }
Tensor Tensor::permute(const Dims& dims) const { return cppgrad::permute(*this, dims); }
Tensor Tensor::slice(std::int64_t d, std::int64_t start, std::int64_t end, std::int64_t step) const {
  return cppgrad::slice(*this, d, start, end, step);
}
// As PyTorch's narrow: a negative start counts from the end, and [start, start + length) must lie in the dim.
Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  if (dim() == 0) throw std::invalid_argument("narrow: cannot be applied to a 0-d tensor (shape [])");
  const std::int64_t dd = normalize_dim(d, dim(), "narrow"), n = shape()[dd];
  if (start < -n || start > n)
    throw std::out_of_range("narrow: start " + std::to_string(start) + " out of range for dim " + std::to_string(d) +
                            " of size " + std::to_string(n) + " (shape " + shape_str(shape()) + ")");
  const std::int64_t s = start < 0 ? start + n : start;
  if (length < 0 || s + length > n)
    throw std::out_of_range("narrow: start (" + std::to_string(s) + ") + length (" + std::to_string(length) +
                            ") exceeds dim " + std::to_string(d) + " of size " + std::to_string(n) + " (shape " +
                            shape_str(shape()) + ")");
  return cppgrad::slice(*this, dd, s, s + length);
}
Tensor Tensor::select(std::int64_t d, std::int64_t index) const { return cppgrad::select(*this, d, index); }
Tensor Tensor::unsqueeze(std::int64_t d) const { return cppgrad::unsqueeze(*this, d); }
Tensor Tensor::squeeze(std::int64_t d) const { return cppgrad::squeeze(*this, d); }
Tensor Tensor::squeeze() const {
  Shape s;
  for (auto d : shape())
    if (d != 1) s.push_back(d);
  return reshape(s);
}
Tensor Tensor::expand(const Shape& s) const { return cppgrad::expand(*this, s); }

// ------------------------------------------------------------------------------------------- autograd
Tensor& Tensor::set_requires_grad(bool value) {
  if (!is_leaf())
    throw std::logic_error("set_requires_grad: only leaf tensors can be marked (this one was made by '" +
                           grad_fn()->name + "'); use detach() first");
  if (value && !is_floating(dtype()))
    throw std::invalid_argument(std::string("set_requires_grad: only floating tensors can require grad, got ") +
                                dtype_name(dtype()));
  impl().requires_grad = value;
  return *this;
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined() && (g.shape() != shape() || g.dtype() != dtype()))
    throw std::invalid_argument("set_grad: gradient " + shape_str(g.shape()) + " " + dtype_name(g.dtype()) +
                                " does not match tensor " + shape_str(shape()) + " " + dtype_name(dtype()));
  impl().grad = g.defined() ? g.impl_ptr() : nullptr;
}

void Tensor::zero_grad() const { impl().grad.reset(); }

void Tensor::set_data(const Tensor& source) const {
  if (!is_leaf())
    throw std::logic_error("set_data: only a leaf's data can be replaced (this tensor was computed by '" +
                           grad_fn()->name + "')");
  TensorImpl& self = impl();
  const TensorImpl& from = source.impl();
  self.storage = from.storage;
  self.shape = from.shape;
  self.strides = from.strides;
  self.offset = from.offset;
  self.dtype = from.dtype;
  self.grad.reset();
}

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  run_backward(*this, grad, retain_graph.value_or(create_graph), /*record_grad_norms=*/false, create_graph);
}

// ------------------------------------------------------------------------------------------- in-place
namespace {

// Whether p[0, n) holds no NaN or Inf. A value is finite unless its exponent bits are all ones; tested on the bits and
// or-ed over a block, with no exit inside the block, the loop is vectorised (std::isfinite with a return per element
// was not: GPT-2 124M's weights took a quarter of `cppgrad-gpt sample`'s start).
template <typename T>
bool finite_values(const T* p, std::int64_t n) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr Bits kExponent = static_cast<Bits>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  constexpr std::int64_t kBlock = 4096;
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t end = std::min(n, start + kBlock);
    Bits not_finite = 0;
    for (std::int64_t i = start; i < end; ++i) {
      Bits b;
      std::memcpy(&b, p + i, sizeof(b));
      not_finite |= static_cast<Bits>((b & kExponent) == kExponent);
    }
    if (not_finite != 0) return false;
  }
  return true;
}

}  // namespace

bool Tensor::all_finite() const {
  if (!is_floating(dtype())) return true;
  if (is_contiguous())  // no copy: a checkpoint's 150 MB embedding is checked where it lies
    return dtype() == DType::Float32 ? finite_values(data<float>(), numel()) : finite_values(data<double>(), numel());
  for (const double v : to_double_vector())
    if (!std::isfinite(v)) return false;
  return true;
}

void Tensor::fill_(double value) const {
  dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = value_as<T>(value, "fill_");
    T* base = reinterpret_cast<T*>(impl().storage->mutable_data());
    kernels::for_each_row<1>(shape(), {strides()}, [&](const std::array<std::int64_t, 1>& off, std::int64_t n,
                                                      const std::array<std::int64_t, 1>& inner) {
      for (std::int64_t i = 0; i < n; ++i) base[offset() + off[0] + i * inner[0]] = v;
    });
  });
}

namespace {

// row(d, r, n, d_step, r_step) for every row of dst and src (the same shape, any layouts): the walk copy_ and add_
// share. d and r point at the row's first elements; each row runs n elements, d_step and r_step apart.
template <typename T, typename Row>
void for_each_row_pair(const Tensor& dst, const Tensor& src, Row row) {
  T* d0 = reinterpret_cast<T*>(dst.impl().storage->mutable_data()) + dst.offset();
  const T* r0 = reinterpret_cast<const T*>(src.impl().storage->data()) + src.offset();
  kernels::for_each_row<2>(dst.shape(), {dst.strides(), src.strides()},
                           [&](const std::array<std::int64_t, 2>& off, std::int64_t n,
                               const std::array<std::int64_t, 2>& inner) {
                             row(d0 + off[0], r0 + off[1], n, inner[0], inner[1]);
                           });
}

}  // namespace

void Tensor::copy_(const Tensor& src) const {
  if (src.shape() != shape())
    throw std::invalid_argument("copy_: source shape " + shape_str(src.shape()) + " vs destination " +
                                shape_str(shape()));
  if (src.dtype() != dtype())
    throw std::invalid_argument(std::string("copy_: source dtype ") + dtype_name(src.dtype()) + " vs destination " +
                                dtype_name(dtype()));
  dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    for_each_row_pair<T>(*this, src, [](T* d, const T* r, std::int64_t n, std::int64_t d_step, std::int64_t r_step) {
      // Short rows that do not overlap take a loop (a call per row cost more than the copy); memmove keeps an
      // overlapping row (a tensor copied onto a shifted view of itself) right.
      if (d_step == 1 && r_step == 1 && n < 64 && (d + n <= r || r + n <= d)) {
        for (std::int64_t i = 0; i < n; ++i) d[i] = r[i];
      } else if (d_step == 1 && r_step == 1) {
        std::memmove(d, r, static_cast<std::size_t>(n) * sizeof(T));
      } else {
        for (std::int64_t i = 0; i < n; ++i) d[i * d_step] = r[i * r_step];
      }
    });
  });
}

void Tensor::add_(const Tensor& src) const {
  if (src.shape() != shape() || src.dtype() != dtype())
    throw std::invalid_argument("add_: source " + shape_str(src.shape()) + " " + dtype_name(src.dtype()) +
                                " vs destination " + shape_str(shape()) + " " + dtype_name(dtype()));
  dispatch_floating(dtype(), "add_", [&](auto tag) {
    using T = decltype(tag);
    for_each_row_pair<T>(*this, src, [](T* d, const T* r, std::int64_t n, std::int64_t d_step, std::int64_t r_step) {
      for (std::int64_t i = 0; i < n; ++i) d[i * d_step] += r[i * r_step];
    });
  });
}

// ------------------------------------------------------------------------------------------- printing
std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(shape=" << shape_str(shape()) << ", dtype=" << dtype_name(dtype()) << ", values=[";
  const auto v = to_double_vector();
  const std::size_t show = std::min<std::size_t>(v.size(), 20);
  for (std::size_t i = 0; i < show; ++i) os << (i ? ", " : "") << v[i];
  if (show < v.size()) os << ", ...";
  os << "])";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace cppgrad
