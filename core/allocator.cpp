#include "core/allocator.h"
#include "core/allocator_release.h"

#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <new>
#include <unordered_map>
#include <vector>

namespace cppgrad {

namespace {

constexpr std::size_t kAlignment = 64;
// Per thread; beyond it, freed blocks go back to the system. It must hold a whole step's working set: the
// length-256 configuration frees and re-allocates ~1.7 GB per step, and with a 256 MiB cap every step paid
// for fresh pages again (kernel page clearing was over half its time: 2.4 s per step, 1.25 s with this cap,
// the same peak RSS). Blocks are only ever cached after the step that needed them was using them, so the
// cache does not raise peak memory; it keeps it.
constexpr std::size_t kMaxCachedBytes = std::size_t{2} << 30;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif

std::size_t rounded(std::size_t nbytes) {
  return nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
}

void* system_allocate(std::size_t size) {
  void* p = std::aligned_alloc(kAlignment, size);
  if (!p) throw std::bad_alloc();
  return p;
}

// A thread's cache is destroyed at thread exit, before static objects: a static tensor freed later must not
// touch it. This plain enum is never destroyed, so it can always say which phase the cache is in.
enum class Phase : unsigned char { NotYetBuilt, Alive, Destroyed };
thread_local Phase t_phase = Phase::NotYetBuilt;

struct Cache {
  std::unordered_map<std::size_t, std::vector<void*>> free_blocks;  // by rounded size
  AllocatorStats stats;
  Cache() { t_phase = Phase::Alive; }
  ~Cache() {
    t_phase = Phase::Destroyed;
    for (auto& [size, blocks] : free_blocks)
      for (void* p : blocks) std::free(p);
  }
};

Cache& cache() {
  thread_local Cache c;
  return c;
}

// The small-object lists of one thread: free_lists[c] chains freed blocks of (c + 1) * 16 bytes through their first
// word. At most kMaxSmallCached blocks per class are kept; more go back to operator delete.
constexpr std::size_t kSmallClass = 16;
constexpr std::size_t kSmallClasses = kMaxSmallBytes / kSmallClass;
constexpr std::size_t kMaxSmallCached = std::size_t{1} << 16;
thread_local Phase t_small_phase = Phase::NotYetBuilt;

struct SmallLists {
  struct Block {
    Block* next;
  };
  Block* free_lists[kSmallClasses] = {};
  std::size_t counts[kSmallClasses] = {};
  SmallLists() { t_small_phase = Phase::Alive; }
  ~SmallLists() {
    t_small_phase = Phase::Destroyed;
    for (Block* head : free_lists)
      while (head) {
        Block* next = head->next;
        ::operator delete(head);
        head = next;
      }
  }
};

SmallLists& small_lists() {
  thread_local SmallLists lists;
  return lists;
}

std::size_t small_class(std::size_t nbytes) { return nbytes == 0 ? 0 : (nbytes - 1) / kSmallClass; }

}  // namespace

void* allocate_small(std::size_t nbytes) {
  if (!kCacheEnabled || nbytes > kMaxSmallBytes) return ::operator new(nbytes);
  const std::size_t c = small_class(nbytes);
  // After this thread's lists are gone (thread exit) the block still has its class's full size: another thread
  // may free it into its own lists and hand it out for any size of the class.
  if (t_small_phase == Phase::Destroyed) return ::operator new((c + 1) * kSmallClass);
  SmallLists& lists = small_lists();
  if (SmallLists::Block* b = lists.free_lists[c]) {
    lists.free_lists[c] = b->next;
    --lists.counts[c];
    return b;
  }
  return ::operator new((c + 1) * kSmallClass);
}

void free_small(void* p, std::size_t nbytes) noexcept {
  if (!p) return;
  if (!kCacheEnabled || nbytes > kMaxSmallBytes || t_small_phase != Phase::Alive) return ::operator delete(p);
  const std::size_t c = small_class(nbytes);
  SmallLists& lists = small_lists();
  if (lists.counts[c] >= kMaxSmallCached) return ::operator delete(p);
  auto* b = static_cast<SmallLists::Block*>(p);
  b->next = lists.free_lists[c];
  lists.free_lists[c] = b;
  ++lists.counts[c];
}

void* allocate_storage(std::size_t nbytes) {
  const std::size_t size = rounded(nbytes);
  if (!kCacheEnabled || t_phase == Phase::Destroyed) return system_allocate(size);
  Cache& c = cache();
  auto it = c.free_blocks.find(size);
  if (it != c.free_blocks.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    c.stats.cached_bytes -= size;
    ++c.stats.reuses;
    return p;
  }
  ++c.stats.system_allocations;
  return system_allocate(size);
}

void free_storage(void* p, std::size_t nbytes) noexcept {
  if (!p) return;
  const std::size_t size = rounded(nbytes);
  if (!kCacheEnabled || t_phase != Phase::Alive || cache().stats.cached_bytes + size > kMaxCachedBytes) {
    std::free(p);
    return;
  }
  // Keeping the block needs a list entry, which can itself fail to allocate; this runs in a destructor, where an
  // exception would terminate the program, so such a block goes back to the system instead.
  try {
    Cache& c = cache();
    c.free_blocks[size].push_back(p);
    c.stats.cached_bytes += size;
  } catch (const std::bad_alloc&) {
    std::free(p);
  }
}

void release_cached_storage() noexcept {
  if (!kCacheEnabled || t_phase != Phase::Alive) return;
  Cache& c = cache();
  for (auto& [size, blocks] : c.free_blocks) {
    for (void* p : blocks) std::free(p);
    blocks.clear();
  }
  c.stats.cached_bytes = 0;
#if defined(__GLIBC__)
  malloc_trim(0);  // blocks below glibc's mmap threshold went to its heap: return its free pages too
#endif
}

AllocatorStats allocator_stats() { return t_phase == Phase::Destroyed ? AllocatorStats{} : cache().stats; }

}  // namespace cppgrad
