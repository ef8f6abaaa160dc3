#pragma once
// The reversal training run: data, model, optimizer, schedule, and the epoch loop. Everything an epoch
// depends on is either derived from the config or saved in the checkpoint, so a resumed run replays exactly.
#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "models/reverse/config.h"
#include "models/reverse/greedy.h"
#include "train/data_parallel.h"
#include "train/lines_output.h"

namespace cppgrad::reverse {

struct EpochMetrics {
  std::int64_t epoch = 0;
  double loss = 0;             // mean training loss over the epoch's batches
  double train_token_acc = 0;  // teacher-forced, on the training batches
  double test_seq_acc = 0;     // greedy, from the source alone
  double test_token_acc = 0;
  double lr = 0;               // at the epoch's last step
  double epoch_s = 0;          // wall time of the epoch, evaluation included
};

class Trainer {
 public:
  // processes: the run's other processes under mpirun (apps/cli/processes.h), or none. With them, every process
  // checks that the others have its configuration, takes rank 0's initial weights, and runs its block of each
  // batch's shards; the results are the same bits as one process's.
  explicit Trainer(const TrainConfig& config, train::ProcessLink* processes = nullptr);

  // Called after every training step: (steps done this epoch, steps per epoch, this batch's loss).
  using StepCallback = std::function<void(std::int64_t, std::int64_t, double)>;
  // Asked before every step: true stops the epoch there.
  using StopCheck = std::function<bool()>;
  // Trains the rest of the current epoch (all of it, or what a checkpoint saved mid-epoch left), evaluates greedily
  // on the test set, appends to history() and returns the metrics. Throws train::TrainingDiverged at the first step
  // whose loss is not finite, and train::TrainingStopped when `stop` says so before a step: the epoch's progress is
  // then kept, and save() writes a checkpoint whose resumed run ends exactly like an unbroken one.
  EpochMetrics run_epoch(const StepCallback& on_step = nullptr, const StopCheck& stop = nullptr);

  // Where the epoch under way stands between two steps (all zero at an epoch boundary).
  struct EpochProgress {
    std::int64_t steps = 0;         // steps of the epoch done
    double loss_sum = 0;            // the sum of their losses
    AccuracyCounts teacher_forced;  // over their batches
    double elapsed_s = 0;           // wall time the epoch took before this process (a resumed run) went on with it
  };
  const EpochProgress& epoch_progress() const { return progress_; }

  // What one optimisation step saw: the batch's mean loss and its teacher-forced token counts.
  struct StepResult {
    double loss = 0;
    AccuracyCounts teacher_forced;
  };
  // One optimisation step on these rows of the training set (train/reversal_step.h): at --shards 1 plain_step on the
  // whole batch; else sharded_step, the batch's shards each on its own replica (shared among the threads), their
  // gradients summed into the model in a fixed tree, so the same seed and shard count give bit-identical results on
  // any number of threads. Then clipping and the optimizer step.
  StepResult train_step(const std::vector<std::int64_t>& rows);
  // Greedy accuracy on the test set, its rows split across the threads' models.
  Accuracy evaluate();

  // The threads that run a batch's shards (train/data_parallel.h).
  int workers() const { return config_.shards == 1 ? 1 : std::min(parallel_.threads(), parallel_.shards()); }

  const TrainConfig& config() const { return config_; }
  const data::ReversalData& data() const { return data_; }
  nn::Seq2SeqTransformer& model() { return parallel_.model(); }
  const nn::Seq2SeqTransformer& model() const { return parallel_.model(); }
  optim::Optimizer& optimizer() { return *optimizer_; }
  std::int64_t epochs_done() const { return static_cast<std::int64_t>(history_.size()); }
  std::int64_t global_step() const { return global_step_; }
  std::int64_t steps_per_epoch() const;
  const std::vector<EpochMetrics>& history() const { return history_; }

  // Learning tools. trace_graph: the autograd graph of the next training step, as Graphviz DOT with the gradient
  // norm through every op. grad_log: every `every` steps, per parameter its gradient norm, weight norm and
  // update/weight ratio, as JSON Lines (appended).
  void trace_graph_once(const std::string& path) { trace_graph_path_ = path; }
  void log_gradients(const std::string& path, std::int64_t every);
  // The global gradient 2-norm of every step of the latest epoch (for the epoch line's sparkline).
  const std::vector<double>& last_epoch_grad_norms() const { return grad_norms_; }

  // Checkpoints (train/checkpoint.h): model, optimizer state, epoch, step, dropout RNG state, metrics history and
  // the config. Written atomically; weights that are not all finite are refused, so a good checkpoint is never
  // replaced by one that cannot be used. Loading refuses a file of another configuration, naming the keys that
  // differ, and any truncated, corrupt or incomplete file, naming the problem.
  void save(const std::string& path) const;
  void load(const std::string& path);

 private:
  void append_grad_log(std::int64_t epoch, const std::vector<std::pair<std::string, Tensor>>& before) const;

  TrainConfig config_;
  data::ReversalData data_;
  train::DataParallel<nn::Seq2SeqTransformer> parallel_;  // the model and a replica per shard
  std::unique_ptr<optim::Optimizer> optimizer_;
  optim::Schedule schedule_;
  std::int64_t global_step_ = 0;
  std::vector<EpochMetrics> history_;
  EpochProgress progress_;
  std::string trace_graph_path_;
  train::ProcessLink* processes_ = nullptr;
  std::unique_ptr<train::LinesOutput> grad_log_;
  std::int64_t grad_log_every_ = 0;
  std::vector<double> grad_norms_;
};

// Reads just the config stored in a checkpoint (to resume with it); throws std::runtime_error naming the file.
TrainConfig read_checkpoint_config(const std::string& path);
// The number of epochs a checkpoint has trained (its metadata 'epoch'); throws std::runtime_error naming the file.
std::int64_t read_checkpoint_epoch(const std::string& path);

}  // namespace cppgrad::reverse
