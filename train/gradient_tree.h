#pragma once
// The shards' gradients summed while their backward passes run. tree_sum_gradients (train/data_parallel.h) adds them
// once every shard has finished, so at the end of a step every shard holds a whole model's gradients: at GPT-2 124M
// with two shards, 0.5 GB more than one model's, at the moment the step's memory peaks. A GradientTree makes the same
// additions, in the same tree (train/tree.h), each as soon as both of its operands are final (OnLeafGradient,
// core/autograd.h: a shard's pass has added into that parameter), and then lets go of the operand it added; so the
// shards whose gradients are added into others give their memory back to the layers still to come.
//
//   GradientTree tree(shard_params, threads);
//   ... thread t:  const GradientTree::OnThread here(tree, t);           // for the whole of its shards' work
//                  { const OnLeafGradient hook(tree.reports(s)); per_shard(...); }   // each of its shards s
//   tree.finish();  // the additions left; shard 0's gradients hold the sum, as after tree_sum_gradients
//
// Who adds: the thread that runs the added operand's shard (the `from` of into += from), which allocated its memory
// and so is the one to give it back (core/allocator.h keeps freed blocks per thread; a block freed on another thread
// would leave its own thread allocating afresh every step). It adds at its next report, or once its shards are done:
// every thread then waits for the others' (the step waits for them anyway) and makes what is queued for it meanwhile.
// So shard 0's thread, whose gradients hold the sum, adds nothing for the other threads. One backward pass per shard:
// a parameter reported twice is refused.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"

namespace cppgrad::train {

class GradientTree {
 public:
  // shard_params[s][i]: shard s's i-th parameter (the count of shards a power of two, as DataParallel's per process);
  // shard s runs on thread s % threads.
  GradientTree(const std::vector<std::vector<Tensor>>& shard_params, int threads);

  // Thread t's part, for the lifetime of its shards' work: at its end (also when unwinding) it makes its additions
  // until no other thread's shards are still running.
  class OnThread {
   public:
    OnThread(GradientTree& tree, int thread);
    ~OnThread();
    OnThread(const OnThread&) = delete;
    OnThread& operator=(const OnThread&) = delete;

   private:
    GradientTree& tree_;
    int thread_;
  };

  // What shard s's backward pass reports to, on its thread: an OnLeafGradient's callback.
  std::function<void(const Tensor&)> reports(int shard);
  // The additions left, on the calling thread: those whose thread had finished, and those of parameters some shard
  // gave no gradient (zeros, as in tree_sum_gradients).
  void finish();

 private:
  static constexpr int kMissing = -1;  // no gradient yet
  static constexpr int kBusy = -2;     // an operand of an addition queued or running
  static constexpr int kAdded = -3;    // added into another item

  struct Addition {
    std::size_t param;
    int into, from;
  };

  void arrived(int shard, std::size_t param);
  // With the lock held: queues the addition item s (complete at its level) can take part in now, if any, for the
  // thread of its `from`.
  void queue_ready(std::size_t param, int s);
  // With the lock held (released while adding): makes thread t's queued additions; `let_go` drops each added
  // operand's gradient (on its own thread: t is the thread running that shard).
  void add_queued(int thread, bool let_go, std::unique_lock<std::mutex>& lock);

  const std::vector<std::vector<Tensor>>& shard_params_;
  int shards_, threads_;
  std::mutex mutex_;
  std::condition_variable queued_;  // an addition queued, or a thread done
  int running_ = 0;                 // threads between OnThread's start and end
  std::vector<std::vector<int>> level_;  // level_[i][s]: item s holds shards [s, s + 2^level) of parameter i, or kMissing/kBusy/kAdded
  std::vector<std::vector<Addition>> queue_;  // per thread: the additions whose `from` is one of its shards
};

}  // namespace cppgrad::train
