// `cppgrad-gpt train --init CKPT --lora-rank R` on the command line: only the adapters learn and are saved, beside the
// base's path and hash; sample, eval, attention, --resume, merge and export read the base again and refuse another;
// the flags and files a user can get wrong exit 2 with one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/safetensors.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using cppgrad::test::CliResult;

class GptLoRACli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_gpt_lora_cli");
    std::ofstream words(dir_ / "words.txt");
    const char* syllables[] = {"ba", "ko", "tu", "ri", "ne", "sa", "lo", "mi"};
    unsigned x = 3;
    for (int i = 0; i < 800; ++i) {
      std::string half;
      for (int s = 0; s < 2; ++s) half += syllables[(x = x * 1103515245u + 12345u) >> 16 & 7];
      words << half << half << "\n";
    }
    words.close();
    ASSERT_EQ(cli(train({"--steps", "40", "--save", path("base.safetensors")})).status, 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  CliResult cli(const std::vector<std::string>& args) { return cppgrad::test::run_cli(CPPGRAD_GPT_BIN, args, dir_); }

  std::vector<std::string> train(std::vector<std::string> extra) const {
    std::vector<std::string> a = {"train", "--data", path("words.txt"), "--d-model", "16", "--heads", "2", "--layers",
                                  "2", "--batch-size", "8", "--lr", "0.01", "--eval-every", "20", "--threads", "1",
                                  "--samples", "0", "--quiet"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // A LoRA finetune of base.safetensors saved as `name`.
  std::vector<std::string> lora(const std::string& name, std::vector<std::string> extra) const {
    std::vector<std::string> a = train({"--init", path("base.safetensors"), "--lora-rank", "2", "--save", path(name),
                                        "--metrics-out", path(name + ".jsonl")});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  fs::path dir_;
};

using cppgrad::test::expect_usage_error;

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST_F(GptLoRACli, SavesTheAdaptersAloneAndNamesItsBase) {
  const std::string base_before = bytes_of(path("base.safetensors"));
  const CliResult r = cli(lora("lora.safetensors", {"--steps", "40", "--quiet"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(bytes_of(path("base.safetensors")), base_before);  // the base is read, never written
  const cppgrad::SafetensorsFile f = cppgrad::read_safetensors(path("lora.safetensors"));
  std::int64_t adapters = 0;
  for (const auto& [name, t] : f.tensors) {
    if (name.rfind("model.", 0) != 0) continue;
    EXPECT_THAT(name, HasSubstr(".lora.")) << "a LoRA checkpoint holds no base weight";
    ++adapters;
  }
  EXPECT_EQ(adapters, 2 * 4 * 2);  // A and B on 4 matrices of 2 blocks
  const nlohmann::json base = nlohmann::json::parse(f.metadata.at("lora_base"));
  EXPECT_EQ(base["path"], fs::absolute(path("base.safetensors")).string());
  EXPECT_THAT(base["weights"].get<std::string>(), HasSubstr("fnv1a64:"));
  EXPECT_EQ(nlohmann::json::parse(f.metadata.at("config"))["lora_rank"], 2);
  // The header says what learns.
  std::vector<std::string> args = lora("loud.safetensors", {"--steps", "1", "--eval-every", "1"});
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  EXPECT_THAT(cli(args).out, HasSubstr("LoRA: rank 2 (alpha 8) on 8 matrices (c_attn,attn.c_proj,c_fc,mlp.c_proj): "
                                       "1024 parameters learn, the rest of " +
                                       fs::absolute(path("base.safetensors")).string() + " is frozen"));
}

TEST_F(GptLoRACli, AStoppedRunResumesExactlyFromItsBase) {
  ASSERT_EQ(cli(lora("unbroken.safetensors", {"--steps", "60", "--lora-dropout", "0.1"})).status, 0);
  ASSERT_EQ(cli(lora("resumed.safetensors", {"--steps", "20", "--lora-dropout", "0.1"})).status, 0);
  const CliResult r = cli({"train", "--resume", path("resumed.safetensors"), "--steps", "60", "--quiet", "--samples", "0",
                           "--save", path("resumed.safetensors"), "--metrics-out", path("resumed.safetensors.jsonl")});
  ASSERT_EQ(r.status, 0) << r.err;
  cppgrad::test::expect_same_weights(
      cppgrad::test::run_outcome(path("unbroken.safetensors"), path("unbroken.safetensors.jsonl"), {}),
      cppgrad::test::run_outcome(path("resumed.safetensors"), path("resumed.safetensors.jsonl"), {}));
}

// The loss eval prints, without the checkpoint's name: "loss 1.2345 nats/token, ...".
std::string loss_of(const CliResult& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  const std::size_t at = r.out.find("loss ");
  return at == std::string::npos ? r.out : r.out.substr(at);
}

TEST_F(GptLoRACli, SampleEvalAttentionMergeAndExportReadTheBase) {
  ASSERT_EQ(cli(lora("lora.safetensors", {"--steps", "40"})).status, 0);
  const CliResult s = cli({"sample", "--checkpoint", path("lora.safetensors"), "--num", "2"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(cli({"attention", "--checkpoint", path("lora.safetensors"), "--prompt", "koko"}).status, 0);
  const std::string adapted = loss_of(cli({"eval", "--checkpoint", path("lora.safetensors")}));
  const std::string base = loss_of(cli({"eval", "--checkpoint", path("base.safetensors")}));
  EXPECT_NE(adapted, base);  // the adapters changed the model

  const CliResult m = cli({"merge", "--checkpoint", path("lora.safetensors"), "--out", path("merged.safetensors")});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_THAT(m.out, HasSubstr("(step 40: 8 adapters of rank 2)"));
  EXPECT_EQ(cppgrad::read_safetensors(path("merged.safetensors")).metadata.count("lora_base"), 0u);
  EXPECT_EQ(loss_of(cli({"eval", "--checkpoint", path("merged.safetensors")})), adapted);  // to the printed digits
  // The merged model is a plain one: it finetunes, and exports as the LoRA checkpoint does.
  EXPECT_EQ(cli(train({"--init", path("merged.safetensors"), "--steps", "2"})).status, 0);
  ASSERT_EQ(cli({"export", "--checkpoint", path("lora.safetensors"), "--out", path("a.safetensors")}).status, 0);
  ASSERT_EQ(cli({"export", "--checkpoint", path("merged.safetensors"), "--out", path("b.safetensors")}).status, 0);
  const auto a = cppgrad::read_safetensors(path("a.safetensors")).tensors;
  const auto b = cppgrad::read_safetensors(path("b.safetensors")).tensors;
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_EQ(t.to_double_vector(), b.at(name).to_double_vector()) << name;
}

TEST_F(GptLoRACli, AnotherOrAMissingBaseIsRefusedInOneLine) {
  ASSERT_EQ(cli(lora("lora.safetensors", {"--steps", "20"})).status, 0);
  fs::rename(path("base.safetensors"), path("kept.safetensors"));
  ASSERT_EQ(cli(train({"--steps", "20", "--seed", "5", "--save", path("base.safetensors")})).status, 0);
  const std::string other = "checkpoint " + path("lora.safetensors") + ": its base " +
                            fs::absolute(path("base.safetensors")).string() +
                            " holds other weights than the ones its adapters were trained on (fnv1a64:";
  expect_usage_error(cli({"sample", "--checkpoint", path("lora.safetensors")}), other);
  expect_usage_error(cli({"eval", "--checkpoint", path("lora.safetensors")}), other);
  expect_usage_error(cli({"train", "--resume", path("lora.safetensors"), "--steps", "40"}), other);
  expect_usage_error(cli({"merge", "--checkpoint", path("lora.safetensors"), "--out", path("m.safetensors")}), other);
  EXPECT_FALSE(fs::exists(path("m.safetensors")));
  fs::remove(path("base.safetensors"));
  expect_usage_error(cli({"sample", "--checkpoint", path("lora.safetensors")}),
                     "(the --init it finetunes) cannot be read: ");
  fs::rename(path("kept.safetensors"), path("base.safetensors"));  // back: it is read again
  EXPECT_EQ(cli({"sample", "--checkpoint", path("lora.safetensors"), "--num", "1"}).status, 0);
}

TEST_F(GptLoRACli, BadFlagsAreRefusedInOneLine) {
  const std::string base = path("base.safetensors");
  expect_usage_error(cli(train({"--lora-rank", "2"})),
                     "--lora-rank 2 finetunes a trained model: give it with --init CKPT");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "17"})),
                     "--lora-rank 17 is above the model's width 16 (--d-model)");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "-1"})), "--lora-rank");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "2", "--lora-targets", "q_proj"})),
                     "--lora-targets q_proj: LoRA: the target 'q_proj' names no Linear of this model; its Linear "
                     "layers: transformer.h.0.attn.c_attn, ");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "2", "--lora-targets", "c_attn,,c_fc"})),
                     "--lora-targets 'c_attn,,c_fc': each target is a layer's name or its end");
  expect_usage_error(cli(train({"--init", base, "--lora-alpha", "4"})), "--lora-alpha needs --lora-rank");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "2", "--lora-alpha", "0"})),
                     "--lora-alpha must be a positive number, got 0");
  expect_usage_error(cli(train({"--init", base, "--lora-rank", "2", "--lora-dropout", "1"})),
                     "--lora-dropout must be in [0, 1), got 1");
  expect_usage_error(cli({"merge", "--checkpoint", base, "--out", path("m.safetensors")}),
                     "has no LoRA adapters to merge");
  expect_usage_error(cli({"merge", "--out", path("m.safetensors")}), "merge needs --checkpoint");
}

