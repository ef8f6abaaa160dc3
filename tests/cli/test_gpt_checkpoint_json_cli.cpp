// cppgrad-gpt against the JSON a checkpoint (or a file beside it) holds, as a red team wrote it: every refusal is exit
// status 2, one line naming the file and what was exceeded, within the bound every reader keeps (run_program.h's
// expect_cheap: 200 MiB of peak resident memory, 2 s of CPU). Before core/json_bounded.h: a value 100,000 arrays deep
// crashed every command (SIGSEGV: its refusal dumped it recursively), 16 MiB of empty arrays in a metadata value cost
// 390-581 MB to refuse (or were accepted, under an unknown config key: 499 MB), and a config saying d_model 8192 over
// 16-wide tensors had 3.5 GB allocated for its model before anything was checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/safetensors.h"
#include "parity/gpt2_hf_golden.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using cppgrad::test::MeasuredResult;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// About `bytes` of "[],[],...": millions of values, each a JSON tree's node, inside `open` ... `close`.
std::string empties(const std::string& open, std::size_t bytes, const std::string& close) {
  std::string s = open + "[]";
  s.reserve(bytes + open.size() + close.size());
  while (s.size() + 3 < bytes) s += ",[]";
  return s + close;
}

class GptCheckpointJson : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_gpt_checkpoint_json");
    std::ofstream words(dir_ / "words.txt");
    for (int i = 0; i < 300; ++i) words << std::string(2 + i % 4, static_cast<char>('a' + i % 7)) << "\n";
    words.close();
    const MeasuredResult r = run({"train", "--data", path("words.txt"), "--d-model", "16", "--heads", "2", "--layers",
                                  "1", "--batch-size", "4", "--steps", "4", "--eval-every", "2", "--threads", "1",
                                  "--samples", "0", "--quiet", "--save", path("ck.safetensors")});
    ASSERT_EQ(r.status, 0) << r.err;
    checkpoint_ = cppgrad::read_safetensors(path("ck.safetensors"));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  MeasuredResult run(const std::vector<std::string>& args) const {
    return cppgrad::test::run_measured(CPPGRAD_GPT_BIN, args, dir_);
  }

  // The checkpoint with metadata `key` set to `value`, written as `name`.
  std::string tampered(const std::string& name, const std::string& key, const std::string& value) const {
    cppgrad::SafetensorsFile f = checkpoint_;
    f.metadata[key] = value;
    cppgrad::write_safetensors(path(name), f.tensors, f.metadata);
    return path(name);
  }
  // The checkpoint's config with `extra` ("\"key\": value") added.
  std::string config_with(const std::string& extra) const {
    std::string config = checkpoint_.metadata.at("config");
    return config.insert(config.size() - 1, "," + extra);
  }
  // Every command that reads a checkpoint, on `file`.
  std::vector<std::vector<std::string>> readers(const std::string& file) const {
    return {{"sample", "--checkpoint", file, "--num", "1"},
            {"eval", "--checkpoint", file},
            {"attention", "--checkpoint", file, "--prompt", "ab"},
            {"export", "--checkpoint", file, "--out", path("exported.safetensors")},
            {"train", "--resume", file, "--steps", "6", "--quiet", "--samples", "0"},
            {"train", "--init", file, "--data", path("words.txt"), "--steps", "2", "--quiet", "--samples", "0"}};
  }

  fs::path dir_;
  cppgrad::SafetensorsFile checkpoint_;
};

// Refused as a user should see it: exit 2, one line naming the file and what is wrong, within the bound.
void expect_refused_cheaply(const MeasuredResult& r, const std::string& file, const std::string& message) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err.substr(0, 1000);
  EXPECT_LT(r.err.size(), 1000u);
  EXPECT_THAT(r.err, Not(HasSubstr("std::")));
  cppgrad::test::expect_cheap(r, message);
  std::printf("%s: %.2f s of CPU, peak RSS %.1f MiB\n", message.substr(0, 60).c_str(), r.cpu_seconds, r.peak_mib);
}

TEST_F(GptCheckpointJson, TheUntamperedCheckpointIsReadByEveryCommand) {
  for (const auto& args : readers(path("ck.safetensors"))) {
    SCOPED_TRACE(args[0]);
    const MeasuredResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    cppgrad::test::expect_cheap(r, args[0] + " of a valid checkpoint");
  }
}

