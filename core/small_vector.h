#pragma once
// A vector of trivially copyable values that keeps up to N of them inside itself and only goes to the heap beyond
// that (LLVM's SmallVector, reduced to what shapes and strides need). Every tensor carries a shape and strides, and
// every op makes tensors: as std::vector they were two heap allocations per tensor, most of a training step's
// allocations. A rank-6 tensor or smaller now costs none.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace cppgrad {

template <typename T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its elements as bytes");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() = default;
  explicit SmallVector(size_type n, const T& value = T()) { assign(n, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit, so an API that took std::vector (permute, sum over dims) still takes one.
  SmallVector(const std::vector<T>& values) { assign(values.begin(), values.end()); }  // NOLINT(google-explicit-constructor)
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  template <typename It>
  void assign(It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  void assign(size_type n, const T& value) {
    const T copy = value;  // value may live in this vector, which reserve() can free
    size_ = 0;
    reserve(n);
    std::fill(data_, data_ + n, copy);
    size_ = n;
  }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_type capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_type i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](size_type i) const {
    assert(i < size_);
    return data_[i];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    const size_type grown = std::max(n, 2 * capacity_);
    T* fresh = static_cast<T*>(::operator new(grown * sizeof(T)));
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    release();
    data_ = fresh;
    capacity_ = grown;
  }
  void resize(size_type n, const T& value = T()) {
    const T copy = value;  // as in assign
    reserve(n);
    if (n > size_) std::fill(data_ + size_, data_ + n, copy);
    size_ = n;
  }
  void clear() { size_ = 0; }
  void push_back(const T& value) {
    const T copy = value;  // value may live in this vector, which reserve() can move
    reserve(size_ + 1);
    data_[size_++] = copy;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  iterator insert(const_iterator pos, const T& value) {
    const auto at = static_cast<size_type>(pos - data_);
    const T copy = value;
    reserve(size_ + 1);
    std::memmove(data_ + at + 1, data_ + at, (size_ - at) * sizeof(T));
    data_[at] = copy;
    ++size_;
    return data_ + at;
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const auto at = static_cast<size_type>(pos - data_);
    const SmallVector values(first, last);  // the range may live in this vector
    reserve(size_ + values.size());
    std::memmove(data_ + at + values.size(), data_ + at, (size_ - at) * sizeof(T));
    std::copy(values.begin(), values.end(), data_ + at);
    size_ += values.size();
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) { return insert(pos, values.begin(), values.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - data_), n = static_cast<size_type>(last - first);
    std::memmove(data_ + at, data_ + at + n, (size_ - at - n) * sizeof(T));
    size_ -= n;
    return data_ + at;
  }

  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }
  void release() {
    if (on_heap()) ::operator delete(data_);
    data_ = inline_;
    capacity_ = N;
  }
  // Moves other's contents here, leaving other empty (inline values are copied; a heap block changes hands).
  void take(SmallVector& other) {
    if (other.on_heap()) {
      data_ = other.data_, capacity_ = other.capacity_;
      other.data_ = other.inline_, other.capacity_ = N;
    } else {
      std::memcpy(inline_, other.inline_, other.size_ * sizeof(T));
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  T* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = N;
  T inline_[N];
};

}  // namespace cppgrad
