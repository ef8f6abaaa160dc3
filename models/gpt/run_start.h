#pragma once
// A `cppgrad-gpt train` run made ready for its first step: the data read and tokenized, the model built, then either
// a resumed checkpoint's state loaded or an --init checkpoint's weights taken (a finetune), with the refusals of a run
// that cannot start (gpt/train_checks.h). The program runs it; a test can start one without the program.
#include <memory>
#include <optional>
#include <string>

#include "data/tokenizer.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/config.h"
#include "models/gpt/trainer.h"

namespace cppgrad::gpt {

// --init's checkpoint: its weights (which), or none of its tensors (its shape and tokenizer, for the config, before the
// model is built). A Hugging Face file (no cppgrad-gpt format) is refused with a std::runtime_error saying how to
// convert it ("cppgrad-gpt import --hf PATH --out CKPT"), a LoRA checkpoint with one saying how to merge it.
GptCheckpoint read_init_checkpoint(const std::string& path,
                                   train::CheckpointTensors which = train::CheckpointTensors::without_optimizer);

// The BPE a run reads its text through instead of its --tokenizer file: a bpe:FILE run resumed without --tokenizer
// reads the checkpoint's (the file may be gone), a finetune of a BPE model reads --init's (it is the model's);
// nullopt otherwise. resume: --resume's checkpoint, or "".
std::optional<data::Tokenizer> stored_bpe(const TrainConfig& config, const std::string& resume, bool tokenizer_given,
                                          const GptCheckpoint* init);

struct RunStart {
  std::string resume;                 // --resume's checkpoint, or ""
  bool tokenizer_given = false;       // --tokenizer typed
  bool data_given = false;            // --data typed
  // --init's checkpoint, read for its shape (read_init_checkpoint's none): once the model is built, its weights are
  // read from init_path and become the model's, so they are never in memory beside the replicas being built.
  std::optional<GptCheckpoint> init;
  std::string init_path;  // ... as typed
};

// config: run_config's. Throws std::invalid_argument when the default data is not installed or a resumed run has
// nothing left to train (config.steps reached); a file that cannot be read is an error naming where its path came
// from ("--data", or "the checkpoint's --data" for a run resumed without --data).
std::unique_ptr<Trainer> start_run(const TrainConfig& config, train::ProcessLink* processes, RunStart start);

}  // namespace cppgrad::gpt
