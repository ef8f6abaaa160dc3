// One execution context (core/execution_context.h): the switches set on a thread hold in every piece of the work it
// hands to run_in_parallel and to the pool, and the workers are back to their own afterwards. Every piece records
// the context it ran under and the thread it ran on; a piece is made to run on a worker (piece 0 waits until
// another thread has run piece 1), so the check cannot pass with every piece on the caller.
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/execution_context.h"
#include "core/kernels/contention.h"
#include "core/parallel.h"
#include "core/thread_pool.h"
#include "test_util.h"

namespace cppgrad {
namespace {

struct Seen {
  ExecutionContext context;
  std::thread::id thread;
};

// Runs an n-piece job through `run` (run_in_parallel or parallel_pieces) and returns what each piece saw. Piece 0
// waits (at most a minute: only a hang reaches it) until another thread has run piece 1, so piece 1 runs on a
// worker; the pool's judgement is made fresh first, so the job is offered to the workers however loaded the machine.
template <typename Run>
std::vector<Seen> what_pieces_see(int n, Run run) {
  const kernels::Contention before = kernels::exchange_pool_contention(kernels::Contention{});
  std::vector<Seen> seen(static_cast<std::size_t>(n));
  std::atomic<bool> piece1_done{false};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  run(n, [&](int i) {
    seen[static_cast<std::size_t>(i)] = {ExecutionContext::current(), std::this_thread::get_id()};
    if (i == 1) piece1_done = true;
    if (i == 0)
      while (!piece1_done && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  });
  kernels::exchange_pool_contention(before);
  return seen;
}

// Every switch away from what a fresh thread starts with.
ExecutionContext all_switched() {
  const ExecutionContext initial = ExecutionContext::initial();
  return {.grad_enabled = !initial.grad_enabled,
          .detect_anomaly = !initial.detect_anomaly,
          .reference_mode = !initial.reference_mode,
          .linear_precision = LinearPrecision::BFloat16};
}

void expect_every_piece_sees(const std::vector<Seen>& seen, const ExecutionContext& want, const char* what) {
  ASSERT_GE(seen.size(), 2u);
  EXPECT_NE(seen[1].thread, std::this_thread::get_id()) << what << ": piece 1 must have run on a worker";
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].context.grad_enabled, want.grad_enabled) << what << " piece " << i;
    EXPECT_EQ(seen[i].context.detect_anomaly, want.detect_anomaly) << what << " piece " << i;
    EXPECT_EQ(seen[i].context.reference_mode, want.reference_mode) << what << " piece " << i;
    EXPECT_EQ(seen[i].context.linear_precision, want.linear_precision) << what << " piece " << i;
  }
}

const auto run_in_parallel_fn = [](int n, const std::function<void(int)>& f) { run_in_parallel(n, f); };
const auto parallel_pieces_fn = [](int n, const std::function<void(int)>& f) { parallel_pieces(n, f); };

TEST(ExecutionContext, TheGuardsSetTheirOwnSwitchAndPutItBack) {
  const ExecutionContext initial = ExecutionContext::current();
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(ExecutionContext::current().grad_enabled);
    EXPECT_FALSE(grad_enabled());
    DetectAnomalyGuard anomaly;
    EXPECT_TRUE(ExecutionContext::current().detect_anomaly);
    ReferenceModeGuard reference(!initial.reference_mode);
    EXPECT_EQ(ExecutionContext::current().reference_mode, !initial.reference_mode);
    EXPECT_EQ(reference_mode(), !initial.reference_mode);
    LinearPrecisionGuard bf16(LinearPrecision::BFloat16);
    EXPECT_EQ(linear_precision(), LinearPrecision::BFloat16);
    {
      ExecutionContextGuard back(initial);
      EXPECT_EQ(ExecutionContext::current(), initial);
      EXPECT_TRUE(grad_enabled());
    }
    EXPECT_EQ(ExecutionContext::current(), all_switched());
  }
  EXPECT_EQ(ExecutionContext::current(), initial);
}

TEST(ExecutionContext, EveryPieceOfRunInParallelRunsUnderTheCallersSwitches) {
  for (const int n : {2, 3}) {
    NoGradGuard no_grad;
    DetectAnomalyGuard anomaly;
    ReferenceModeGuard reference(!ExecutionContext::initial().reference_mode);
    LinearPrecisionGuard bf16(LinearPrecision::BFloat16);
    expect_every_piece_sees(what_pieces_see(n, run_in_parallel_fn), all_switched(), "run_in_parallel");
    expect_every_piece_sees(what_pieces_see(n, parallel_pieces_fn), all_switched(), "parallel_pieces");
  }
  // Each switch alone, so that one carried by accident with another is not mistaken for carried.
  {
    NoGradGuard no_grad;
    ExecutionContext want = ExecutionContext::initial();
    want.grad_enabled = false;
    expect_every_piece_sees(what_pieces_see(2, run_in_parallel_fn), want, "no-grad alone");
  }
  {
    DetectAnomalyGuard anomaly;
    ExecutionContext want = ExecutionContext::initial();
    want.detect_anomaly = true;
    expect_every_piece_sees(what_pieces_see(2, run_in_parallel_fn), want, "anomaly detection alone");
  }
  {
    ReferenceModeGuard reference(!ExecutionContext::initial().reference_mode);
    ExecutionContext want = ExecutionContext::initial();
    want.reference_mode = !want.reference_mode;
    expect_every_piece_sees(what_pieces_see(2, run_in_parallel_fn), want, "reference mode alone");
  }
  {
    LinearPrecisionGuard bf16(LinearPrecision::BFloat16);
    ExecutionContext want = ExecutionContext::initial();
    want.linear_precision = LinearPrecision::BFloat16;
    expect_every_piece_sees(what_pieces_see(2, run_in_parallel_fn), want, "bfloat16 products alone");
  }
}

TEST(ExecutionContext, TheWorkersAreBackToTheirOwnAfterwards) {
  {
    NoGradGuard no_grad;
    DetectAnomalyGuard anomaly;
    ReferenceModeGuard reference(!ExecutionContext::initial().reference_mode);
    LinearPrecisionGuard bf16(LinearPrecision::BFloat16);
    what_pieces_see(2, run_in_parallel_fn);
  }
  EXPECT_EQ(ExecutionContext::current(), ExecutionContext::initial()) << "the caller's own, put back by its guards";
  // The next job's pieces see the caller's context as it is now, not the one the workers last ran under.
  expect_every_piece_sees(what_pieces_see(2, run_in_parallel_fn), ExecutionContext::initial(), "the next job");
}

TEST(ExecutionContext, AThreadThatDoesNotInstallTheContextSeesTheDefaults) {
  // The check above can fail: a thread the context is not installed on starts from initial(), not from the switches
  // of the thread that made it, so a pool that skipped the guard would show pieces with the defaults.
  NoGradGuard no_grad;
  DetectAnomalyGuard anomaly;
  ReferenceModeGuard reference(!ExecutionContext::initial().reference_mode);
  const ExecutionContext caller = ExecutionContext::current();
  ExecutionContext bare, installed;
  std::thread([&] { bare = ExecutionContext::current(); }).join();
  std::thread([&] {
    ExecutionContextGuard in_callers(caller);
    installed = ExecutionContext::current();
  }).join();
  EXPECT_EQ(bare, ExecutionContext::initial());
  EXPECT_NE(bare, caller);
  EXPECT_EQ(installed, caller);
}

}  // namespace
}  // namespace cppgrad
