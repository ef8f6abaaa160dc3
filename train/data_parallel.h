#pragma once
// The data-parallel step: a batch cut into a fixed number of shards, each shard's forward and backward run on a
// replica of the model (the replicas run on this process's threads), and the shards' gradients and numbers summed
// over one fixed binary tree (train/tree.h): ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) for 8 shards. The
// shards and the tree depend only on the batch and the shard count, so 1 or 2 threads, and 1, 2, 4 or 8 processes
// (each running a contiguous block of shards, a whole subtree, and the blocks summed over the same tree by a
// ProcessLink), give bit-identical gradients. A small model cannot split one op between two cores, but two shards are
// two whole passes. train/gpt_step.h is the GPT's step built on it; a program with its own model uses it so:
//
//   struct Sums {                       // what a shard reports (train/shard_sums.h), summed like the gradients
//     double loss = 0;                  // share * the shard's mean loss: summed, the batch's mean loss
//     auto fields() { return std::tie(loss); }
//   };
//   train::DataParallel<nn::Linear> parallel({.threads = 2, .shards = 8},
//                                            [&] { return std::make_unique<nn::Linear>(options, init); });
//   optim::Adam opt(parallel.model().named_parameters(), ...);
//   ... each step: opt.zero_grad();
//   const Sums sums = parallel.step(rows, [&](nn::Linear& m, const train::Shard& shard) {
//     Tensor loss = loss_of(m, shard.rows);                      // the mean over the shard's rows
//     loss.backward(Tensor::scalar(shard.share, loss.dtype()));  // share * loss: the batch's mean, summed
//     return Sums{shard.share * loss.item()}; });
//   opt.step();                                                  // sums.loss: the batch's loss
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/allocator_release.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "nn/init.h"
#include "nn/module.h"
#include "train/gradient_tree.h"
#include "train/shard_sums.h"
#include "train/tree.h"

