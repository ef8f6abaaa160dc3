// The pool behind run_in_parallel and the kernels' loops: every piece exactly once, on distinct threads, nested calls
// run in place, exceptions come back to the caller, and thousands of back-to-back jobs of changing sizes neither lose
// a wake-up nor run a piece twice. Its judgement of whether the workers pay (core/kernels/contention.h) is fed
// durations written here, not measured, and the tests that watch which thread runs a piece first give the pool a
// judgement of their own: no assertion depends on how fast or how loaded the machine is.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/kernels/contention.h"
#include "core/kernels/parallel_for.h"
#include "core/thread_pool.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using kernels::Contention;
using kernels::JobTimes;

// Feeds `c` jobs the way the pool does: each job first asks solo_now(); one that runs with the workers is recorded
// with the next of `jobs_with_workers`. Returns, for each of those, how many jobs ran on the caller alone before it.
std::vector<int> solo_runs(Contention& c, const std::vector<JobTimes>& jobs_with_workers) {
  std::vector<int> runs;
  for (const JobTimes& job : jobs_with_workers) {
    int solo = 0;
    while (c.solo_now())
      if (++solo > 1'000'000) {
        ADD_FAILURE() << "a stretch on the caller that never ends";
        return runs;
      }
    runs.push_back(solo);
    c.record(job);
  }
  return runs;
}

// Runs a two-piece job whose piece 0 waits until another thread has run piece 1, at most `at_most`, and returns the
// thread that ran piece 1: another one only if a worker took it (the caller runs piece 1 after piece 0 returns).
// When the pool offers piece 1 to the workers, a minute is a bound that only a hang reaches; when it runs the job on
// the caller alone, piece 0 waits the whole time and piece 1 runs on the caller however long that is.
std::thread::id piece1_thread_while_piece0_waits_for_it(
    std::chrono::steady_clock::duration at_most = std::chrono::minutes(1)) {
  std::atomic<bool> piece1_done{false};
  std::thread::id piece1_thread;
  const auto give_up = std::chrono::steady_clock::now() + at_most;
  parallel_pieces(2, [&](int i) {
    if (i == 1) piece1_thread = std::this_thread::get_id(), piece1_done = true;
    else
      while (!piece1_done && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  });
  return piece1_thread;
}

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
  // A fresh judgement: the next job goes to the workers, whatever earlier jobs' timings left behind (on a loaded
  // machine they may have put the caller on its own for a stretch of jobs).
  const Contention before = kernels::exchange_pool_contention(Contention{});
  EXPECT_NE(piece1_thread_while_piece0_waits_for_it(), std::this_thread::get_id());
  kernels::exchange_pool_contention(before);
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

// Two pieces, the caller's taking 2 ms. A worker without a core (another process holds it) takes 6 ms over its
// piece, or the caller takes the piece back and runs both: either way the job takes as long as the caller alone, or
// longer. Workers that keep up finish both pieces in 2.1 ms.
constexpr JobTimes kWorkerWithoutACore{.own_ns = 2'000'000, .mine = 1, .n = 2, .wall_ns = 6'000'000};
constexpr JobTimes kCallerTookThePieceBack{.own_ns = 4'000'000, .mine = 2, .n = 2, .wall_ns = 4'000'000};
constexpr JobTimes kWorkersKeepUp{.own_ns = 2'000'000, .mine = 1, .n = 2, .wall_ns = 2'100'000};

TEST(ThreadPool, AWorkerWithoutACoreIsNotWaitedForAgainAndAgain) {
  // Three jobs with the workers, then a stretch of 64 on the caller alone; each probe that still does not pay
  // doubles the stretch, up to 1024.
  const std::vector<int> doubling{0, 0, 0, 64, 128, 256, 512, 1024, 1024, 1024};
  Contention c;
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(doubling.size(), kWorkerWithoutACore)), doubling);
  Contention d;
  EXPECT_EQ(solo_runs(d, std::vector<JobTimes>(doubling.size(), kCallerTookThePieceBack)), doubling);
}

