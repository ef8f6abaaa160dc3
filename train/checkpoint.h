#pragma once
// A training checkpoint: everything a run needs to go on exactly where it stopped, in one safetensors file.
//
//   tensors   "model.<name>" (the model's state dict), "optim.<name>" (the optimizer's state)
//   metadata  "format"       which program wrote it, and its version ("cppgrad-reverse-checkpoint-v1")
//             "config"       the program's configuration, as JSON (the program reads and checks it)
//             "epoch"        epochs done; "global_step": optimizer steps taken
//             "<generator>"  each named generator's state, 4 words of xoshiro256** ("dropout_rng")
//             "history"      the metrics of every epoch done, a JSON array (the program reads it)
//             "epoch_progress"  saved between two steps of an epoch only: where that epoch stands (steps
//                            done, the sums its metrics are made of), as JSON (the program reads it)
//             anything else the program adds (CheckpointMeta::extra), e.g. cppgrad-gpt's "vocab"
//
// Saving refuses weights that are not all finite, so the last good checkpoint is never replaced by one that cannot
// be used; the file is written atomically. Reading is done in steps a program calls in order (read_checkpoint,
// then its config, then checkpoint_state, then its history, then restore_checkpoint): everything is checked before
// the model or the optimizer changes, so a refused file leaves a run as it was. Every refusal is a
// std::runtime_error that starts "checkpoint <path>: ".
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/safetensors.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace cppgrad::train {

// What a program wrote its checkpoints as: its name for messages and the format string it stores.
struct CheckpointFormat {
  std::string program;  // "cppgrad-reverse"
  std::string format;   // "cppgrad-reverse-checkpoint-v1": what it writes
  std::vector<std::string> upgrades_from = {};  // earlier formats it still reads (the program upgrades their metadata)
};

// The metadata beside the tensors.
struct CheckpointMeta {
  std::string config = {};  // JSON
  std::int64_t epoch = 0;
  std::int64_t global_step = 0;
  std::map<std::string, Generator::State> generators = {};  // by metadata key
  std::string history = {};         // JSON array
  std::string epoch_progress = {};  // JSON; empty at an epoch boundary (then not stored)
  std::map<std::string, std::string> extra = {};  // the program's own keys (not the ones above), stored as they are
};

void save_checkpoint(const std::string& path, const CheckpointFormat& format, const nn::Module& model,
                     const optim::Optimizer& optimizer, const CheckpointMeta& meta);
// The same with the model's tensors given: some of a model's (a LoRA run's adapters, without the frozen base).
void save_checkpoint(const std::string& path, const CheckpointFormat& format, const nn::StateDict& model,
                     const optim::Optimizer& optimizer, const CheckpointMeta& meta);

// Which tensors a reader wants: every one (to resume a run), all but the optimizer's (to sample, evaluate, finetune
// from or merge: AdamW's moments are twice the weights, and are then not read at all), or none (the config and the
// rest of the metadata alone, e.g. a finetune's shape before its model is built).
enum class CheckpointTensors { all, without_optimizer, none };

// The file, read whole, if its metadata 'format' is this program's, or one it upgrades from (else: "not a <program>
// checkpoint"); without_optimizer: its optim.* tensors left unread.
SafetensorsFile read_checkpoint(const std::string& path, const CheckpointFormat& format,
                                CheckpointTensors which = CheckpointTensors::all);
// Its 'config' metadata, for the program to parse and compare with its own.
const std::string& checkpoint_config(const SafetensorsFile& file, const std::string& path);

// The values of the file's model.* tensors against `expected`, what the model its config describes holds in its state
// dict (nn::state_dict_numel): called before that model is built, so a config naming a model far larger than the
// weights the file holds (a 60 KB file saying d_model 8192) is refused before gigabytes are allocated for it. Throws
// std::runtime_error "checkpoint <path>: its config makes a model of N values, but its model tensors hold M".
void check_model_size(const SafetensorsFile& file, const std::string& path, std::int64_t expected);
// The same from the file's header alone (its entries' shapes), for a reader that reads no tensor (CheckpointTensors::
// none) but builds the model the config describes.
void check_model_size(const std::string& path, std::int64_t expected);

// The rest of a checkpoint, split and checked: tensors named model.* or optim.* only, every one finite (as saving
// requires); 'epoch', 'global_step', the generators listed and 'history' present; counts whole numbers >= 0;
// each generator 4 unsigned 64-bit words, not all zero (a state xoshiro256** never leaves).
struct CheckpointState {
  nn::StateDict model, optimizer;
  CheckpointMeta meta;
};
CheckpointState checkpoint_state(const SafetensorsFile& file, const std::string& path,
                                 const std::vector<std::string>& generators);

// Loads the weights into `model` and the state into `optimizer`, all or nothing: the weights are checked against
// the model first, so a mismatch is found before `model` or `optimizer` changes.
// Throws std::runtime_error "checkpoint <path>: <what>".
void restore_checkpoint(const CheckpointState& state, const std::string& path, nn::Module& model,
                        optim::Optimizer& optimizer);
// The same, each part taking the state's memory instead of a copy (optim::Optimizer::assign_state_dict, and
// `assign_weights`, given the checked weights: the model's assign_state_dict, or a DataParallel's, which shares them
// with its replicas). For a state read from a file and given up: a resumed GPT-2 holds it once.
void restore_checkpoint_assigning(const CheckpointState& state, const std::string& path, const nn::Module& model,
                                  optim::Optimizer& optimizer,
                                  const std::function<void(const nn::StateDict&)>& assign_weights);
// The form of earlier versions, which loaded the weights into a scratch model first; the model checks them itself now.
[[deprecated("restore_checkpoint no longer needs a scratch model: drop that argument")]]
inline void restore_checkpoint(const CheckpointState& state, const std::string& path, nn::Module& /*scratch*/,
                               nn::Module& model, optim::Optimizer& optimizer) {
  restore_checkpoint(state, path, model, optimizer);
}

// A non-negative whole number stored in the metadata under `key`; throws std::invalid_argument (the caller adds
// the file's name).
std::int64_t metadata_count(const std::map<std::string, std::string>& metadata, const std::string& key);

}  // namespace cppgrad::train