namespace cppgrad::train {

// Shard s of n: rows [size * s / n, size * (s + 1) / n), so sizes differ by at most one (and a batch smaller than
// n leaves some shards empty).
std::vector<std::int64_t> worker_slice(const std::vector<std::int64_t>& rows, int s, int n);

// Each shard's share of the batch's loss terms: counts[s] / sum(counts) (0 for an empty batch). A shard whose loss is
// the mean over its own terms, weighted by its share, gives summed gradients equal to those of the batch's mean loss.
std::vector<double> loss_shares(const std::vector<std::int64_t>& counts);

// The tree (train/tree.h) over gradients: shard_params[s][i] is shard s's i-th parameter; the sum lands in shard 0's
// gradients, in place. A missing gradient counts as zeros (made on first need), so every shard adds alike. The
// parameters are shared among `threads` threads; the additions of each element are the same on any number.
void tree_sum_gradients(const std::vector<std::vector<Tensor>>& shard_params, int threads = 1);

// The bytes of the gradients of the parameters that learn (requires_grad), as they are now.
std::int64_t gradient_bytes(const std::vector<Tensor>& params);

// Runs body() on this thread; when `pack_once`, inside a scope where the tiled GEMM packs each linear layer's weight
// once for every product with it (core/kernels/packed_weights.h): for a thread that runs several shards of a step.
void with_weights_packed_once(bool pack_once, const std::function<void()>& body);

// The other processes of a run (distributed/ provides one over MPI; this layer does not depend on MPI).
class ProcessLink {
 public:
  virtual ~ProcessLink() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process passes tensors of the same shapes (an undefined one, no gradient, everywhere or nowhere); each
  // replaces its own, in place, with the sum over processes in the tree over ranks, ((r0 + r1) + (r2 + r3)): the
  // upper levels of the shards' tree (train/tree.h) when each process holds its block's sum. A step calls it once:
  // the gradients and, as one more float64 tensor, the shards' numbers (train/shard_sums.h).
  virtual void tree_sum(const std::vector<Tensor>& tensors) = 0;
  // Every process's values, in rank order; each process passes as many. Not used by a step (check_processes_agree,
  // any_process).
  virtual std::vector<double> all_gather(const std::vector<double>& values) = 0;
  // Rank 0's values of the tensors, byte for byte, on every process (all start from one model).
  virtual void broadcast(const std::vector<Tensor>& tensors) = 0;
};

// Collective: every process passes its `text` (a configuration, a vocabulary); throws std::invalid_argument on every
// process, naming the first rank whose text differs from rank 0's, unless all are equal (compared by a 64-bit hash).
void check_processes_agree(ProcessLink& processes, const std::string& what, const std::string& text);

// Collective: whether any process's `mine` is true (a stop request, seen by one process, stops all at one step).
bool any_process(ProcessLink& processes, bool mine);

struct DataParallelOptions {
  int threads = 1;                  // this process's threads (the shards it runs are shared among them)
  int shards = 8;                   // a power of two, a multiple of the processes
  ProcessLink* processes = nullptr;  // none: this process alone
  // A model whose gradients take at least this many bytes has them summed while its shards' backward passes run
  // (train/gradient_tree.h: GPT-2 124M's peak at 4 x 64 fell from 3.18 to 2.89 GB); a smaller one after them, with
  // the same bits. The early sum saves memory that only a large model misses, and costs a lock per parameter and a
  // thread woken every step: the reversal model's 1.3 ms step took 7% longer with it.
  std::int64_t sum_early_from_bytes = std::int64_t{64} << 20;
};

// One shard of a step, as per_shard sees it.
struct Shard {
  int index = 0;                   // in [0, shards), whichever process runs it
  std::vector<std::int64_t> rows;  // its rows of the batch (not empty: empty shards are skipped)
  double share = 0;                // its fraction of the batch's loss terms
};

// Checks a shard count and process count; throws std::invalid_argument naming them.
void check_shards(int shards, int processes);

// The shard count a program takes when its run does not name one: 2 for a batch of 2 rows or more, else 1. It
// depends on the batch alone, never on the threads or processes, so a run gives the same bits on 1 or 2 threads and
// under mpirun -np 2. Two shards keep both cores of a 2-core machine busy; every further halving of the shards costs
// a thread more, in per-op overhead, than it gives (docs/performance.md, "The default shards").
int default_shards(std::int64_t batch_size);

// The shards a checkpoint written before --shards existed resumes with: its config lacks the key, and such a
// checkpoint resumed with 8, the default then.
inline constexpr int kShardsBeforeTheFlag = 8;

// A seed for shard `shard`'s random draws (dropout) in a step whose own seed is step_seed: a program draws step_seed
// once per step on every process and seeds each replica with it, so the masks depend on the shard, not on which
// thread or process runs it (splitmix64 of the two).
std::uint64_t shard_seed(std::uint64_t step_seed, int shard);

// The model (an nn::Module) and one replica per shard this process runs. A replica shares the model's parameter
// storage (Module::share_parameters_with: the optimizer's update of the model is the replicas' too) and owns its
// gradients; the model's gradients are the step's sum.
template <class Model>
class DataParallel {
 public:
  // make() returns a new Model of the same architecture; the first result is the model (its initial values are the
  // run's), the others are replicas (theirs are dropped).
  template <class Make>
  DataParallel(DataParallelOptions options, Make&& make) : options_(options) {
    const int processes = options.processes ? options.processes->size() : 1;
    check_shards(options.shards, processes);
    if (options.threads < 1) throw std::invalid_argument("DataParallel: threads must be >= 1, got " +
                                                         std::to_string(options.threads));
    const int local = options.shards / processes;
    first_shard_ = (options.processes ? options.processes->rank() : 0) * local;
    model_ = make();
    for (int s = 0; s < local; ++s) {
      {
        const nn::init::SkipInit skip;  // a replica's values are the model's: none are drawn (nn/init.h)
        replicas_.push_back(make());
      }
      replicas_.back()->share_parameters_with(*model_);
      shard_params_.push_back(replicas_.back()->parameters());
    }
    params_ = model_->parameters();
    // The replicas' own weights, dropped for the model's, and the initialisation's temporaries sit in this thread's
    // block cache, where only this thread's blocks of the same sizes could reuse them (AdamW's moments do; with an
    // optimizer keeping fewer, they would stay idle for the whole run).
    release_cached_storage();
  }

  // The model's parameters take `state`'s memory instead of a copy of it (nn::Module::assign_state_dict), and the
  // replicas share it in turn: a finetune's start holds its weights once. All or nothing, as the model's assign is.
  void assign_state_dict(const nn::StateDict& state) {
    // The replicas let go of the model's memory first (which the model's assign refuses to leave them on): onto
    // memory allocated and never touched. Refused or not, they share the model's memory after, and the stand-ins
    // (and, assigned, the model's old memory) are given back.
    for (auto& r : replicas_)
      for (const Tensor& p : r->parameters()) p.set_data(Tensor::empty(p.shape(), p.dtype()));
    auto share = [&] {
      for (auto& r : replicas_) r->share_parameters_with(*model_);
      release_cached_storage();
    };
    try {
      model_->assign_state_dict(state);  // checks the state first: a refusal changes no parameter of the model
    } catch (...) {
      share();
      throw;
    }
    share();
  }

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  // The model's parameters (handles), in Module::parameters() order: what the summed gradients are in.
  const std::vector<Tensor>& parameters() const { return params_; }
  // The model and replicas, one per thread at most: models to evaluate on in parallel (their weights are one).
  std::vector<Model*> workers() const {
    std::vector<Model*> w{model_.get()};
    for (int t = 1; t < threads() && t < static_cast<int>(replicas_.size()); ++t) w.push_back(replicas_[t].get());
    return w;
  }
  int threads() const { return options_.threads; }
  int shards() const { return options_.shards; }

