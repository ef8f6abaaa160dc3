#pragma once
// A flat, 64-byte aligned block of bytes shared by a tensor and all of its views. Zero-filled only on request:
// most ops overwrite every byte, and clearing megabytes they are about to write costs as much as the op.
// Its version counts the in-place changes made through Tensor's in-place methods (fill_, copy_, add_, set), so a
// kernel that keeps something derived from the values (core/kernels/packed_weights.h) can tell they changed.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/allocator.h"

namespace cppgrad {

class Storage {
 public:
  Storage(std::size_t nbytes, bool zero) : nbytes_(nbytes) {
    data_ = static_cast<std::byte*>(allocate_storage(nbytes));
    if (zero) std::memset(data_, 0, nbytes);
  }
  ~Storage() { free_storage(data_, nbytes_); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  // Raw writes through Tensor::data<T>() (an optimizer's update, a kernel filling its fresh result) do not count.
  std::uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t nbytes_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace cppgrad
