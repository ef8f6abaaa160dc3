#include "models/gpt/run_start.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/allocator_release.h"
#include "models/gpt/train_checks.h"
#include "nn/init.h"

namespace cppgrad::gpt {

GptCheckpoint read_init_checkpoint(const std::string& path, train::CheckpointTensors which) {
  try {
    GptCheckpoint c = read_gpt_checkpoint(path, which);
    if (c.lora_base)
      throw lora_checkpoint_as_init(path, *c.lora_base);
    return c;
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find("not a cppgrad-gpt checkpoint") == std::string::npos) throw;
    throw std::runtime_error(fmt::format("--init {}: not a cppgrad-gpt checkpoint (a Hugging Face model.safetensors "
                                         "becomes one with: cppgrad-gpt import --hf {} --out CKPT)", path, path));
  }
}

std::optional<data::Tokenizer> stored_bpe(const TrainConfig& config, const std::string& resume, bool tokenizer_given,
                                          const GptCheckpoint* init) {
  std::optional<data::Tokenizer> bpe;
  if (!resume.empty() && !tokenizer_given && config.tokenizer.kind == data::TokenizerName::Kind::bpe_file)
    bpe = read_gpt_checkpoint(resume, train::CheckpointTensors::none).tokenizer;
  if (init && init->tokenizer.bpe()) bpe = init->tokenizer;
  return bpe;
}

std::unique_ptr<Trainer> start_run(const TrainConfig& config, train::ProcessLink* processes, RunStart start) {
  check_default_data(config);
  if (config.lora.rank > 0 && start.resume.empty() && !start.init)
    throw std::invalid_argument(fmt::format("--lora-rank {} finetunes a trained model: give it with --init CKPT (a "
                                            "checkpoint of train --save or import)", config.lora.rank));
  const std::optional<data::Tokenizer> bpe =
      stored_bpe(config, start.resume, start.tokenizer_given, start.init ? &*start.init : nullptr);
  auto t = [&] {
    // The model's values are the checkpoint's (--resume) or the base's (--init; its new LoRA adapters are drawn,
    // make_gpt): none of them is drawn, and the generator moves on as if they were (nn/init.h).
    const nn::init::SkipInit skip(!start.resume.empty() || start.init.has_value());
    return std::make_unique<Trainer>(config, processes, bpe ? &*bpe : nullptr,
                                     !start.resume.empty() && !start.data_given ? kCheckpointData : kDataFlag);
  }();
  if (!start.resume.empty()) t->load(start.resume);
  if (start.init) {
    start.init.reset();
    t->init_from(read_init_checkpoint(start.init_path), start.init_path);  // its tensors are the model's now
    // ... and its buffers sit in this thread's block cache, where only a gradient of a weight's size would take
    // them: a LoRA run has none (0.5 GB idle through a whole finetune at GPT-2 124M).
    release_cached_storage();
  }
  check_steps_left(config, t->step(), start.resume);
  return t;
}

}  // namespace cppgrad::gpt