  // One step's forward and backward, as loss.backward() on the whole batch: the gradients of the batch's loss are
  // left in the model's (zero them before, as for one model). per_shard(replica, shard) runs forward and backward of
  // shard.share * (its rows' mean loss) and returns its numbers, a ShardSums struct (train/shard_sums.h); step
  // returns their sums over the batch's shards, in the tree's order. The loss terms of a shard are its rows, or
  // what loss_terms(rows) counts (e.g. the target tokens that are not padding, when the loss is a mean over them).
  template <class PerShard>
  auto step(const std::vector<std::int64_t>& rows, PerShard&& per_shard) {
    return step(rows, [](const std::vector<std::int64_t>& r) { return static_cast<std::int64_t>(r.size()); },
                per_shard);
  }
  template <class LossTerms, class PerShard>
  auto step(const std::vector<std::int64_t>& rows, LossTerms&& loss_terms, PerShard&& per_shard) {
    using Sums = std::invoke_result_t<PerShard&, Model&, const Shard&>;
    static_assert(ShardSums<Sums>, "per_shard returns a struct with fields() (train/shard_sums.h)");
    const std::vector<Shard> shards = cut(rows, loss_terms);
    const int local = static_cast<int>(replicas_.size());
    for (auto& r : replicas_) r->train(model_->is_training());
    std::vector<Sums> results(static_cast<std::size_t>(local));  // an empty shard's: zeros
    // Thread t runs local shards t, t + threads, ...: the same replicas on the same thread every step.
    const int threads = std::min(options_.threads, local);
    // This process's block of the tree (train/tree.h), for the gradients (into the first replica's): a large model's
    // additions each made as soon as both of its shards' gradients are final (train/gradient_tree.h), the rest after.
    std::optional<GradientTree> early;
    if (local > 1 && gradient_bytes(params_) >= options_.sum_early_from_bytes) early.emplace(shard_params_, threads);
    run_in_parallel(threads, [&](int t) {
      std::optional<GradientTree::OnThread> here;
      if (early) here.emplace(*early, t);
      // A thread running several shards packs each weight once for all of them: the shards multiply by the same
      // weights, and the packed panels hold the same values, so the bits are the same.
      with_weights_packed_once(t + threads < local, [&] {
        for (int l = t; l < local; l += threads) {
          // On the thread that owns this replica's gradient memory; through the handles, as Module::zero_grad would
          // build every parameter's dotted name each step.
          for (const Tensor& p : shard_params_[l]) p.zero_grad();
          const Shard& shard = shards[static_cast<std::size_t>(first_shard_ + l)];
          const OnLeafGradient report(early ? early->reports(l) : nullptr);
          if (!shard.rows.empty()) results[l] = per_shard(*replicas_[l], shard);
        }
      });
    });
    if (early) early->finish();
    else tree_sum_gradients(shard_params_, threads);
    // ... and for the numbers.
    tree_sum(local, [&](int into, int from) { add_sums(results[into], results[from]); });
    std::vector<Tensor> grads;
    for (const Tensor& p : shard_params_[0]) grads.push_back(p.grad());
    if (options_.processes) results[0] = sum_over_processes(grads, results[0]);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (!grads[i].defined()) continue;
      if (params_[i].grad().defined()) params_[i].grad().add_(grads[i]);  // accumulating, as backward would
      else params_[i].set_grad(grads[i]);  // the sum's tensor itself: no copy (the replica lets go of it next step)
    }
    return results[0];
  }

 private:
  // Every shard of the batch, on every process (the shares are global): its rows and its share of the loss terms.
  template <class LossTerms>
  std::vector<Shard> cut(const std::vector<std::int64_t>& rows, LossTerms& loss_terms) const {
    std::vector<Shard> shards;
    std::vector<std::int64_t> counts;
    for (int s = 0; s < options_.shards; ++s) {
      shards.push_back({.index = s, .rows = worker_slice(rows, s, options_.shards)});
      counts.push_back(shards.back().rows.empty() ? 0 : loss_terms(shards.back().rows));
    }
    const std::vector<double> share = loss_shares(counts);
    for (std::size_t s = 0; s < shards.size(); ++s) shards[s].share = share[s];
    return shards;
  }

  // The tree's upper levels over the processes, for the block's gradients (in place) and numbers (returned), in one
  // ProcessLink::tree_sum: the numbers ride with the gradients as one more float64 tensor of a width fixed at compile
  // time, so a step exchanges no other message.
  template <class Sums>
  Sums sum_over_processes(const std::vector<Tensor>& grads, Sums block) {
    if constexpr (sums_width<Sums> == 0) {
      options_.processes->tree_sum(grads);
      return block;
    } else {
      const Tensor numbers =
          Tensor::from_vector<double>(sums_to_doubles(block), {static_cast<std::int64_t>(sums_width<Sums>)});
      std::vector<Tensor> tensors = grads;
      tensors.push_back(numbers);
      options_.processes->tree_sum(tensors);
      return sums_from_doubles<Sums>(numbers.data<double>());
    }
  }

  DataParallelOptions options_;
  int first_shard_ = 0;
  std::unique_ptr<Model> model_;
  std::vector<std::unique_ptr<Model>> replicas_;   // one per shard of this process, in shard order
  std::vector<std::vector<Tensor>> shard_params_;  // each replica's parameters (handles), in the same order
  std::vector<Tensor> params_;                     // the model's
};

}  // namespace cppgrad::train
