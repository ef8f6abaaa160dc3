#pragma once
// A flat, 64-byte aligned block of bytes shared by a tensor and all of its views. Zero-filled only on request:
// most ops overwrite every byte, and clearing megabytes they are about to write costs as much as the op.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cppgrad {

class Storage {
 public:
  Storage(std::size_t nbytes, bool zero) : nbytes_(nbytes) {
    // aligned_alloc wants a size that is a multiple of the alignment; 64 bytes = one cache line / AVX-512 vector.
    const std::size_t rounded = (nbytes + 63) / 64 * 64;
    data_ = static_cast<std::byte*>(std::aligned_alloc(64, rounded == 0 ? 64 : rounded));
    if (!data_) throw std::bad_alloc();
    if (zero) std::memset(data_, 0, rounded == 0 ? 64 : rounded);
  }
  ~Storage() { std::free(data_); }
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
