// A cppgrad-gpt checkpoint's metadata read within the bounds of what each value holds (core/json_bounded.h), and its
// config checked against the weights it holds before a model is built from it. Found by a red team: a config value a
// hundred thousand arrays deep crashed every command (its refusal dumped it recursively), 16 MiB of empty arrays in a
// metadata value cost 390-581 MB before the refusal (or were accepted, under an unknown config key), and a 60 KB file
// whose config said d_model 8192 had 3.5 GB allocated for its model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/safetensors.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/trainer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using test::TempDir;

class GptCheckpointBounds : public testing::Test {
 protected:
  TempDir dir;
  std::string saved = (dir.path / "ckpt.safetensors").string();
  SafetensorsFile checkpoint;  // a trained run's, 6 steps in

  void SetUp() override {
    const std::string data = (dir.path / "words.txt").string();
    {
      std::ofstream out(data);
      for (int i = 0; i < 200; ++i) out << std::string(1 + i % 5, static_cast<char>('a' + i % 7)) << "\n";
    }
    gpt::TrainConfig c;
    c.data = data, c.steps = 6, c.eval_every = 3, c.batch_size = 4, c.threads = 1;
    c.model.n_embd = 8, c.model.n_head = 2, c.model.n_layer = 1;
    gpt::Trainer t(c);
    t.run(nullptr, nullptr, nullptr);
    t.save(saved);
    checkpoint = read_safetensors(saved);
  }

  // The checkpoint with metadata `key` set to `value` (or a tensor dropped), written to a file of its own.
  std::string tampered(const std::string& key, const std::string& value) {
    SafetensorsFile f = checkpoint;
    f.metadata[key] = value;
    const std::string path = (dir.path / "tampered.safetensors").string();
    write_safetensors(path, f.tensors, f.metadata);
    return path;
  }
  nlohmann::json config() const { return nlohmann::json::parse(checkpoint.metadata.at("config")); }
  nlohmann::json model() const { return nlohmann::json::parse(checkpoint.metadata.at("model")); }
  std::int64_t model_values() const {
    std::int64_t n = 0;
    for (const auto& [name, t] : checkpoint.tensors)
      if (name.rfind("model.", 0) == 0) n += t.numel();
    return n;
  }
};

// The untampered file loads, bit for bit: the bounds and the size check refuse nothing a run writes.
TEST_F(GptCheckpointBounds, TheSavedCheckpointLoadsBitForBit) {
  const gpt::GptCheckpoint c = gpt::read_gpt_checkpoint(saved);
  EXPECT_EQ(c.step, 6);
  EXPECT_EQ(c.history.size(), 2u);
  const gpt::LoadedModel m = gpt::load_model(saved);
  for (const auto& [name, t] : m.model->state_dict())
    EXPECT_EQ(t.to_double_vector(), checkpoint.tensors.at("model." + name).to_double_vector()) << name;
  EXPECT_EQ(nn::state_dict_numel(m.model->config()), model_values());
}

// The model's config is counted, not built: a model wider or deeper than the weights the file holds is refused
// naming both counts, and so is a file that lost one of its tensors (the check is exact, both ways).
TEST_F(GptCheckpointBounds, AConfigThatDoesNotDescribeTheWeightsIsRefusedBeforeAModelIsBuilt) {
  nlohmann::json wide = model();
  wide["n_embd"] = 8192;
  nn::GPTConfig m = gpt::read_gpt_checkpoint(saved).model;
  m.n_embd = 8192;
  const std::string path = tampered("model", wide.dump());
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(path), std::runtime_error,
                   fmt::format("checkpoint {}: its config makes a model of {} values, but its model tensors hold {}",
                               path, nn::state_dict_numel(m), model_values()));
  EXPECT_THROW_MSG(gpt::load_model(path), std::runtime_error, "its config makes a model of");
  nlohmann::json deep = model();
  deep["n_layer"] = 2;
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("model", deep.dump())), std::runtime_error,
                   "its config makes a model of");
  nlohmann::json vocab = model();
  vocab["vocab_size"] = vocab["vocab_size"].get<std::int64_t>() + 1;
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("model", vocab.dump())), std::runtime_error,
                   "its model's vocab_size 9 is not its tokenizer's 8 tokens");

  SafetensorsFile f = checkpoint;
  f.tensors.erase("model.transformer.ln_f.bias");
  write_safetensors(path, f.tensors, f.metadata);
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(path), std::runtime_error,
                   fmt::format("but its model tensors hold {}", model_values() - 8));
}

