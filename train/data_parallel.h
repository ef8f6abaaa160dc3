#pragma once
// The data-parallel step: a batch's rows split over worker replicas, each running forward and backward of its slice
// on its own thread (core/parallel.h), their gradients summed into the model. A small model cannot split one op
// between two cores, but two half-batches are two whole passes. A program uses it like this:
//
//   train::DataParallel<nn::GPT> parallel(threads, [&] { return std::make_unique<nn::GPT>(config, init); });
//   optim::AdamW opt(parallel.model().named_parameters(), ...);
//   ... each step: opt.zero_grad();
//   const auto losses = parallel.step(rows, [&](nn::GPT& m, const std::vector<std::int64_t>& slice, double share) {
//     Tensor loss = m.forward(inputs(slice), targets(slice)).loss;  // the mean over the slice
//     loss.backward(Tensor::scalar(share, loss.dtype()));           // share * loss: the batch's mean, summed
//     return share * loss.item(); });                               // the batch's loss is the sum of these
//   opt.step();
//
// The same worker count gives bit-identical results run after run; another count slices (and so rounds) otherwise.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace cppgrad::train {

// Worker w's slice of rows, of n workers: rows [size * w / n, size * (w + 1) / n), so sizes differ by at most one.
std::vector<std::int64_t> worker_slice(const std::vector<std::int64_t>& rows, int w, int n);

// Each worker's share of the batch's loss terms: counts[w] / sum(counts). A worker whose loss is the mean over its
// own terms, weighted by its share, gives summed gradients equal to those of the batch's mean loss.
std::vector<double> loss_shares(const std::vector<std::int64_t>& counts);

// Adds the gradients of workers 1..n-1 into worker 0's, parameter by parameter (worker_params[w][i] is worker w's
// i-th parameter, the same order for all), in worker order: a fixed order, so the sum is reproducible. In place, as
// backward accumulates a leaf's gradient: no allocation, and every block stays with the thread that allocated it.
void sum_replica_gradients(const std::vector<std::vector<Tensor>>& worker_params, int n);

// A model (an nn::Module) and one replica per further worker. A replica shares the model's parameter storage
// (Module::share_parameters_with: the optimizer's update of the model is the replicas' too) and owns its gradients.
template <class Model>
class DataParallel {
 public:
  // make() returns a new Model of the same architecture; it is called once per worker, the first result is the
  // model (its initial values are the run's), the others are replicas (theirs are dropped). workers >= 1.
  template <class Make>
  DataParallel(int workers, Make&& make) {
    model_ = make();
    workers_.push_back(model_.get());
    for (int w = 1; w < workers; ++w) {
      replicas_.push_back(make());
      replicas_.back()->share_parameters_with(*model_);
      workers_.push_back(replicas_.back().get());
    }
    for (Model* m : workers_) worker_params_.push_back(m->parameters());
  }

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  // The model's parameters (handles), in Module::parameters() order: what the summed gradients are in.
  const std::vector<Tensor>& parameters() const { return worker_params_[0]; }
  // The model, then the replicas.
  const std::vector<Model*>& workers() const { return workers_; }
  int worker_count() const { return static_cast<int>(workers_.size()); }
  // How many workers a batch of `rows` rows runs on: one row at least each.
  int workers_for(std::size_t rows) const { return static_cast<int>(std::min(workers_.size(), rows)); }

  // What a replica takes from the model before each step, beyond the parameters and the training mode (which
  // step() copies): e.g. a dropout seed drawn from the model's generator, so the masks do not depend on timing.
  // Called on the calling thread, for the replicas that run, in worker order.
  void sync_replicas_with(std::function<void(Model& replica, Model& model)> sync) { sync_ = std::move(sync); }

  // One step's forward and backward, as loss.backward() on the whole batch: the gradients of the batch's loss are
  // added to the model's (zero them before, as for one model). Worker w runs per_worker(worker, slice, share) on its
  // own thread (worker 0, the model, on this one), where share is its slice's fraction of the batch's loss terms:
  // per_worker runs forward and backward of share * (its slice's mean loss) and returns what the program adds up
  // (default-constructible). Returns the results in worker order. The loss terms of a slice are its rows, or what
  // loss_terms(slice) counts (e.g. the target tokens that are not padding, when the loss is a mean over them).
  template <class PerWorker>
  auto step(const std::vector<std::int64_t>& rows, PerWorker&& per_worker) {
    return step(rows, [](const std::vector<std::int64_t>& slice) { return static_cast<std::int64_t>(slice.size()); },
                per_worker);
  }
  template <class LossTerms, class PerWorker>
  auto step(const std::vector<std::int64_t>& rows, LossTerms&& loss_terms, PerWorker&& per_worker) {
    using Result = std::invoke_result_t<PerWorker&, Model&, const std::vector<std::int64_t>&, double>;
    const int n = workers_for(rows.size());
    std::vector<std::vector<std::int64_t>> slices;
    std::vector<std::int64_t> counts;
    for (int w = 0; w < n; ++w) {
      slices.push_back(worker_slice(rows, w, n));
      counts.push_back(loss_terms(slices.back()));
    }
    const std::vector<double> share = loss_shares(counts);
    for (int w = 1; w < n; ++w) {
      workers_[w]->train(model_->is_training());
      if (sync_) sync_(*workers_[w], *model_);
    }
    std::vector<Result> results(static_cast<std::size_t>(n));
    run_in_parallel(n, [&](int w) {
      if (w > 0) workers_[w]->zero_grad();  // on the thread that owns this replica's gradient memory
      results[w] = per_worker(*workers_[w], slices[w], share[w]);
    });
    sum_replica_gradients(worker_params_, n);
    return results;
  }

 private:
  std::unique_ptr<Model> model_;
  std::vector<std::unique_ptr<Model>> replicas_;
  std::vector<Model*> workers_;                     // model_, then the replicas
  std::vector<std::vector<Tensor>> worker_params_;  // each worker's parameters (handles), in the same order
  std::function<void(Model&, Model&)> sync_;
};

}  // namespace cppgrad::train
