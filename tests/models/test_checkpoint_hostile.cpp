// Trainer::load and TrainConfig::from_json fed checkpoints whose metadata was tampered with (found with
// fuzz/fuzz_checkpoint.cpp's check that a refused checkpoint leaves the trainer as it was). Every value is read
// and checked before the trainer changes, and no number from the file is converted out of range.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/safetensors.h"
#include "models/reverse/trainer.h"
#include "nn/seq2seq.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using test::TempDir;

reverse::TrainConfig tiny_config() {
  reverse::TrainConfig c;
  c.vocab = 5, c.seq_len = 3, c.train_size = 8, c.test_size = 4, c.model.d_model = 4, c.model.n_heads = 1;
  c.model.n_encoder_layers = 1, c.model.n_decoder_layers = 1, c.model.d_ff = 4, c.epochs = 1, c.batch_size = 4, c.threads = 1;
  return c;
}

class CheckpointHostile : public testing::Test {
 protected:
  TempDir dir;
  SafetensorsFile checkpoint;  // a trained trainer's, one epoch in
  reverse::Trainer fresh{tiny_config()};

  void SetUp() override {
    reverse::Trainer trained(tiny_config());
    trained.run_epoch();
    const std::string path = (dir.path / "ckpt.safetensors").string();
    trained.save(path);
    checkpoint = read_safetensors(path);
  }

  std::vector<std::vector<double>> fresh_parameters() {
    std::vector<std::vector<double>> values;
    for (const auto& [name, p] : fresh.model().named_parameters()) values.push_back(p.to_double_vector());
    return values;
  }

  // The checkpoint with one metadata value replaced, loaded into the fresh trainer: refused with `expected`,
  // and the trainer is as it was.
  void expect_refused(const std::string& key, const std::string& value, const std::string& expected) {
    SafetensorsFile f = checkpoint;
    f.metadata[key] = value;
    const std::string path = (dir.path / "tampered.safetensors").string();
    write_safetensors(path, f.tensors, f.metadata);
    const auto before = fresh_parameters();
    EXPECT_THROW_MSG(fresh.load(path), std::runtime_error, expected);
    EXPECT_EQ(fresh_parameters(), before) << "a refused checkpoint changed the model";
    EXPECT_EQ(fresh.global_step(), 0);
    EXPECT_EQ(fresh.epochs_done(), 0);
    EXPECT_EQ(fresh.epoch_progress().steps, 0);
    EXPECT_EQ(fresh.optimizer().state_dict().at("step").item(), 0.0) << "a refused checkpoint changed the optimizer";
  }
};

TEST_F(CheckpointHostile, TheUntamperedCheckpointLoads) {
  const std::string path = (dir.path / "ckpt.safetensors").string();
  fresh.load(path);
  EXPECT_EQ(fresh.epochs_done(), 1);
  EXPECT_EQ(fresh.global_step(), 2);
}

// Saving refuses weights that are not finite, so reading does too: such a file would only give NaN losses
// (`cppgrad-gpt eval` once printed "loss nan" and exit 0). Each of NaN, +Inf and -Inf, in a weight and in a moment.
TEST_F(CheckpointHostile, AWeightOrAMomentThatIsNotFiniteIsRefused) {
  std::vector<std::string> names;
  for (const auto& [name, t] : checkpoint.tensors)
    if (t.dtype() == DType::Float32 && (names.empty() || name.rfind("optim.", 0) == 0)) names.push_back(name);
  ASSERT_GE(names.size(), 2u);
  const std::vector<float> bad = {std::nanf(""), std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity()};
  for (const std::string& name : {names.front(), names.back()}) {
    for (const float value : bad) {
      SafetensorsFile f = checkpoint;
      f.tensors[name] = f.tensors[name].clone();
      f.tensors[name].mutable_data<float>()[f.tensors[name].numel() - 1] = value;
      const std::string path = (dir.path / "not_finite.safetensors").string();
      write_safetensors(path, f.tensors, f.metadata);
      const auto before = fresh_parameters();
      EXPECT_THROW_MSG(fresh.load(path), std::runtime_error,
                       "checkpoint " + path + ": tensor '" + name + "' holds NaN or Inf values");
      EXPECT_EQ(fresh_parameters(), before) << "a refused checkpoint changed the model";
    }
  }
}