// A config value 100,000 arrays deep (a 200 KB string), in the run's config or the model's: every command refuses it
// where it starts.
TEST_F(GptCheckpointJson, AConfigValueNestedDeepIsRefusedByEveryCommand) {
  for (const auto& [key, field, value] : {std::tuple{"config", "\"steps\":", "4"}, {"model", "\"n_embd\":", "16"}}) {
    std::string json = checkpoint_.metadata.at(key);
    const std::string entry = std::string(field) + value;
    ASSERT_NE(json.find(entry), std::string::npos) << json;
    json.replace(json.find(entry), entry.size(), field + nested(100'000));
    const std::string file = tampered("deep.safetensors", key, json);
    for (const auto& args : readers(file)) {
      SCOPED_TRACE(args[0]);
      expect_refused_cheaply(run(args), "checkpoint " + file,
                             std::string(key) + " nests arrays and objects more than 1 deep");
    }
  }
}

// 15 MiB of empty arrays in each JSON value of the metadata: refused at the first value past what that value holds.
// (Each value is made when its case runs: the forked child's peak counts this process's memory until it executes.)
TEST_F(GptCheckpointJson, MillionsOfEmptyArraysInAMetadataValueAreRefusedCheaply) {
  const std::size_t mib15 = std::size_t{15} << 20;
  struct Case {
    std::string key;
    std::function<std::string()> value;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"vocab", [&] { return empties("[", mib15, "]"); },
            "the vocabulary nests arrays and objects more than 1 deep"},
           {"history", [&] { return empties("[", mib15, "]"); }, "history entry 1 is not an object"},
           {"history", [&] { return empties("[{},", mib15, "]"); }, "history entry 1: 'step' must be a whole number"},
           {"dropout_rng", [&] { return empties("[", mib15, "]"); },
            "metadata 'dropout_rng' nests arrays and objects more than 1 deep"},
           {"epoch_progress", [&] { return empties(R"({"a":[)", mib15, "]}"); },
            "metadata 'epoch_progress' nests arrays and objects more than 2 deep"},
           {"config", [&] { return config_with(empties(R"("zz":[)", mib15, "]")); },
            "config nests arrays and objects more than 1 deep"},
       }) {
    SCOPED_TRACE(c.key);
    const std::string file = tampered("wide.safetensors", c.key, c.value());
    expect_refused_cheaply(run({"eval", "--checkpoint", file}), "checkpoint " + file, c.message);
  }
  // A history of many valid entries is bounded by the steps: 4 steps hold at most 5 evaluations. (8 MiB: the header
  // escapes each quote, and a string in it is at most 16 MiB.)
  const std::string file = [&] {
    const std::string entry = nlohmann::json::parse(checkpoint_.metadata.at("history"))[0].dump();
    std::string many = "[" + entry;
    while (many.size() < (std::size_t{8} << 20)) many += "," + entry;
    return tampered("history.safetensors", "history", many + "]");
  }();
  expect_refused_cheaply(run({"eval", "--checkpoint", file}), "checkpoint " + file,
                         "metadata 'history' holds more than 5 entries");
}

// A config key this version does not know is refused, whatever it holds (it was accepted, and a huge one read whole).
TEST_F(GptCheckpointJson, AnUnknownConfigKeyIsRefused) {
  const std::string file = tampered("unknown.safetensors", "config", config_with(R"("zz":1)"));
  expect_refused_cheaply(run({"sample", "--checkpoint", file, "--num", "1"}), "checkpoint " + file,
                         "config has the key \"zz\", which this program does not know");
}

// A model config that is not the file's weights is refused before its model is built, naming both counts.
TEST_F(GptCheckpointJson, AConfigLargerThanTheWeightsIsRefusedBeforeItsModelIsBuilt) {
  nlohmann::json model = nlohmann::json::parse(checkpoint_.metadata.at("model"));
  model["n_embd"] = 8192;
  const std::string wide = tampered("wide.safetensors", "model", model.dump());
  model["n_embd"] = 2048, model["n_layer"] = 8;
  const std::string deep = tampered("deep.safetensors", "model", model.dump());
  std::int64_t held = 0;
  for (const auto& [name, t] : checkpoint_.tensors)
    if (name.starts_with("model.")) held += t.numel();
  for (const std::string& file : {wide, deep})
    for (const auto& args : readers(file)) {
      SCOPED_TRACE(args[0] + " " + file);
      expect_refused_cheaply(run(args), "checkpoint " + file,
                             " values, but its model tensors hold " + std::to_string(held));
    }
}

// A config value that is a 10 MB string is shown as its first 40 bytes and its length (it was quoted whole).
TEST_F(GptCheckpointJson, AValueInARefusalIsShownShort) {
  nlohmann::json model = nlohmann::json::parse(checkpoint_.metadata.at("model"));
  model["n_embd"] = std::string(10'000'000, 'A');
  const std::string file = tampered("string.safetensors", "model", model.dump());
  expect_refused_cheaply(run({"sample", "--checkpoint", file}), "checkpoint " + file,
                         "model 'n_embd' must be an integer in range, got \"" + std::string(40, 'A') +
                             "\"... (10000000 bytes)");
}

// The JSON files a command reads beside a checkpoint: a Hugging Face config.json (import's heads) and GPT-2's
// encoder.json, each with a value hundreds of thousands of arrays deep.
TEST_F(GptCheckpointJson, DeepJsonInConfigJsonOrEncoderJsonIsRefused) {
  fs::create_directories(dir_ / "hf");
  fs::copy_file(cppgrad::test::gpt2_hf_model_path(), dir_ / "hf" / "model.safetensors");
  std::ofstream(dir_ / "hf" / "config.json") << R"({"n_head": 2, "n_head": )" << nested(500'000) << "}";
  expect_refused_cheaply(run({"import", "--hf", path("hf/model.safetensors"), "--out", path("imported.safetensors"),
                              "--tokenizer", "char", "--data", path("words.txt")}),
                         path("hf/config.json"), "nests arrays and objects more than 16 deep");
  EXPECT_FALSE(fs::exists(path("imported.safetensors")));

  fs::create_directories(dir_ / "g2");
  std::ofstream(dir_ / "g2" / "encoder.json") << R"({"a": )" << nested(1'000'000) << "}";
  std::ofstream(dir_ / "g2" / "vocab.bpe") << "#version: 0.2\n";
  ::setenv("CPPGRAD_GPT2_DIR", path("g2").c_str(), 1);
  const MeasuredResult r = run({"tokenize", "lengths", "--tokenizer", "gpt2"});
  ::unsetenv("CPPGRAD_GPT2_DIR");
  expect_refused_cheaply(r, path("g2/encoder.json"), "the text nests arrays and objects more than 1 deep");
}

}  // namespace
