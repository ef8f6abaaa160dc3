#pragma once
// Giving the block cache back (core/allocator.h keeps freed storage blocks per size, per thread, for reuse). Its own
// header so that the few callers do not put it in front of every file that includes the allocator.

namespace cppgrad {

// Gives this thread's cached storage blocks back to the system. For a point after which the cached sizes will not be
// asked for again on this thread, or not all of them: a data-parallel model's replicas are built whole and then share
// the model's weights (train/data_parallel.h), and their own weights, a copy of the model's, would otherwise stay
// cached on the building thread, where only that thread's later blocks of the same sizes could reuse them.
void release_cached_storage() noexcept;

}  // namespace cppgrad
