#pragma once
// A flat, 64-byte aligned block of bytes shared by a tensor and all of its views. Zero-filled only on request:
// most ops overwrite every byte, and clearing megabytes they are about to write costs as much as the op.
#include <cstddef>
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

 private:
  std::byte* data_ = nullptr;
  std::size_t nbytes_ = 0;
};

}  // namespace cppgrad