TEST_F(CheckpointHostile, ABadGlobalStepChangesNothing) {
  // It used to be read last, after the model and the optimizer had been overwritten.
  expect_refused("global_step", "x", "metadata 'global_step' must be a whole number >= 0, got 'x'");
  expect_refused("global_step", "-2", "metadata 'global_step' must be a whole number >= 0");
  expect_refused("global_step", "2abc", "metadata 'global_step' must be a whole number >= 0");
}

TEST_F(CheckpointHostile, AnAllZeroRngStateIsRefused) {
  // xoshiro256** never leaves the zero state: dropout would draw the same value forever.
  expect_refused("dropout_rng", "[0,0,0,0]", "metadata 'dropout_rng' is all zeros");
}

TEST_F(CheckpointHostile, ABadEpochProgressIsRefused) {
  // Written by a run stopped mid-epoch (two steps an epoch here); read back, every count is bounded.
  const auto progress = [](const std::string& steps, const std::string& loss_sum) {
    return R"({"steps":)" + steps + R"(,"loss_sum":)" + loss_sum +
           R"(,"right_rows":0,"rows":4,"right_tokens":1,"tokens":12,"elapsed_s":0.5})";
  };
  expect_refused("epoch_progress", "[1]", "metadata 'epoch_progress' is not a JSON object");
  expect_refused("epoch_progress", progress("3", "1.5"), "epoch_progress: 'steps' must be a whole number from 0 to 2");
  expect_refused("epoch_progress", progress("-1", "1.5"), "epoch_progress: 'steps' must be a whole number from 0 to 2");
  expect_refused("epoch_progress", progress("1", "-1"), "epoch_progress: 'loss_sum' must be a finite number >= 0");
  expect_refused("epoch_progress", progress("1", "1e999"), "metadata 'epoch_progress' is not JSON: number overflow");
}

// The config's model is counted against the weights the file holds before a trainer builds it (a 10 KB file whose
// config said d_model 2048 and d_ff 8192 had 927 MB allocated before load_state_dict refused it). Exact both ways: a
// file that lost one tensor is refused too.
TEST_F(CheckpointHostile, AConfigThatDoesNotDescribeTheWeightsIsRefusedBeforeAModelIsBuilt) {
  std::int64_t held = 0;
  for (const auto& [name, t] : checkpoint.tensors)
    if (name.rfind("model.", 0) == 0) held += t.numel();
  reverse::TrainConfig big = tiny_config();
  big.model.d_model = 2048, big.model.d_ff = 8192;
  const std::int64_t expected = nn::state_dict_numel(big.model_options());
  nlohmann::json model = nlohmann::json::parse(checkpoint.metadata.at("model"));
  model["d_model"] = 2048, model["d_ff"] = 8192;
  expect_refused("model", model.dump(),
                 fmt::format("its config makes a model of {} values, but its model tensors hold {}", expected, held));
  const std::string path = (dir.path / "tampered.safetensors").string();
  EXPECT_THROW_MSG(reverse::read_checkpoint_config(path), std::runtime_error,
                   "checkpoint " + path + ": its config makes a model of");

  SafetensorsFile f = checkpoint;
  const std::int64_t bias = f.tensors.at("model.out.bias").numel();
  f.tensors.erase("model.out.bias");
  write_safetensors(path, f.tensors, f.metadata);
  EXPECT_THROW_MSG(reverse::read_checkpoint_config(path), std::runtime_error,
                   fmt::format("but its model tensors hold {}", held - bias));
}

