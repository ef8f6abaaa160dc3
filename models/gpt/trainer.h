#pragma once
// The GPT training run: the text, its split and tokenizer, the model, AdamW, the schedule, and the step loop.
// Everything a step depends on is derived from the config or saved in the checkpoint (the weights, AdamW's moments,
// the batch sampler's and dropout's generators, the metrics so far), so a resumed run replays exactly.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/text_corpus.h"
#include "data/token_batch.h"
#include "models/gpt/config.h"
#include "models/gpt/lora_base.h"
#include "models/gpt/metrics.h"
#include "nn/gpt.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train/data_parallel.h"

namespace cppgrad::gpt {

struct GptCheckpoint;  // gpt/checkpoint.h

// The corpus a config names, split as training split it: the data's characters, or the BPE --tokenizer names (read
// from its files). Every refusal of the data (unreadable, invalid UTF-8, too few lines) starts with `source` and the
// path: "--data words.txt: invalid UTF-8 at byte offset 7: ..." (source: where the path came from, "--data" or "the
// checkpoint's --data").
inline constexpr const char* kDataFlag = "--data";
inline constexpr const char* kCheckpointData = "the checkpoint's --data";
data::TextCorpus read_corpus(const TrainConfig& config, std::int64_t context, const std::string& source = kDataFlag);
// The same for a checkpoint's model: the file re-read through the model's tokenizer. Characters are derived from the
// file again and must be the model's (std::runtime_error "... has it changed?").
data::TextCorpus read_corpus(const TrainConfig& config, std::int64_t context, const data::Tokenizer& model_tokenizer,
                             const std::string& source = kCheckpointData);

// The bytes of text each token id stands for, in id order (what bits per byte divides by): a character's UTF-8, a BPE
// token's bytes (several), and one for the boundary <b> (the newline that ends a line). An id no token has (a gap
// before a BPE's special token) stands for none: the data never holds it. `tokenize lengths` prints them.
std::vector<std::int64_t> token_byte_lengths(const data::Tokenizer& tokenizer);

// Mean loss in nats per predicted token of `model` over a split (of lines or of a running text), in fixed order, under
// no-grad; `on_chunk` reports progress after each chunk. The sum over chunks is taken in order: reproducible.
// The chunks hold eval_chunk_rows(T, V) rows of T tokens: about 16k tokens, fewer where the vocabulary is large, so
// that a chunk's logits stay within 2^24 floats (64 MB; at GPT-2's 50,257, 16k tokens' logits would be 3.3 GB).
std::int64_t eval_chunk_rows(std::int64_t context, std::int64_t vocab);
struct SplitLoss {
  double loss = 0;
  std::int64_t tokens = 0;  // the predicted tokens
  std::int64_t bytes = 0;   // the bytes of text they stand for (each token's bytes, a BPE token's several; the line's
                            // end <b> is one byte, its newline)
  // The same loss in bits per byte of text, so that models with other tokenizers compare on one scale (nanochat's
  // bpb): nats per token x tokens per byte / ln 2. bits_per_nat() is that factor, the same for every model.
  double bits_per_nat() const;
  double bits_per_byte() const { return loss * bits_per_nat(); }
};
// An evaluation's progress: chunks done of all, and the mean loss over the tokens read so far (nats per token).
using EvalProgress = std::function<void(std::int64_t done, std::int64_t total, double loss_so_far)>;
// max_rows: the split's first rows only (0: all of them).
SplitLoss split_loss(const nn::GPT& model, const data::TextCorpus& corpus, bool validation,
                     const EvalProgress& on_chunk = nullptr, std::int64_t max_rows = 0);

// The rows of `context` tokens an evaluation of a model of `parameters` reads during training (--eval-tokens):
// enough for eval_tokens tokens, or when it is 0 for kEvalMultiplyAdds / parameters tokens (GPT-2 124M: 4,417; the
// README's runs read their whole validation splits), never fewer than one row.
inline constexpr std::int64_t kEvalMultiplyAdds = std::int64_t{1} << 39;
std::int64_t eval_row_bound(std::int64_t eval_tokens, std::int64_t parameters, std::int64_t context);

class Trainer {
 public:
  // Reads the data (config.data, bounded: data/utf8.h), splits and tokenizes it, builds the model and AdamW.
  // processes: the run's other processes under mpirun (apps/cli/processes.h), or none. With them, every process
  // checks that the others have its configuration and data, takes rank 0's initial weights, and runs its block of
  // each batch's shards; the results are the same bits as one process's.
  // bpe: a BPE known beforehand (a resumed checkpoint's) that the text is read through instead of the one
  // config.tokenizer names, so a run resumes without its .model file. data_source: how a refusal of the data names
  // where its path came from (read_corpus): "--data", or kCheckpointData for a run resumed without --data.
  explicit Trainer(const TrainConfig& config, train::ProcessLink* processes = nullptr,
                   const data::Tokenizer* bpe = nullptr, const std::string& data_source = kDataFlag);

