#pragma once
// A kernel's scratch on one thread: packed panels and gathered rows. Reused by every call on the thread (its contents
// never outlive a call; they start as garbage), grown when a call needs more, and 64-byte aligned, as every tensor's
// storage is (core/allocator.h), so no vector load from it splits a cache line. A std::vector<float> is 16-byte
// aligned only: where malloc happened to put the GEMM's packed B decided whether every load of a panel split two
// lines, 5-6% of the 256-wide GPT's step on two threads (docs/performance.md).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace cppgrad::kernels {

template <typename T>
class ScratchBuffer {
 public:
  // Room for n values, 64-byte aligned; the previous contents are not kept.
  T* get(std::size_t n) {
    if (n > capacity_) {
      const std::size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
      data_.reset();  // the old block goes first: peak memory is the larger block, not both
      data_.reset(static_cast<T*>(std::aligned_alloc(kAlign, bytes)));
      if (!data_) {
        capacity_ = 0;
        throw std::bad_alloc();
      }
      capacity_ = n;
    }
    return data_.get();
  }

 private:
  static constexpr std::size_t kAlign = 64;
  struct Free {
    void operator()(T* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t capacity_ = 0;
};

}  // namespace cppgrad::kernels
