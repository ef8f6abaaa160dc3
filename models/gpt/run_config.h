#pragma once
// A `cppgrad-gpt train` run's config from everything that sets it besides the config rows' flags: the shape --preset
// or an --init checkpoint fixes (gpt/preset.h's rule: their shape wins, a flag typed beside it must agree), the shard
// count, the paths the run reads made absolute (a checkpoint stores them, and a resumed run may start elsewhere),
// every bound checked.
#include <optional>
#include <set>
#include <string>

#include "models/gpt/checkpoint.h"
#include "models/gpt/config.h"

namespace cppgrad::gpt {

// Where a run's shape and paths come from besides the config rows' flags.
struct RunSources {
  std::set<std::string> given;        // the config rows' flags typed ("heads", "context", ...)
  std::optional<std::string> preset;  // --preset NAME
  const GptCheckpoint* init = nullptr;  // --init's checkpoint (read_init_checkpoint)
  std::string init_path;              // ... as typed
  bool resumed = false;               // --resume: `flagged` started from its checkpoint's config
  bool data_given = false;            // --data typed
};

// flagged: the defaults or the resumed checkpoint's config with the flags applied. Returns it with the shape of
// --preset, then of --init (the preset's flags then count as typed: the two must agree; --init's context is its
// model's block size), the shard count (a resumed run keeps its checkpoint's), the data's and a bpe:FILE tokenizer's
// paths made absolute (a resumed run's data only when --data is typed), validated. Throws std::invalid_argument.
TrainConfig run_config(TrainConfig flagged, const RunSources& sources);

}  // namespace cppgrad::gpt
