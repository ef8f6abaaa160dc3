#pragma once
// The threads behind run_in_parallel (core/parallel.h) and the kernels' parallel loops (core/kernels/parallel_for.h):
// persistent workers that spin for new work for a few microseconds and then sleep in the kernel (a futex wait).
//
// Why not OpenMP's threads: libgomp's default wait policy spins for a long while after every parallel region, which
// is fine on an idle machine and ruinous on a busy one. With another process running a busy loop on this 2-core
// machine, the default model's two-thread step measured 2.7-2.9 ms against 1.6 ms on one thread: the waiting thread
// spent its share of the core spinning. OMP_WAIT_POLICY=passive cured it (1.8 ms) but can only be set from the
// environment before the program starts, so a library cannot choose it for its users. This pool chooses: a short
// spin catches the next region of a busy step, then the worker sleeps and costs nothing; the caller runs a piece
// itself when no worker has taken it yet, so a worker whose core is taken is not waited for; and when job after job
// takes about as long as the caller alone would have (another process holds the cores), the caller runs every piece
// itself for a stretch of jobs and then tries the workers again (core/kernels/contention.h), so they stop
// spinning on cores the other process needs. None of this changes what a piece computes, only which thread runs it.
//
// Like the allocator's caches it is process state: one pool, made on first use, its threads joined at exit. Between
// calls it keeps only its judgement of whether the workers pay, which decides which thread runs a piece, never what
// a piece computes.
#include <functional>

// Whether this build has threads, decided at compile time: WebAssembly built without -pthread (the browser build,
// docs/browser.md) has none (std::thread fails to start), and there every piece runs on the calling thread, one
// after another, with the same results.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define CPPGRAD_HAS_THREADS 0
#else
#define CPPGRAD_HAS_THREADS 1
#endif

namespace cppgrad {

// Runs piece(i) for every i in [0, n): piece 0 on the calling thread, the others on the pool's workers (created when
// first needed), or on the caller when it is free before a worker has taken them (a worker whose core is busy with
// another process is not waited for). Returns once every piece has finished; then the first exception a piece threw
// (by lowest i) is rethrown here. A piece that calls parallel_pieces again runs that call's pieces one
// after another on its own thread (in_parallel_pieces() is true inside a piece). Every piece runs under the caller's
// execution context (core/execution_context.h: no-grad, anomaly detection, reference mode), captured once when the
// job starts and installed around the piece on whichever thread runs it; a worker is back to its own afterwards.
void parallel_pieces(int n, const std::function<void(int)>& piece);
bool in_parallel_pieces();

// The threads work may be shared among: OpenMP's setting (OMP_NUM_THREADS, or omp_set_num_threads), which the
// programs' --threads flags set, by default the CPUs this process may run on; 1 in a build without threads.
int max_parallel_workers();

}  // namespace cppgrad