TEST_F(GptLoRACli, NothingOverwritesTheBaseOrFinetunesAnAdapterFile) {
  ASSERT_EQ(cli(lora("lora.safetensors", {"--steps", "20"})).status, 0);
  const std::string base_before = bytes_of(path("base.safetensors"));
  expect_usage_error(cli({"train", "--resume", path("lora.safetensors"), "--steps", "40", "--save",
                          path("base.safetensors")}),
                     "names the base of --resume");
  expect_usage_error(cli({"merge", "--checkpoint", path("lora.safetensors"), "--out", path("base.safetensors")}),
                     "names the base of --checkpoint");
  EXPECT_EQ(bytes_of(path("base.safetensors")), base_before);
  expect_usage_error(cli(train({"--init", path("lora.safetensors")})),
                     "a LoRA checkpoint (adapters on " + fs::absolute(path("base.safetensors")).string() +
                         "); finetune its merged model: cppgrad-gpt merge --checkpoint");
}

// A LoRA checkpoint is hostile input like any: what it says of its base is checked before the base is read.
TEST_F(GptLoRACli, AHostileLoRACheckpointIsRefusedInOneLine) {
  ASSERT_EQ(cli(lora("lora.safetensors", {"--steps", "20"})).status, 0);
  const cppgrad::SafetensorsFile f = cppgrad::read_safetensors(path("lora.safetensors"));
  const auto with = [&](const std::function<void(cppgrad::SafetensorsFile&)>& change) {
    cppgrad::SafetensorsFile g = f;
    change(g);
    cppgrad::write_safetensors(path("h.safetensors"), g.tensors, g.metadata);
    return cli({"eval", "--checkpoint", path("h.safetensors")});
  };
  expect_usage_error(with([](auto& g) { g.metadata.erase("lora_base"); }), "metadata has no 'lora_base'");
  expect_usage_error(with([](auto& g) { g.metadata["lora_base"] = R"({"path": "x"})"; }),
                     "metadata 'lora_base' has no 'weights'");
  expect_usage_error(with([](auto& g) { g.metadata["lora_base"] = R"({"path": "x", "weights": "md5:1"})"; }),
                     "'weights' is not fnv1a64:<16 hex digits>");
  expect_usage_error(with([](auto& g) { g.metadata["lora_base"] = "[[[[[[[[[[[[[["; }), "metadata 'lora_base'");
  expect_usage_error(with([&](auto& g) { g.tensors["model.transformer.wte.weight"] = g.tensors.begin()->second; }),
                     "a LoRA checkpoint holds its adapters alone, and this one holds 'transformer.wte.weight'");
  expect_usage_error(with([&](auto& g) {
                       g.metadata["lora_base"] = nlohmann::json{{"path", path("h.safetensors")},
                                                                {"weights", "fnv1a64:0000000000000000"}}.dump();
                     }),
                     "is a LoRA checkpoint itself");  // its own base: read once more, refused, no loop
  expect_usage_error(with([&](auto& g) { g.tensors.erase("model.transformer.h.0.attn.c_attn.lora.A"); }),
                     "transformer.h.0.attn.c_attn.lora.A");
}

}  // namespace
