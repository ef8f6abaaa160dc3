#pragma once
// The thread pool's judgement of whether its workers pay (core/thread_pool.cpp reads the clock and feeds this the
// durations it measured; nothing here reads a clock, so the tests feed it durations of their own and the decisions
// they check never depend on how fast or how loaded the machine is).
//
// A job pays for its workers when it takes clearly less wall time than the caller alone would have taken to run
// every piece (its own pieces' time per piece, times the pieces). When another process holds the cores, the workers
// wait for a core to wake on or are put aside mid-piece (the kernel's time slices, milliseconds, outlast a training
// step's pieces), and the job takes about as long as the caller alone, or longer. After kUnpaidJobsInARow such jobs
// the caller runs the next jobs' pieces itself, first kSoloJobs of them, then one job with the workers as a probe; a
// probe that does not pay doubles the stretch (up to kMaxSoloJobs), one that pays ends it. While the caller works
// alone the workers sleep instead of spinning on cores the other process needs. A machine that is only partly busy,
// where the workers still save time, keeps them. Which thread runs a piece never changes what it computes, so this
// changes speed only, never a result.
#include <algorithm>
#include <cstdint>

namespace cppgrad::kernels {

// One job the pool ran with its workers, by the caller's clock: from publishing the job until the caller found no
// piece left to claim (own_ns, in which it ran `mine` of the `n` pieces), and until every piece had finished (wall_ns).
struct JobTimes {
  std::int64_t own_ns = 0;
  int mine = 1;
  int n = 1;
  std::int64_t wall_ns = 0;
};

class Contention {
 public:
  static constexpr int kUnpaidJobsInARow = 3, kSoloJobs = 64, kMaxSoloJobs = 1024;
  // Jobs whose caller pieces take less than this are not judged: a wake-up is a large share of them.
  static constexpr std::int64_t kJudgedNs = 50'000;
  // A job pays for its workers when it takes at most this share of the caller-alone estimate.
  static constexpr double kPaidShare = 0.9;

  // Whether a job whose caller spent `own_ns` is judged at all (the pool reads the clock again only for those).
  static bool judged(std::int64_t own_ns) { return own_ns >= kJudgedNs; }

  // Whether the next job runs every piece on the caller; asked once per job, it counts a stretch down.
  bool solo_now() {
    if (solo_left_ == 0) return false;
    return --solo_left_ > 0;  // the last job of a stretch is the probe
  }

  // After a job that ran with the workers (solo_now() said no). A judged job that paid breaks the run of jobs that did
  // not and puts the next stretch back to kSoloJobs; the kUnpaidJobsInARow-th that did not pay in a row, or any probe
  // after it that did not, starts a stretch. A job too short to judge changes nothing.
  void record(const JobTimes& job) {
    if (!judged(job.own_ns)) return;
    const double alone = static_cast<double>(job.own_ns) / job.mine * job.n;  // the caller alone: per piece, times n
    record_paid(static_cast<double>(job.wall_ns) <= kPaidShare * alone);
  }

 private:
  void record_paid(bool paid) {
    if (paid) {
      unpaid_in_a_row_ = 0, stretch_ = kSoloJobs;
      return;
    }
    if (++unpaid_in_a_row_ < kUnpaidJobsInARow) return;
    solo_left_ = stretch_ + 1;
    stretch_ = std::min(2 * stretch_, kMaxSoloJobs);
  }

  int unpaid_in_a_row_ = 0, solo_left_ = 0, stretch_ = kSoloJobs;
};

// For tests: puts `next` in place of the process pool's judgement (under the pool's lock, between jobs) and returns
// the one it had, so a test starts from a known state instead of whatever earlier jobs' timings left behind.
Contention exchange_pool_contention(const Contention& next);

}  // namespace cppgrad::kernels
