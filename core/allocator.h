#pragma once
// Memory for tensor storage. A training step allocates the same buffer sizes every time, so freed blocks are
// kept per size (per thread) and handed out again instead of going back to the system: no malloc, mmap or page
// faults in the steady state. This cache is the one piece of process state besides the no-grad switch; it
// holds no values that mean anything (a reused block's contents are garbage, as fresh memory's would be).
// Sanitizer builds bypass it so AddressSanitizer still sees every use after free.
#include <cstddef>
#include <cstdint>

namespace cppgrad {

// 64-byte aligned, at least `nbytes` (rounded up to 64). Throws std::bad_alloc.
void* allocate_storage(std::size_t nbytes);
void free_storage(void* p, std::size_t nbytes) noexcept;  // never throws: it runs in destructors

// Small objects: tensor headers, storage handles, graph nodes and backward closures, each with its shared_ptr
// control block. A training step makes and frees thousands of them; freed blocks are kept per 16-byte size class
// (per thread, on an intrusive free list, so keeping one allocates nothing) and handed out again. Blocks over
// kMaxSmallBytes go to operator new. Aligned for any fundamental type. Sanitizer builds bypass the lists, as above.
inline constexpr std::size_t kMaxSmallBytes = 1024;
void* allocate_small(std::size_t nbytes);
void free_small(void* p, std::size_t nbytes) noexcept;

// The allocator to give std::allocate_shared (or a container) so its blocks come from the small-object lists.
template <typename T>
struct PoolAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "the small-object lists hand out blocks aligned as operator new's; an over-aligned type needs its own");
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_small(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_small(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

struct AllocatorStats {
  std::int64_t system_allocations = 0;  // blocks obtained from the system (cache misses), this thread
  std::int64_t reuses = 0;              // blocks served from the cache, this thread
  std::size_t cached_bytes = 0;         // bytes held for reuse, this thread
};
AllocatorStats allocator_stats();

}  // namespace cppgrad
