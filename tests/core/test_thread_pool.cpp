// The pool behind run_in_parallel and the kernels' loops: every piece exactly once, on distinct threads, nested calls
// run in place, exceptions come back to the caller, and thousands of back-to-back jobs of changing sizes neither lose
// a wake-up nor run a piece twice.
#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/kernels/parallel_for.h"
#include "core/thread_pool.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(ThreadPool, EveryPieceRunsOnceAndPieceZeroOnTheCaller) {
  for (int n : {1, 2, 3, 5, 8}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
    std::vector<std::thread::id> ids(static_cast<std::size_t>(n));
    parallel_pieces(n, [&](int i) {
      ++runs[static_cast<std::size_t>(i)];
      ids[static_cast<std::size_t>(i)] = std::this_thread::get_id();
    });
    for (int i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "n " << n << " piece " << i;
    EXPECT_EQ(ids[0], std::this_thread::get_id());  // piece 0 on the caller
  }
}

TEST(ThreadPool, WorkersTakePiecesWhileTheCallerIsBusy) {
  // Piece 0 waits until another thread has run piece 1: it can only finish if a worker took piece 1. (It gives up
  // after 10 s rather than hang, should the pool be running pieces on the caller, as it does when it finds the
  // workers' cores taken by another process.)
  std::atomic<bool> piece1_done{false};
  std::thread::id piece1_thread;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  parallel_pieces(2, [&](int i) {
    if (i == 1) piece1_thread = std::this_thread::get_id(), piece1_done = true;
    else
      while (!piece1_done && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  });
  EXPECT_NE(piece1_thread, std::this_thread::get_id());
}

TEST(ThreadPool, ThousandsOfJobsOfChangingSizesLoseNothing) {
  std::atomic<std::int64_t> total{0};
  std::int64_t expected = 0;
  for (int job = 0; job < 5000; ++job) {
    const int n = 1 + job % 4;
    parallel_pieces(n, [&](int i) { total += i + 1; });
    expected += n * (n + 1) / 2;
  }
  EXPECT_EQ(total.load(), expected);
}

TEST(ThreadPool, ANestedCallRunsItsPiecesInPlace) {
  std::vector<int> inner_on_own_thread(4, 0);
  parallel_pieces(2, [&](int outer) {
    EXPECT_TRUE(in_parallel_pieces());
    const auto me = std::this_thread::get_id();
    parallel_pieces(2, [&](int inner) { inner_on_own_thread[outer * 2 + inner] = std::this_thread::get_id() == me; });
  });
  EXPECT_EQ(inner_on_own_thread, std::vector<int>(4, 1));
  EXPECT_FALSE(in_parallel_pieces());
}

TEST(ThreadPool, TheFirstExceptionByPieceComesBack) {
  EXPECT_THROW_MSG(parallel_pieces(3, [](int i) {
                     if (i >= 1) throw std::runtime_error("piece " + std::to_string(i));
                   }),
                   std::runtime_error, "piece 1");
  std::atomic<int> runs{0};  // the two pieces run at once: a plain int could lose an increment (CI once saw 1)
  parallel_pieces(2, [&](int) { ++runs; });  // the pool still works afterwards
  EXPECT_EQ(runs.load(), 2);
}

TEST(ThreadPool, AWorkerWithoutACoreIsNotWaitedForAgainAndAgain) {
  // A worker whose piece takes three times the caller's (here asleep, as when another process holds its core): the
  // jobs take longer than the caller alone would, so after a few of them the caller runs the pieces itself for a
  // stretch of jobs, then probes, and workers that keep up get pieces again. Every piece still runs exactly once.
  if (max_parallel_workers() < 2) GTEST_SKIP() << "one thread: no workers";
  const auto caller = std::this_thread::get_id();
  auto job = [&](bool worker_loses_its_core) {  // whether piece 1 ran on the caller
    std::atomic<int> runs{0};
    std::atomic<bool> piece1_on_caller{false};
    parallel_pieces(2, [&](int i) {
      ++runs;
      const bool on_caller = std::this_thread::get_id() == caller;
      if (i == 1) piece1_on_caller = on_caller;
      if (!on_caller && worker_loses_its_core) {
        std::this_thread::sleep_for(std::chrono::milliseconds(6));
      } else {
        // long enough for a sleeping worker to wake and take piece 1 whenever the pool hands it out
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
        while (std::chrono::steady_clock::now() < until) {
        }
      }
    });
    EXPECT_EQ(runs.load(), 2);
    return piece1_on_caller.load();
  };
  // Every one of these takes longer than the caller alone would (whether the worker took its piece and slept, or the
  // caller took the piece back first), so the stretch on the caller begins after the third.
  for (int i = 0; i < 6; ++i) job(true);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(job(false)) << "job " << i << " after: no stretch of jobs on the caller";
  int jobs = 1;
  while (job(false)) ASSERT_LT(++jobs, 5000) << "the workers never got pieces back";
}

TEST(ThreadPool, ParallelForCoversEveryIterationOnce) {
  for (std::int64_t n : {0, 1, 2, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    kernels::parallel_for(n, /*worth_it=*/true, [&](std::int64_t i) { ++hits[static_cast<std::size_t>(i)]; });
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "n " << n << " i " << i;
  }
}

}  // namespace
}  // namespace cppgrad
