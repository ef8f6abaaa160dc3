// cppgrad-reverse against the JSON a checkpoint holds, as a red team wrote it: every refusal is exit status 2, one line
// naming the file and what was exceeded, within the bound every reader keeps (run_program.h's expect_cheap). Before
// core/json_bounded.h: a config value 200,000 arrays deep crashed eval (SIGSEGV), 16 MiB of empty objects as the
// history cost 581 MB to refuse, and a config saying d_model 2048 over 8-wide tensors had 927 MB allocated for its
// model before load_state_dict refused it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using cppgrad::test::MeasuredResult;

class ReverseCheckpointJson : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_reverse_checkpoint_json");
    const MeasuredResult r = run({"train", "--epochs", "1", "--train-size", "64", "--test-size", "16", "--d-model", "8",
                                  "--heads", "2", "--d-ff", "8", "--encoder-layers", "1", "--decoder-layers", "1",
                                  "--threads", "1", "--quiet", "--save", path("ck.safetensors")});
    ASSERT_EQ(r.status, 0) << r.err;
    checkpoint_ = cppgrad::read_safetensors(path("ck.safetensors"));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  MeasuredResult run(const std::vector<std::string>& args) const {
    return cppgrad::test::run_measured(CPPGRAD_REVERSE_BIN, args, dir_);
  }
  std::string tampered(const std::string& key, const std::string& value) const {
    cppgrad::SafetensorsFile f = checkpoint_;
    f.metadata[key] = value;
    cppgrad::write_safetensors(path("tampered.safetensors"), f.tensors, f.metadata);
    return path("tampered.safetensors");
  }
  // Every command that reads a checkpoint, on `file`.
  std::vector<std::vector<std::string>> readers(const std::string& file) const {
    return {{"eval", "--checkpoint", file},
            {"predict", "--checkpoint", file, "1", "2", "3", "4", "5", "6", "7", "8"},
            {"train", "--resume", file, "--epochs", "2", "--quiet"}};
  }

  fs::path dir_;
  cppgrad::SafetensorsFile checkpoint_;
};

void expect_refused_cheaply(const MeasuredResult& r, const std::string& file, const std::string& message) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("checkpoint " + file + ": "));
  EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err.substr(0, 1000);
  cppgrad::test::expect_cheap(r, message);
  std::printf("%s: %.2f s of CPU, peak RSS %.1f MiB\n", message.substr(0, 60).c_str(), r.cpu_seconds, r.peak_mib);
}

TEST_F(ReverseCheckpointJson, TheUntamperedCheckpointIsReadByEveryCommand) {
  for (const auto& args : readers(path("ck.safetensors"))) {
    SCOPED_TRACE(args[0]);
    const MeasuredResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST_F(ReverseCheckpointJson, DeepOrHugeJsonIsRefusedByEveryCommand) {
  std::string deep = checkpoint_.metadata.at("config");
  deep.insert(deep.size() - 1, ",\"zz\":" + std::string(200'000, '[') + std::string(200'000, ']'));
  std::string objects = "[{}";
  while (objects.size() < (std::size_t{15} << 20)) objects += ",{}";
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"config", deep, "its config is refused: config nests arrays and objects more than 1 deep"},
           {"history", objects + "]", "history entry 1: 'loss' must be a finite number"},
       }) {
    const std::string file = tampered(key, value);
    for (const auto& args : readers(file)) {
      SCOPED_TRACE(args[0] + " " + key);
      expect_refused_cheaply(run(args), file, message);
    }
  }
}

// The config's model against the weights the file holds, before a trainer builds it: refused naming both counts.
TEST_F(ReverseCheckpointJson, AConfigLargerThanTheWeightsIsRefusedBeforeItsModelIsBuilt) {
  nlohmann::json model = nlohmann::json::parse(checkpoint_.metadata.at("model"));
  model["d_model"] = 2048, model["d_ff"] = 8192;
  std::int64_t held = 0;
  for (const auto& [name, t] : checkpoint_.tensors)
    if (name.starts_with("model.")) held += t.numel();
  const std::string file = tampered("model", model.dump());
  for (const auto& args : readers(file)) {
    SCOPED_TRACE(args[0]);
    expect_refused_cheaply(run(args), file, " values, but its model tensors hold " + std::to_string(held));
  }
}

}  // namespace