// The config is a flat object of the table's keys, its other metadata bounded by what each holds: a value a hundred
// thousand arrays deep is refused where it starts (its refusal once dumped it, and crashed), an unknown key is
// refused, and the history holds one entry an epoch.
TEST_F(CheckpointHostile, EveryJsonValueIsBoundedByWhatItHolds) {
  std::string deep = checkpoint.metadata.at("config");
  const auto vocab = deep.find("\"vocab\":5");
  ASSERT_NE(vocab, std::string::npos) << deep;
  deep.replace(vocab, 9, "\"vocab\":" + std::string(200'000, '[') + std::string(200'000, ']'));
  expect_refused("config", deep, "its config is refused: config nests arrays and objects more than 1 deep");
  nlohmann::json unknown = nlohmann::json::parse(checkpoint.metadata.at("config"));
  unknown["zz"] = nlohmann::json::array({1, 2});
  expect_refused("config", unknown.dump(), "config nests arrays and objects more than 1 deep");
  unknown["zz"] = 1;
  expect_refused("config", unknown.dump(), "config has the key \"zz\", which this program does not know");
  const nlohmann::json entry = nlohmann::json::parse(checkpoint.metadata.at("history"))[0];
  expect_refused("history", nlohmann::json::array({entry, entry}).dump(), "metadata 'history' holds more than 1 entries");
  expect_refused("history", "[{},{}]", "history entry 1: 'loss' must be a finite number");
  expect_refused("dropout_rng", "[[1],2,3,4]", "metadata 'dropout_rng' nests arrays and objects more than 1 deep");
  expect_refused("epoch_progress", R"({"steps":[1]})", "metadata 'epoch_progress' nests arrays and objects more than 1 deep");
}

// A checkpoint an earlier version wrote (the fuzz corpus's, before --shards: its config lacks that key) still loads.
TEST(CheckpointConfig, ACheckpointAnEarlierVersionWroteStillLoads) {
  const std::string path =
      (std::filesystem::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "../../fuzz/corpus/checkpoint/tiny.safetensors").string();
  const reverse::TrainConfig config = reverse::read_checkpoint_config(path);
  EXPECT_FALSE(nlohmann::json::parse(read_safetensors(path).metadata.at("config")).contains("shards"));
  reverse::Trainer trainer(config);
  trainer.load(path);
  EXPECT_EQ(trainer.epochs_done(), 1);
  EXPECT_EQ(trainer.global_step(), 4);
  for (const auto& [name, t] : trainer.model().state_dict())
    EXPECT_EQ(t.to_double_vector(), read_safetensors(path).tensors.at("model." + name).to_double_vector()) << name;
}

TEST(CheckpointConfig, IntegersMustBeIntegersInRange) {
  // A config inside a checkpoint is JSON from the file; nlohmann would cast 1e30 into d_model (undefined).
  const std::string good = tiny_config().to_json(), good_model = tiny_config().model_options().to_json();
  ASSERT_NO_THROW(reverse::TrainConfig::from_json(good));
  ASSERT_NO_THROW(nn::Seq2SeqOptions::from_json(good_model));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"d_model\":4", "\"d_model\":1e30"},
           {"\"d_model\":4", "\"d_model\":4.5"},
           {"\"d_model\":4", "\"d_model\":18446744073709551615"},
           {"\"vocab\":5", "\"vocab\":-1e300"},
       }) {
    SCOPED_TRACE(to);
    const bool model = from.find("d_model") != std::string::npos;
    std::string bad = model ? good_model : good;
    const auto at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << bad;
    bad.replace(at, from.size(), to);
    if (model)
      EXPECT_THROW_MSG(nn::Seq2SeqOptions::from_json(bad), std::invalid_argument, "must be an integer in range");
    else
      EXPECT_THROW_MSG(reverse::TrainConfig::from_json(bad), std::invalid_argument, "must be an integer in range");
  }
}

}  // namespace
}  // namespace cppgrad
