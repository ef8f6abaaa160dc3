// A checkpoint the version before the model had a config of its own wrote (cppgrad-gpt-checkpoint-v1, committed in
// tests/models/fixtures): read through the one upgrade to v2 (models/gpt/checkpoint.cpp), its model's sizes come from
// the run's config and its "context", and the model it rebuilds holds the file's weights bit for bit.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/safetensors.h"
#include "models/gpt/checkpoint.h"
#include "test_util.h"

namespace cppgrad {
namespace {

const std::string kV1 = std::string(CPPGRAD_MODEL_FIXTURES_DIR) + "/gpt_checkpoint_v1.safetensors";

TEST(GptCheckpointV1, ReadsThroughTheUpgradeWithItsModelsSizes) {
  const gpt::GptCheckpoint c = gpt::read_gpt_checkpoint(kV1);
  // --d-model 8 --heads 2 --layers 1 --seed 7 on lines of at most 6 characters: <b> + 6 = block_size 7; the
  // characters a, b, c and <b>.
  EXPECT_EQ(c.model, (nn::GPTConfig{.block_size = 7, .vocab_size = 4, .n_layer = 1, .n_head = 2, .n_embd = 8,
                                    .dropout = 0.0, .dropout_seed = 8}));
  EXPECT_EQ(c.config.model, c.model);
  EXPECT_EQ(c.config.seed, 7u);
  EXPECT_EQ(c.config.batch_size, 4);
  EXPECT_EQ(c.step, 4);
  EXPECT_EQ(c.history.size(), 2u);
  EXPECT_EQ(c.tokenizer.size(), 4);
}

TEST(GptCheckpointV1, ItsModelHoldsTheFilesWeightsBitForBit) {
  const gpt::LoadedModel m = gpt::load_model(kV1);
  const SafetensorsFile f = read_safetensors(kV1);
  std::size_t compared = 0;
  for (const auto& [name, t] : m.model->state_dict()) {
    EXPECT_EQ(t.to_double_vector(), f.tensors.at("model." + name).to_double_vector()) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 17u);  // wte, wpe; a block's 6 weights and 6 biases; ln_f's 2; lm_head (tied to wte)
}

// What v1 kept apart, v2 needs: a v1 file without its "context" is refused naming the key, and a v1 config holding a
// model size of the wrong type is refused naming the size under its new name.
TEST(GptCheckpointV1, AV1FileMissingWhatTheUpgradeNeedsIsRefused) {
  test::TempDir dir;
  const std::string path = (dir.path / "v1.safetensors").string();
  SafetensorsFile f = read_safetensors(kV1);
  f.metadata.erase("context");
  write_safetensors(path, f.tensors, f.metadata);
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(path), std::runtime_error, "checkpoint " + path + ": metadata has no 'context'");
  f = read_safetensors(kV1);
  const std::string heads = "\"heads\":2";
  std::string& config = f.metadata.at("config");
  ASSERT_NE(config.find(heads), std::string::npos);
  config.replace(config.find(heads), heads.size(), "\"heads\":\"two\"");
  write_safetensors(path, f.tensors, f.metadata);
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(path), std::runtime_error, "config 'heads' must be an integer in range");
}

}  // namespace
}  // namespace cppgrad
