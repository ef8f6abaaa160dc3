#pragma once
// Coarse-grained parallelism: n independent pieces of work (the slices of a batch) run on n threads at once.
// This is how a small model uses two cores: its matrices are too small to split one op between threads, but
// two half-batches are two whole forward/backward passes. The kernels' own parallel loops inside a piece run on
// that piece's thread alone (the pool does not nest: core/thread_pool.h), so a piece computes exactly what it would
// compute alone: results depend on how the work is sliced, never on timing.
#include <functional>

#include "core/thread_pool.h"  // max_parallel_workers: the threads run_in_parallel can use

namespace cppgrad {

// Runs work(i) for every i in [0, n), each on its own thread (piece 0 on the calling thread). The caller's
// execution context (no-grad, anomaly detection, reference mode: core/execution_context.h) holds inside every
// piece. Once all pieces have finished, the first exception thrown (by lowest i) is rethrown here.
void run_in_parallel(int n, const std::function<void(int)>& work);

}  // namespace cppgrad