  // Called after every step: (steps done, this step's loss, tokens per second of this session's training).
  using StepCallback = std::function<void(std::int64_t, double, double)>;
  using EvalCallback = std::function<void(const Evaluation&)>;
  using StopCheck = std::function<bool()>;
  // Trains up to config().steps, evaluating every eval_every steps and after the last. Throws
  // train::TrainingDiverged at the first step whose loss is not finite (nothing of it is kept), and
  // train::TrainingStopped when `stop` says so between two steps (save() then writes a checkpoint that resumes
  // exactly).
  // on_eval_chunk: each evaluation's progress, chunk by chunk (a long one, at GPT-2's size, takes minutes).
  void run(const StepCallback& on_step, const EvalCallback& on_eval, const StopCheck& stop,
           const EvalProgress& on_eval_chunk = nullptr);
  // The same up to step min(last, config().steps) and no further: a caller that trains in chunks (the browser page,
  // web/session.h) calls it again with a later `last`, and the steps, evaluations and checkpoints are run()'s.
  void run_until(std::int64_t last, const StepCallback& on_step, const EvalCallback& on_eval, const StopCheck& stop,
                 const EvalProgress& on_eval_chunk = nullptr);

  // Trains on to `steps` in all, as `train --resume CKPT --steps N` would: the run's config and its schedule's length
  // become `steps` (the browser page's steps box). Throws std::invalid_argument if `steps` is not more than the steps
  // done, is past --steps' bound, or the schedule is cosine (its rate at every step depends on --steps).
  void grow_steps(std::int64_t steps);

  // One optimisation step on a random batch of the training split: forward and backward of the batch's --shards
  // shards on the threads' replicas, their gradients summed in a fixed tree (so any number of threads gives the same
  // weights), clipping, AdamW. Returns the batch's mean loss; a loss that is not finite skipped the update, and run()
  // stops there (train::StepLoop's diverged-run guard), a caller of this alone decides for itself.
  double train_step();
  Evaluation evaluate(const EvalProgress& on_chunk = nullptr);  // the validation loss now; appended to history()

  const TrainConfig& config() const { return config_; }
  const data::TextCorpus& corpus() const { return corpus_; }
  nn::GPT& model() { return parallel_->model(); }
  std::int64_t step() const { return step_; }
  std::int64_t tokens_per_step() const { return config_.batch_size * corpus_.context; }
  // The validation rows each evaluation reads (eval_row_bound of --eval-tokens and the model's size), and of how many.
  std::int64_t eval_rows() const;
  std::int64_t validation_rows() const;
  const std::vector<Evaluation>& history() const { return history_; }
  double bigram_val_loss() const { return bigram_val_loss_; }
  const std::optional<LoRABase>& lora_base() const { return lora_base_; }  // a LoRA run's base
  int workers() const { return std::min(parallel_->threads(), parallel_->shards()); }  // threads that run shards

  // Checkpoints (train/checkpoint.h), written atomically; weights that are not all finite are refused. Loading
  // refuses another configuration (naming the keys), another vocabulary, or a corrupt file, before anything changes.
  void save(const std::string& path) const;
  void load(const std::string& path);
  // load, for a checkpoint whose text this run reads at another path (the page's dropped copy of it, by its name):
  // every key but --data must match.
  void load_with_this_data(const std::string& path);
  // Finetuning (`train --init`): the weights of a checkpoint `c` read from `path`, whose model must have this run's
  // shape and tokenizer (a shorter context takes the first rows of its position table); AdamW, the step (0), the
  // generators and the history stay this run's own. With --lora-rank they become the frozen base under this run's
  // adapters, and `path` the base its checkpoints name. Throws
  // std::runtime_error "--init <path>: ..." naming both shapes, or the tensor refused (a LoRA checkpoint among them:
  // merge it first).
  void init_from(const GptCheckpoint& c, const std::string& path);

 private:
  data::TokenBatch batch(const std::vector<std::int64_t>& rows) const;
  void check_same_tokenizer(const std::string& path, const GptCheckpoint& c) const;
  void resume(const std::string& path, GptCheckpoint c);  // load's checks and restore, of a checkpoint read
  std::int64_t random_row_count() const;

  TrainConfig config_;
  data::TextCorpus corpus_;
  double bigram_val_loss_ = 0;
  train::ProcessLink* processes_ = nullptr;
  std::unique_ptr<train::DataParallel<nn::GPT>> parallel_;  // the model, and a replica per shard
  std::optional<LoRABase> lora_base_;  // a LoRA run's base (--init's, or its checkpoint's), named by its checkpoints
  std::unique_ptr<optim::Optimizer> optimizer_;
  optim::Schedule schedule_;
  Generator batch_gen_;  // draws the batches
  std::int64_t step_ = 0;
  std::vector<Evaluation> history_;
  // Since the latest evaluation (saved, so a resumed run reports the same train_loss).
  double loss_sum_ = 0;
  std::int64_t steps_since_eval_ = 0;
  double train_s_ = 0;  // training wall time of the whole run before this interval
  double interval_s_ = 0;  // training wall time of this interval
};

// AdamW with the config's rate and decay (betas 0.9 / 0.99, eps 1e-8), as every run trains.
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, nn::NamedTensors params);

// The config a checkpoint holds (to resume with it); throws std::runtime_error naming the file.
TrainConfig read_checkpoint_config(const std::string& path);

}  // namespace cppgrad::gpt