// The config is a flat object of the table's keys: a deep value is refused where it starts (it once crashed the
// refusal that quoted it), a key this version does not know is refused (every key an earlier version wrote is still
// a row), and a value of the wrong type is shown short.
TEST_F(GptCheckpointBounds, TheConfigIsAFlatObjectOfKnownKeys) {
  std::string deep = checkpoint.metadata.at("config");
  deep.insert(deep.size() - 1, R"(,"steps":)" + std::string(100'000, '[') + std::string(100'000, ']'));
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("config", deep)), std::runtime_error,
                   "config nests arrays and objects more than 1 deep");
  nlohmann::json unknown = config();
  unknown["zz"] = 1;
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("config", unknown.dump())), std::runtime_error,
                   "config has the key \"zz\", which this program does not know");
  nlohmann::json text = config();
  text["steps"] = std::string(10'000'000, 'A');
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("config", text.dump())), std::runtime_error,
                   "config 'steps' must be an integer in range, got \"" + std::string(40, 'A') +
                       "\"... (10000000 bytes)");
  // The model's config is read so too, and a size of the run's config is not one of its keys.
  nlohmann::json moved = config();
  moved["d_model"] = 8;
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("config", moved.dump())), std::runtime_error,
                   "config has the key \"d_model\", which this program does not know");
  nlohmann::json text_model = model();
  text_model["n_embd"] = std::string(10'000'000, 'A');
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("model", text_model.dump())), std::runtime_error,
                   "model 'n_embd' must be an integer in range, got \"" + std::string(40, 'A') + "\"... (10000000 bytes)");
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("model", R"({"n_embd":[[1]]})")), std::runtime_error,
                   "model nests arrays and objects more than 1 deep");
  std::string many = "{";
  for (std::size_t i = 0; i <= kMaxConfigKeys; ++i) many += fmt::format("{}\"k{}\":0", i ? "," : "", i);
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("config", many + "}")), std::runtime_error,
                   fmt::format("config holds more than {} JSON values", kMaxConfigKeys + 1));
}

// Every other JSON value of the metadata is bounded by what it holds: a vocabulary by the characters there are, the
// history by the steps (one evaluation a step at most), a generator's state by its 4 words, the epoch's progress by
// its few numbers.
TEST_F(GptCheckpointBounds, EveryMetadataValueIsBoundedByWhatItHolds) {
  std::string empties = "[";
  for (int i = 0; i < 1'000'000; ++i) empties += i ? ",[]" : "[]";
  empties += "]";
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("vocab", empties)), std::runtime_error,
                   "from_vocab_json: the vocabulary nests arrays and objects more than 1 deep");
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("dropout_rng", empties)), std::runtime_error,
                   "metadata 'dropout_rng' nests arrays and objects more than 1 deep");
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("dropout_rng", "[1,2,3,4,5]")), std::runtime_error,
                   "metadata 'dropout_rng' holds more than 5 JSON values");
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("epoch_progress", R"({"a":)" + empties + "}")),
                   std::runtime_error, "metadata 'epoch_progress' nests arrays and objects more than 2 deep");
  // 7 evaluations for 6 steps are possible (one before the first step); 8 are not.
  const nlohmann::json entry = nlohmann::json::parse(checkpoint.metadata.at("history"))[0];
  nlohmann::json eight = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) eight.push_back(entry);
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("history", eight.dump())), std::runtime_error,
                   "metadata 'history' holds more than 7 entries");
  const std::string deep = R"([{"step":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}]";
  EXPECT_THROW_MSG(gpt::read_gpt_checkpoint(tampered("history", deep)), std::runtime_error,
                   "metadata 'history' nests arrays and objects more than 2 deep");
}

}  // namespace
}  // namespace cppgrad
