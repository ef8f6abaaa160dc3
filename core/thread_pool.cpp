#include "core/thread_pool.h"

#if CPPGRAD_HAS_THREADS
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/execution_context.h"
#include "core/kernels/contention.h"

#if CPPGRAD_HAS_THREADS

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPPGRAD_PAUSE() _mm_pause()
#else
#define CPPGRAD_PAUSE() ((void)0)
#endif

namespace cppgrad {

namespace {

thread_local bool g_in_piece = false;

// About 0.24 ms of pause instructions on this machine (measured): long enough to bridge the gap between one
// training step's parallel region and the next (with 2000 rounds, 0.05 ms, the worker fell asleep between steps and
// the futex wake-up made the quiet two-thread step 5% slower), short enough that an idle worker soon gives its core
// back.
constexpr int kSpinRounds = 10000;

// Waits until `word` differs from `seen`: spins first, then sleeps in the kernel until notified. Returns the new value.
template <typename T>
T wait_for_change(const std::atomic<T>& word, T seen) {
  for (int i = 0; i < kSpinRounds; ++i) {
    const T now = word.load(std::memory_order_acquire);
    if (now != seen) return now;
    CPPGRAD_PAUSE();
  }
  for (;;) {
    word.wait(seen, std::memory_order_acquire);
    const T now = word.load(std::memory_order_acquire);
    if (now != seen) return now;
  }
}

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One job at a time: pieces 1..n-1 are claimed by whichever thread comes first, the workers or the caller once it
// has finished piece 0. A worker that the operating system has not yet run (another process holds its core) then
// costs nothing: the caller runs the piece itself instead of waiting for it; one put aside after taking its piece is
// waited for, and Contention (core/kernels/contention.h) keeps that from happening job after job. Which thread runs a
// piece never changes what it computes.
class Pool {
 public:
  ~Pool() {
    job_.store(kStop, std::memory_order_release);
    job_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void run(int n, const std::function<void(int)>& piece) {
    const std::lock_guard<std::mutex> one_caller(caller_);  // two threads outside the pool take turns
    errors_.assign(static_cast<std::size_t>(n), nullptr);
    piece_ = &piece;
    context_ = ExecutionContext::current();  // the caller's switches, for every piece of this job
    if (contention_.solo_now()) {  // the workers' cores are taken: every piece here, in order
      for (int i = 0; i < n; ++i) run_piece(i);
      rethrow_first_error();
      return;
    }
    grow_to(n - 1);
    finished_.store(0, std::memory_order_relaxed);
    // The job word carries the piece count with the generation, so a worker reads both in one load; the claim word
    // carries the generation too, so a worker that wakes late can never claim a piece of a later job.
    const std::uint64_t generation = (job_.load(std::memory_order_relaxed) >> kCountBits) + 1;
    claims_.store(generation << kCountBits | 1, std::memory_order_relaxed);
    const std::int64_t start = now_ns();
    job_.store(generation << kCountBits | static_cast<std::uint64_t>(n), std::memory_order_release);
    job_.notify_all();
    run_piece(0);
    const int mine = 1 + run_claimed(generation, n);
    const std::int64_t own = now_ns() - start;
    for (int done = finished_.load(std::memory_order_acquire); done != n - 1; done = finished_.load(std::memory_order_acquire))
      wait_for_change(finished_, done);
    if (kernels::Contention::judged(own))
      contention_.record({.own_ns = own, .mine = mine, .n = n, .wall_ns = now_ns() - start});
    rethrow_first_error();
  }

  kernels::Contention exchange_contention(const kernels::Contention& next) {
    const std::lock_guard<std::mutex> between_jobs(caller_);
    return std::exchange(contention_, next);
  }

 private:
  static constexpr int kCountBits = 16;
  static constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
  static constexpr std::uint64_t kStop = ~std::uint64_t{0};

  void rethrow_first_error() const {
    for (const std::exception_ptr& e : errors_)
      if (e) std::rethrow_exception(e);
  }

  void run_piece(int i) {
    g_in_piece = true;
    try {
      const ExecutionContextGuard callers(context_);  // on a worker the caller's switches; on the caller, its own
      (*piece_)(i);
    } catch (...) {
      errors_[static_cast<std::size_t>(i)] = std::current_exception();  // an exception must not leave a worker
    }
    g_in_piece = false;
  }

  // Claims and runs pieces of job `generation` until none is left; returns how many this thread ran.
  int run_claimed(std::uint64_t generation, int n) {
    std::uint64_t c = claims_.load(std::memory_order_acquire);
    int ran = 0;
    for (;;) {
      const auto i = static_cast<int>(c & kCountMask);
      if ((c >> kCountBits) != generation || i >= n) return ran;
      if (!claims_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
      run_piece(i);
      ++ran;
      finished_.fetch_add(1, std::memory_order_acq_rel);
      finished_.notify_one();  // the caller may be asleep waiting for this count to change
      c = claims_.load(std::memory_order_acquire);
    }
  }

  // `seen` is the job word when the worker was made: any later job is one it must look at.
  void work(std::uint64_t seen) {
    for (;;) {
      seen = wait_for_change(job_, seen);
      if (seen == kStop) return;
      run_claimed(seen >> kCountBits, static_cast<int>(seen & kCountMask));
    }
  }

  void grow_to(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const std::uint64_t seen = job_.load(std::memory_order_relaxed);  // read before the next job is published
      workers_.emplace_back([this, seen] { work(seen); });
    }
  }

  std::mutex caller_;
  kernels::Contention contention_;  // guarded by caller_
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> job_{0};     // generation << kCountBits | pieces, or kStop
  std::atomic<std::uint64_t> claims_{0};  // generation << kCountBits | the next piece to claim
  std::atomic<int> finished_{0};          // pieces 1..n-1 finished, by whichever thread
  const std::function<void(int)>* piece_ = nullptr;
  ExecutionContext context_;  // the caller's, set before the job is published
  std::vector<std::exception_ptr> errors_;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

kernels::Contention kernels::exchange_pool_contention(const Contention& next) {
  return pool().exchange_contention(next);
}

bool in_parallel_pieces() { return g_in_piece; }

int max_parallel_workers() { return std::clamp(omp_get_max_threads(), 1, 1 << 10); }

void parallel_pieces(int n, const std::function<void(int)>& piece) {
  if (n <= 0) return;
  if (n == 1 || g_in_piece) {  // nothing to share, or already inside a piece: one after another, here
    for (int i = 0; i < n; ++i) piece(i);
    return;
  }
  pool().run(n, piece);
}

}  // namespace cppgrad

#else  // no threads: every piece on the calling thread, in order, with the same contract (first error by lowest i)

namespace cppgrad {

namespace {
thread_local bool g_in_piece = false;
}  // namespace

// No pool, so no judgement to keep or to give back.
kernels::Contention kernels::exchange_pool_contention(const Contention&) { return {}; }

bool in_parallel_pieces() { return g_in_piece; }

int max_parallel_workers() { return 1; }

void parallel_pieces(int n, const std::function<void(int)>& piece) {
  if (n <= 0) return;
  if (n == 1 || g_in_piece) {  // as with threads: nothing to share, or already inside a piece
    for (int i = 0; i < n; ++i) piece(i);
    return;
  }
  std::exception_ptr first;
  g_in_piece = true;
  for (int i = 0; i < n; ++i) {
    try {
      piece(i);
    } catch (...) {
      if (!first) first = std::current_exception();  // every piece still runs, as with threads
    }
  }
  g_in_piece = false;
  if (first) std::rethrow_exception(first);
}

}  // namespace cppgrad

#endif
