#pragma once
// A flat, 64-byte aligned block of bytes shared by a tensor and all of its views. Zero-filled only on request:
// most ops overwrite every byte, and clearing megabytes they are about to write costs as much as the op.
// Its version counts the writes, so a kernel that keeps something derived from the values (the packed weights of
// core/kernels/packed_weights.h) can tell they changed. There is no write path it does not see: data() gives the
// bytes to read, and the only pointer to write through is mutable_data()'s, which counts a change (Tensor's
// mutable_data<T>() and its in-place methods fill_, copy_, add_ and set all come here; an optimizer's update too).
// Take the pointer when about to write: a kept packing made between taking it and writing would hold the old values.
#include <atomic>
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

  const std::byte* data() const { return data_; }
  // Relaxed and atomic: pieces of one job on several threads may each take the pointer to write their own part.
  std::byte* mutable_data() {
    version_.fetch_add(1, std::memory_order_relaxed);
    return data_;
  }
  std::size_t nbytes() const { return nbytes_; }
  std::uint64_t version() const { return version_.load(std::memory_order_relaxed); }

 private:
  std::byte* data_ = nullptr;
  std::size_t nbytes_ = 0;
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace cppgrad
