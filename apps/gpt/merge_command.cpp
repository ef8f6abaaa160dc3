#include "apps/gpt/merge_command.h"

#include <fmt/format.h>

#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "models/gpt/lora_base.h"
#include "models/gpt/lora_merge.h"
#include "train/cli.h"

namespace cppgrad::gpt {

using train::required_flag;

int cmd_merge(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt merge", "A LoRA checkpoint (train --init CKPT --lora-rank R) as a plain checkpoint: "
                                          "each adapter folded into its weight, W + (alpha / r) B A.");
  o.add_options()("checkpoint", "a LoRA checkpoint written by train --save", cxxopts::value<std::string>())
      ("out", "the plain checkpoint to write (atomically)", cxxopts::value<std::string>())
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string checkpoint = required_flag(r, "merge", "checkpoint", "PATH (a LoRA checkpoint of train --save)");
  const std::string out = required_flag(r, "merge", "out", "CKPT (the merged checkpoint to write)");
  std::vector<train::InputFlag> inputs = {{"--checkpoint", checkpoint}};
  if (const auto base = lora_base_path(checkpoint)) inputs.push_back({"the base of --checkpoint", *base});
  train::check_outputs_or_usage_error({{"--out", out}}, "", inputs);
  const MergeResult m = merge_lora_checkpoint(checkpoint, out);
  fmt::print("merged {} (step {}: {} adapters of rank {}) into {}\n", checkpoint, m.step, m.adapted, m.rank, out);
  return 0;
}

}  // namespace cppgrad::gpt
