#pragma once
// Tensor: a cheap handle (shared_ptr) to a TensorImpl = storage + shape + strides + offset + dtype,
// plus the autograd fields (requires_grad, grad, grad_fn). Copying a Tensor copies the handle, not the data.
// Views (transpose, slice, expand, ...) share storage; ops that need raw contiguous memory call contiguous().
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace cppgrad {

struct Node;
class Generator;

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;  // in elements, not bytes
  DType dtype = DType::Float32;

  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  // accumulated by backward() on leaves
  std::shared_ptr<Node> grad_fn;     // how this tensor was made; null for leaves
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (e.g. "no gradient")
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- factories (no hidden RNG: random ones take an explicit Generator) ---
  // Uninitialised memory: for results an op writes completely. Use zeros() when any element may stay unwritten.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
  static Tensor ones(const Shape& shape, DType dtype = DType::Float32);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
  static Tensor scalar(double value, DType dtype = DType::Float32);
  static Tensor arange(std::int64_t start, std::int64_t end, DType dtype = DType::Int64);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype);
  static Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::Float32);
  static Tensor rand(const Shape& shape, Generator& gen, DType dtype = DType::Float32);  // U[0, 1)
  static Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& gen);  // [low, high)

  // --- metadata ---
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Strides& strides() const { return impl().strides; }
  std::int64_t offset() const { return impl().offset; }
  std::int64_t dim() const { return static_cast<std::int64_t>(impl().shape.size()); }
  std::int64_t size(std::int64_t d) const;
  std::int64_t numel() const { return numel_of(impl().shape); }
  DType dtype() const { return impl().dtype; }
  bool is_contiguous() const;
  std::string str() const;  // values, for printing and debugging

  // --- raw element access (contiguous kernels use data<T>(); tests use at/item/to_vector) ---
  // Pointers to element [0, 0, ...]; both check that T matches the dtype. data<T>() is for reading; writing goes
  // through mutable_data<T>(), which counts a change of the storage (core/storage.h), so that a kept packing of a
  // weight (core/kernels/packed_weights.h) is made again after an optimizer's step. Reads must not take it: a weight
  // read that way in a step's forward would be packed again at every product.
  template <typename T>
  const T* data() const;
  template <typename T>
  T* mutable_data() const;
  template <typename T>
  T item() const;  // the single value of a one-element tensor
  double item() const;
  double at(const std::vector<std::int64_t>& index) const;  // any dtype, read as double
  void set(const std::vector<std::int64_t>& index, double value) const;
  template <typename T>
  std::vector<T> to_vector() const;  // in row-major logical order, any layout
  std::vector<double> to_double_vector() const;
  bool all_finite() const;  // no NaN or Inf (integer and bool tensors always)

  // --- copies and conversions (differentiable where it makes sense) ---
  Tensor contiguous() const;          // self if already contiguous
  Tensor clone() const;               // always a fresh contiguous copy
  Tensor to(DType dtype) const;       // self if already that dtype
  Tensor detach() const;              // same storage, cut from the graph

  // --- views (share storage; differentiable) ---
  Tensor view(const Shape& shape) const;     // must be viewable without a copy; one size may be -1
  Tensor reshape(const Shape& shape) const;  // view when possible, copy otherwise
  Tensor flatten() const { return reshape({-1}); }
  Tensor transpose(std::int64_t d0, std::int64_t d1) const;
  Tensor t() const { return transpose(-2, -1); }
  Tensor permute(const Dims& dims) const;
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;  // drops dim
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor squeeze() const;
  Tensor expand(const Shape& shape) const;  // broadcast without copying (stride 0)

  // --- autograd ---
  bool requires_grad() const { return impl().requires_grad; }
  Tensor& set_requires_grad(bool value = true);  // only on leaves
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  Tensor grad() const { return Tensor(impl().grad); }  // undefined until a backward reaches it
  void set_grad(const Tensor& g) const;
  void zero_grad() const;  // drops the accumulated gradient
  const std::shared_ptr<Node>& grad_fn() const { return impl().grad_fn; }
  // Reverse-mode differentiation from this tensor, adding into the .grad of every leaf it depends on. Without
  // `grad` the tensor must hold one element (a loss). The graph is freed afterwards unless retain_graph (which
  // defaults to create_graph). With create_graph the gradients carry a graph and can be differentiated again;
  // autograd::grad (core/autograd.h) returns gradients instead of adding them to .grad.
  void backward(const Tensor& grad = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;

  // --- in-place, for optimizers and initialisers (never recorded by autograd) ---
  // Makes this tensor (every handle to it) show `source`'s data: its storage, shape, strides, offset and dtype,
  // shared, not copied; the gradient is dropped, requires_grad kept (PyTorch's `param.data = source`). For a
  // module converting or sharing its parameters; only on leaves.
  void set_data(const Tensor& source) const;
  void fill_(double value) const;
  void copy_(const Tensor& src) const;  // same shape and dtype; src may be any layout
  void add_(const Tensor& src) const;   // this += src, elementwise in place; same shape and dtype, any layouts

  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Builds a tensor header over existing storage (used by view ops).
Tensor make_view(const Tensor& base, Shape shape, Strides strides, std::int64_t offset);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace cppgrad
