#pragma once
// Loops that go parallel only when the work pays for it. Below the threshold they never enter an OpenMP
// region at all: even a region whose if() clause is false costs libgomp a futex system call (measured: one per
// op, about half the cost of a tiny add with its graph node). Inside a data-parallel worker (core/parallel.h)
// the loop stays on the worker's thread as well: the other threads are busy with their own slices.
#include <omp.h>

#include <cstdint>

namespace cppgrad::kernels {

// Whether a loop judged `worth_it` by its caller's size threshold should really be split across threads.
inline bool split_across_threads(bool worth_it) {
  return worth_it && !omp_in_parallel() && omp_get_max_threads() > 1;
}

// body(i) for every i in [0, n), split across the threads when split_across_threads(worth_it).
template <typename Body>
void parallel_for(std::int64_t n, bool worth_it, Body body) {
  if (split_across_threads(worth_it)) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) body(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) body(i);
  }
}

// The same for a loop the compiler should vectorise (body(i) touches element i only).
template <typename Body>
void parallel_for_simd(std::int64_t n, bool worth_it, Body body) {
  if (split_across_threads(worth_it)) {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) body(i);
  } else {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) body(i);
  }
}

}  // namespace cppgrad::kernels
