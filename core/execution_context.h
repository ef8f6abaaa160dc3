#pragma once
// The execution context: the switches a thread's ops run under, held together so that work handed to another thread
// can take them along as one value. Each switch keeps its own public guard (NoGradGuard and GradModeGuard in
// core/autograd.h, DetectAnomalyGuard there too, ReferenceModeGuard in core/dispatch.h); those guards set their one
// field of this thread's context and put it back (LinearPrecisionGuard in core/precision.h too). What this header adds
// is the whole:
//
//   const ExecutionContext caller = ExecutionContext::current();   // on the thread that hands the work out
//   ...
//   ExecutionContextGuard in_callers_context(caller);              // on the thread that runs it, around the work
//
// The thread pool (core/thread_pool.h) does exactly that for every job, so run_in_parallel's pieces, the kernels'
// parallel loops and the data-parallel trainer's shards (train/data_parallel.h) all run under their caller's
// switches, and a switch added here is carried everywhere without another line in any of them.
//
// What is carried, and why:
//   grad_enabled    a piece of a forward under NoGradGuard must record no graph either (an evaluation split over
//                   threads would otherwise build graphs nobody frees until the step ends);
//   detect_anomaly  a NaN made on a worker must be named the same as one made on the caller;
//   reference_mode  the whole program, workers included, runs the definitions, or the comparison it exists for
//                   compares kernels with kernels;
//   linear_precision a product split across threads rounds its inputs in every piece or in none.
// What is thread state, not context, and stays on its thread:
//   the packed-weights store (core/kernels/packed_weights.h): one thread's packings, searched and appended without a
//     lock; two threads sharing one would race. A GEMM looks its store up on the thread that calls it, before any
//     split across the pool, and each data-parallel thread opens a store of its own (with_weights_packed_once);
//   "in backward" (core/autograd.cpp): a fact about this thread's stack (a backward pass's rules are running on it),
//     not a choice made for the work; no backward rule hands work to run_in_parallel, and a kernel's parallel loop
//     records no op;
//   the allocator's per-thread block caches and their phases (core/allocator.cpp), and the pool's own "inside a
//     piece" flag: each thread's bookkeeping of itself.
#include "core/precision.h"

namespace cppgrad {

struct ExecutionContext {
  bool grad_enabled = true;     // ops record graphs (NoGradGuard, GradModeGuard)
  bool detect_anomaly = false;  // ops check their results for NaN and Inf (DetectAnomalyGuard)
  bool reference_mode = false;  // ops run their definitions, not the kernels (ReferenceModeGuard, CPPGRAD_REFERENCE)
  LinearPrecision linear_precision = LinearPrecision::Float32;  // float32 products' inputs (LinearPrecisionGuard)

  // The calling thread's switches.
  static ExecutionContext current();
  // What a thread starts with before any guard: grad on, anomaly detection off, reference mode from the
  // environment (CPPGRAD_REFERENCE set to anything but "" or "0"), float32 products.
  static ExecutionContext initial();

  bool operator==(const ExecutionContext&) const = default;
};

// Installs `context` on this thread for its lifetime, and puts back the one before it (also when unwinding).
class ExecutionContextGuard {
 public:
  explicit ExecutionContextGuard(const ExecutionContext& context);
  ~ExecutionContextGuard();
  ExecutionContextGuard(const ExecutionContextGuard&) = delete;
  ExecutionContextGuard& operator=(const ExecutionContextGuard&) = delete;

 private:
  ExecutionContext previous_;
};

namespace detail {
// This thread's context itself: for the switches' own accessors and guards (core/autograd.cpp, core/dispatch.cpp).
ExecutionContext& this_thread_context();
}  // namespace detail

}  // namespace cppgrad
