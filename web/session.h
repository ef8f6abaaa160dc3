#pragma once
// The browser page's engine (docs/browser.md, "The page's engine"): one cppgrad-gpt training run, driven in chunks.
// It wraps cppgrad-gpt's own trainer (models/gpt/trainer.h), so the page trains the same model, tokenizer, defaults,
// batches and step as `cppgrad-gpt train` with the same config, and adds what the page shows: attention maps for a
// typed word, samples with --explain's top-5, the equivalent command line. Plain C++: the Web Worker reaches it
// through web/bindings.cpp, and tests/web/ drives it natively.
//
// Files: the data is read from the path the config names (the worker writes the word list at cppgrad-gpt's default
// path, /usr/share/dict/american-english, and a dropped text under kDroppedDir), and checkpoints are written and read
// at paths, with Trainer::save / load's bytes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/gpt/metrics.h"
#include "models/gpt/trainer.h"
#include "nn/sampling.h"

namespace cppgrad::web {

// Where the page puts a text the user drops (`/dropped/<file name>`); the command line names such a file by its name.
inline constexpr const char* kDroppedDir = "/dropped/";

// What the page shows of a run once it is ready (the worker's `ready` message).
struct SessionInfo {
  std::int64_t vocab = 0, context = 0, params = 0;
  double bigram_val_loss = 0;
  std::int64_t steps_done = 0, max_steps = 0;
  std::int64_t tokens_per_step = 0;  // batch x context: what tokens/s counts
  std::string command;  // `cppgrad-gpt train ...` with the flags that differ from the defaults
  // The run's config as a checkpoint's "config" holds it (the model's sizes are its "model"): what the boxes show.
  std::string config_json;
};

struct StepLoss {
  std::int64_t step = 0;  // steps done after it (1 for the first)
  double loss = 0;
};

// What one chunk of training did: its steps' losses, the evaluations among them, and whether the run is at --steps.
struct TrainChunk {
  std::vector<StepLoss> steps;
  std::vector<gpt::Evaluation> evals;
  bool done = false;
};

// Every layer's and head's causal attention over a word, as `cppgrad-gpt attention` reads it (lines: <b> then the
// characters). maps: [layers][heads][T][T] flattened, row = the query position, column = the key position.
struct AttentionView {
  std::vector<std::string> tokens;  // the labels (data::token_label)
  std::int64_t layers = 0, heads = 0, T = 0;
  std::vector<float> maps;
};

struct TokenProb {
  std::string label;
  double prob = 0;
};

// One chosen token of a sample and --explain's table for it.
struct SampleStep {
  std::string token;  // its label
  double prob = 0;    // after the filters
  std::vector<TokenProb> raw_top, filtered_top;  // the 5 likeliest before and after temperature and the filters
};

struct Sample {
  std::string text;  // the prompt and what followed, as `cppgrad-gpt sample` prints it
  std::vector<SampleStep> steps;
};

struct SampleRequest {
  std::int64_t num = 1;
  nn::SamplingConfig sampling;
  std::uint64_t seed = 0;
  std::string prompt;
};

// Bounds on what the page may ask for (a bad value from the page's inputs is refused, not allocated).
inline constexpr std::int64_t kMaxSamples = 100;

// The checkpoint metadata key under which the page keeps each step's loss, so a checkpoint loaded back draws its
// curve: {"first_step": N, "losses": [the loss of step N, N+1, ...]}. cppgrad-gpt reads past keys it does not know,
// so native sample, eval and --resume read these checkpoints as any other; a checkpoint without the key (native, or
// older) loads with its evaluations alone.
inline constexpr const char* kStepLossesKey = "page_step_losses";

class Session {
 public:
  // config_json: an object of gpt::config_table()'s rows, the model's included, each by its name ("seed", "steps",
  // "batch_size", "lr", "format", nanoGPT's "n_layer", "n_head", "n_embd", ...) or its flag's spelling ("layers",
  // "heads", "d_model"); a key left out takes `cppgrad-gpt train`'s default. An unknown key, a field given twice, a
  // value out of range, or unreadable data throw std::invalid_argument / std::runtime_error with a one-line reason.
  explicit Session(const std::string& config_json);
  // A checkpoint written by `cppgrad-gpt train --save` or by save(): its config and state, ready to train on. A BPE
  // model (--tokenizer bpe:FILE) reads its text through the BPE the checkpoint carries. Its data is the file the config
  // names or, failing that, a dropped text of the same name (kDroppedDir). Refused (std::runtime_error naming the file)
  // if it is not a cppgrad-gpt checkpoint, or if its data file is not here.
  static std::unique_ptr<Session> from_checkpoint(const std::string& path);

  SessionInfo info() const;

  // Trains up to `count` more steps (no further than the config's steps) as Trainer::run does: the evaluations fall
  // on the same steps. A step or evaluation whose loss is not finite ends the run: it throws std::runtime_error in the
  // page's words, and from then on train, attention, samples and save refuse with the same reason (the weights give
  // no numbers worth showing or keeping) until the page starts a new Session.
  TrainChunk train(std::int64_t count);

  // The losses of the steps this run knows, in order (those of a loaded checkpoint saved by the page, then this
  // session's), and its evaluations (Trainer::history, a checkpoint's too).
  const std::vector<StepLoss>& step_losses() const { return losses_; }
  const std::vector<gpt::Evaluation>& evaluations() const { return trainer_->history(); }

  // Trains on to `steps` in all (Trainer::grow_steps: `train --resume CKPT --steps N`), a finished run too.
  void grow_steps(std::int64_t steps) { trainer_->grow_steps(steps); }

  // Throws std::invalid_argument naming a character the vocabulary lacks, or a word longer than the context, and
  // std::runtime_error if the maps are not finite (weights that overflow).
  AttentionView attention(const std::string& word);
  // Drawn by gpt::SampleSession (models/gpt/sample_session.h), as `cppgrad-gpt sample` draws them: the same text at the
  // same prompt, settings and seed.
  std::vector<Sample> samples(const SampleRequest& request);

  // Trainer::save's bytes at `path` (atomically), to resume natively or in the page, with the step losses under
  // kStepLossesKey.
  void save(const std::string& path) const;

  gpt::Trainer& trainer() { return *trainer_; }

 private:
  explicit Session(std::unique_ptr<gpt::Trainer> trainer);
  void refuse_if_diverged() const;
  std::unique_ptr<gpt::Trainer> trainer_;
  std::vector<StepLoss> losses_;  // contiguous steps, the last one trainer_->step()
  std::string diverged_;          // why the run can go no further, once a loss was not finite
};

// The `cppgrad-gpt train` command line that runs `config`: the flags whose values differ from the defaults (--shards
// only if it is not the batch size's default), a data file under kDroppedDir by its name.
std::string train_command(const gpt::TrainConfig& config);

// TrainConfig from the page's JSON (the keys as Session's constructor reads them).
gpt::TrainConfig config_from_json(const std::string& json);

}  // namespace cppgrad::web