TEST(ThreadPool, WorkersThatKeepUpAreNeverSetAside) {
  Contention c;
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(5000, kWorkersKeepUp)), std::vector<int>(5000, 0));
}

TEST(ThreadPool, AProbeThatPaysGivesThePiecesBackToTheWorkers) {
  Contention c;
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(5, kWorkerWithoutACore)), (std::vector<int>{0, 0, 0, 64, 128}));
  // the probe after the stretch of 256 pays: the jobs after it go to the workers
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(4, kWorkersKeepUp)), (std::vector<int>{256, 0, 0, 0}));
  // and a later run of jobs that do not pay starts again from three in a row and a stretch of 64
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(5, kWorkerWithoutACore)), (std::vector<int>{0, 0, 0, 64, 128}));
}

TEST(ThreadPool, AJobThatPaysBreaksTheRunOfJobsThatDoNot) {
  const JobTimes no = kWorkerWithoutACore, yes = kWorkersKeepUp;
  Contention c;
  EXPECT_EQ(solo_runs(c, {no, no, yes, no, no, yes, no, no, no, no}),
            (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 64}));
}

TEST(ThreadPool, JobsTooShortToJudgeNeitherCountNorBreakTheRun) {
  // The caller's pieces took under 50 us: not judged, however slow (or fast) the job was.
  const JobTimes slow_short{.own_ns = 49'999, .mine = 1, .n = 2, .wall_ns = 10'000'000};
  const JobTimes fast_short{.own_ns = 49'999, .mine = 1, .n = 2, .wall_ns = 1};
  const JobTimes no = kWorkerWithoutACore;
  Contention c;
  EXPECT_EQ(solo_runs(c, {slow_short, slow_short, slow_short, no, fast_short, no, slow_short, no, no}),
            (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 64}));
  // 50 us is judged
  const JobTimes slow_judged{.own_ns = 50'000, .mine = 1, .n = 2, .wall_ns = 10'000'000};
  Contention d;
  EXPECT_EQ(solo_runs(d, std::vector<JobTimes>(4, slow_judged)), (std::vector<int>{0, 0, 0, 64}));
}

TEST(ThreadPool, AJobPaysWhenItTakesAtMostNineTenthsOfTheCallerAlone) {
  // The caller ran 2 of 4 pieces in 2 ms: alone it would have taken 4 ms, so a job pays up to 3.6 ms.
  const JobTimes paid{.own_ns = 2'000'000, .mine = 2, .n = 4, .wall_ns = 3'590'000};
  const JobTimes unpaid{.own_ns = 2'000'000, .mine = 2, .n = 4, .wall_ns = 3'610'000};
  Contention c;
  EXPECT_EQ(solo_runs(c, std::vector<JobTimes>(4, paid)), (std::vector<int>{0, 0, 0, 0}));
  Contention d;
  EXPECT_EQ(solo_runs(d, std::vector<JobTimes>(4, unpaid)), (std::vector<int>{0, 0, 0, 64}));
}

TEST(ThreadPool, AStretchRunsEveryPieceOnTheCallerThenProbesTheWorkers) {
  // The pool itself, given a judgement that has just seen three jobs that did not pay.
  Contention in_a_stretch;
  for (int i = 0; i < 3; ++i) in_a_stretch.record(kWorkerWithoutACore);
  const Contention before = kernels::exchange_pool_contention(in_a_stretch);
  const auto caller = std::this_thread::get_id();
  // Piece 0 gives the workers 1 ms to take piece 1: enough for a woken worker to catch a pool that offered it in
  // the stretch (what this checks), while in a pool that keeps the stretch piece 1 runs on the caller however slow
  // the machine is.
  for (int job = 0; job < Contention::kSoloJobs; ++job)
    ASSERT_EQ(piece1_thread_while_piece0_waits_for_it(std::chrono::milliseconds(1)), caller) << "job " << job;
  EXPECT_NE(piece1_thread_while_piece0_waits_for_it(), caller) << "the probe after the stretch";
  kernels::exchange_pool_contention(before);
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
