#include "core/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

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

// Whether the workers are worth waking, judged from each job's own clock: a job pays for its workers when it takes
// clearly less wall time than the caller alone would have taken to run every piece (its own pieces' time per piece,
// times the pieces). When another process holds the cores, the workers wait for a core to wake on or are put aside
// mid-piece (the kernel's time slices, milliseconds, outlast a training step's pieces), and the job takes about as
// long as the caller alone, or longer. After kUnpaidJobsInARow such jobs the caller runs the next jobs' pieces itself,
// first kSoloJobs of them, then one job with the workers as a probe; a probe that does not pay doubles the stretch
// (up to kMaxSoloJobs), one that pays ends it. While the caller works alone the workers sleep instead of spinning on
// cores the other process needs. A machine that is only partly busy, where the workers still save time, keeps them.
// Which thread runs a piece never changes what it computes, so this changes speed only, never a result.
class Contention {
 public:
  bool solo_now() {
    if (solo_left_ == 0) return false;
    return --solo_left_ > 0;  // the last job of a stretch is the probe
  }
  void record(bool paid) {
    if (paid) {
      unpaid_in_a_row_ = 0, stretch_ = kSoloJobs;
      return;
    }
    if (++unpaid_in_a_row_ < kUnpaidJobsInARow) return;
    solo_left_ = stretch_ + 1;
    stretch_ = std::min(2 * stretch_, kMaxSoloJobs);
  }

 private:
  static constexpr int kUnpaidJobsInARow = 3, kSoloJobs = 64, kMaxSoloJobs = 1024;
  int unpaid_in_a_row_ = 0, solo_left_ = 0, stretch_ = kSoloJobs;
};

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Jobs whose caller pieces take less than this are not judged: a wake-up is a large share of them.
constexpr std::int64_t kJudgedNs = 50'000;
// A job pays for its workers when it takes at most this share of the caller-alone estimate.
constexpr double kPaidShare = 0.9;

// One job at a time: pieces 1..n-1 are claimed by whichever thread comes first, the workers or the caller once it
// has finished piece 0. A worker that the operating system has not yet run (another process holds its core) then
// costs nothing: the caller runs the piece itself instead of waiting for it; one put aside after taking its piece is
// waited for, and Contention above keeps that from happening job after job. Which thread runs a piece never changes
// what it computes.
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
    if (own >= kJudgedNs) {  // the caller alone: its time per piece, times the pieces
      const double alone = static_cast<double>(own) / mine * n;
      contention_.record(static_cast<double>(now_ns() - start) <= kPaidShare * alone);
    }
    rethrow_first_error();
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
  Contention contention_;  // guarded by caller_
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> job_{0};     // generation << kCountBits | pieces, or kStop
  std::atomic<std::uint64_t> claims_{0};  // generation << kCountBits | the next piece to claim
  std::atomic<int> finished_{0};          // pieces 1..n-1 finished, by whichever thread
  const std::function<void(int)>* piece_ = nullptr;
  std::vector<std::exception_ptr> errors_;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

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
