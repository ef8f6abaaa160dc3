#include "models/gpt/lora_merge.h"

#include <stdexcept>

#include "models/gpt/trainer.h"
#include "nn/init.h"
#include "nn/lora.h"

namespace cppgrad::gpt {

std::unique_ptr<nn::GPT> merged_gpt(const nn::GPT& adapted) {
  Generator init(0);
  auto plain = [&] {
    const nn::init::SkipInit skip;  // every value is the merge's
    return std::make_unique<nn::GPT>(adapted.config(), init);
  }();
  plain->load_state_dict(nn::merged_state_dict(adapted));
  plain->dropout_generator().set_state(adapted.dropout_generator().state());
  plain->train(adapted.is_training());
  return plain;
}

MergeResult merge_lora_checkpoint(const std::string& lora_path, const std::string& out) {
  GptCheckpoint c = read_gpt_checkpoint(lora_path, train::CheckpointTensors::without_optimizer);
  if (!c.lora_base)
    throw std::runtime_error("checkpoint " + lora_path + ": has no LoRA adapters to merge (it is a plain model: "
                             "sample, eval, export and train --init read it as it is)");
  const std::unique_ptr<nn::GPT> adapted = make_gpt_to_load(c.model, c.config);
  adapted->assign_state_dict(c.state.model);  // the weights as read: no second copy
  adapted->dropout_generator().set_state(c.state.meta.generators.at("dropout_rng"));
  const std::unique_ptr<nn::GPT> plain = merged_gpt(*adapted);
  const MergeResult result{.step = c.step, .adapted = std::ssize(nn::lora_layers(*adapted)), .rank = c.config.lora.rank};
  TrainConfig config = c.config;
  const TrainConfig defaults;
  config.lora = defaults.lora, config.lora_targets = defaults.lora_targets;
  save_gpt_checkpoint(out, *plain, *make_optimizer(config, plain->named_parameters()), config, c.tokenizer, c.step,
                      c.history, c.progress);
  return result;
}

}  // namespace cppgrad::gpt
