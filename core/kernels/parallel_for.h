#pragma once
// Loops that go parallel only when the work pays for it, on the pool's threads (core/thread_pool.h): each thread
// takes one contiguous range of the iterations. Below the threshold they run on the calling thread and touch no
// other thread at all. Inside a data-parallel worker (core/parallel.h) the loop stays on the worker's thread as
// well: the other threads are busy with their own slices.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/thread_pool.h"

namespace cppgrad::kernels {

// Whether a loop judged `worth_it` by its caller's size threshold should really be split across threads.
inline bool split_across_threads(bool worth_it) {
  return worth_it && !in_parallel_pieces() && max_parallel_workers() > 1;
}

// [begin, end) of piece p when n iterations are cut into `pieces` contiguous ranges of nearly equal size.
inline std::pair<std::int64_t, std::int64_t> piece_range(std::int64_t n, int pieces, int p) {
  const std::int64_t base = n / pieces, extra = n % pieces;
  const std::int64_t begin = p * base + std::min<std::int64_t>(p, extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

// body(i) for every i in [0, n), split across the threads when split_across_threads(worth_it).
template <typename Body>
void parallel_for(std::int64_t n, bool worth_it, Body body) {
  if (!split_across_threads(worth_it) || n < 2) {
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  const int pieces = static_cast<int>(std::min<std::int64_t>(max_parallel_workers(), n));
  parallel_pieces(pieces, [&](int p) {
    const auto [begin, end] = piece_range(n, pieces, p);
    for (std::int64_t i = begin; i < end; ++i) body(i);
  });
}

// The same for a loop the compiler should vectorise (body(i) touches element i only).
template <typename Body>
void parallel_for_simd(std::int64_t n, bool worth_it, Body body) {
  if (!split_across_threads(worth_it) || n < 2) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  const int pieces = static_cast<int>(std::min<std::int64_t>(max_parallel_workers(), n));
  parallel_pieces(pieces, [&](int p) {
    // No structured binding here: Clang 16 crashes on one used in an omp simd loop inside a lambda.
    const std::pair<std::int64_t, std::int64_t> range = piece_range(n, pieces, p);
    const std::int64_t begin = range.first, end = range.second;
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) body(i);
  });
}

}  // namespace cppgrad::kernels
