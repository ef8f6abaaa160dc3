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
void free_storage(void* p, std::size_t nbytes);

struct AllocatorStats {
  std::int64_t system_allocations = 0;  // blocks obtained from the system (cache misses), this thread
  std::int64_t reuses = 0;              // blocks served from the cache, this thread
  std::size_t cached_bytes = 0;         // bytes held for reuse, this thread
};
AllocatorStats allocator_stats();

}  // namespace cppgrad
