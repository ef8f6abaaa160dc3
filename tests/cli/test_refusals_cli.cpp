// What both programs promise about bad input, on the inputs that once broke it: a refusal is ONE line on stderr, exit
// status 2, naming the flag and the file the user typed; an output never overwrites an input (a checkpoint, --data,
// the config.json beside --hf), through whatever spelling or symlink; a bad output path is refused before any work.
// The first test proves the judge itself can fail: each broken promise it is shown is reported.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using cppgrad::test::CliResult;
using cppgrad::test::slurp;

void write(const fs::path& p, const std::string& content) { std::ofstream(p, std::ios::binary) << content; }

// The promise, judged: exit 2, one line on stderr, every word of `names` in it (the flag, the file), no raw control
// character in it, and nothing on stdout.
void expect_refusal(const CliResult& r, const std::vector<std::string>& names) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  EXPECT_TRUE(r.err.ends_with("\n")) << r.err;
  for (const std::string& name : names) EXPECT_THAT(r.err, HasSubstr(name));
  for (std::size_t i = 0; i < r.err.size(); ++i) {  // newlines are counted above
    const auto c = static_cast<unsigned char>(r.err[i]);
    EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7F) << "a raw control byte " << int(c) << " at " << i << " of:\n" << r.err;
  }
  EXPECT_THAT(r.err, Not(HasSubstr("\xE2\x80\xAE"))) << "a raw U+202E RIGHT-TO-LEFT OVERRIDE";
  EXPECT_EQ(r.out, "") << "nothing is done before a refusal";
}

// The same, and the input the output named is still what it was.
void expect_refusal_keeping(const CliResult& r, const std::vector<std::string>& names, const fs::path& input,
                            const std::string& before) {
  expect_refusal(r, names);
  EXPECT_EQ(slurp(input), before) << input << " was changed";
}

TEST(RefusalJudge, ReportsEveryBrokenPromise) {
  const fs::path dir = cppgrad::test::fresh_test_dir("cppgrad_refusal_judge");
  write(dir / "in.txt", "kept\n");
  EXPECT_NONFATAL_FAILURE(expect_refusal({0, "", "a: b\n"}, {}), "r.status");
  EXPECT_NONFATAL_FAILURE(expect_refusal({2, "", "a: --prompt 'ab\ncd'\n"}, {}), "one line");
  EXPECT_NONFATAL_FAILURE(expect_refusal({2, "", "a: b\n"}, {"--data"}), "--data");
  EXPECT_NONFATAL_FAILURE(expect_refusal({2, "", std::string("a: entry '\0b'\n", 14)}, {}), "raw control byte 0");
  EXPECT_NONFATAL_FAILURE(expect_refusal({2, "", "a: entry '\xE2\x80\xAE'\n"}, {}), "RIGHT-TO-LEFT");
  EXPECT_NONFATAL_FAILURE(expect_refusal({2, "step 1\n", "a: b\n"}, {}), "nothing is done");
  const std::string before = slurp(dir / "in.txt");
  write(dir / "in.txt", "overwritten\n");
  EXPECT_NONFATAL_FAILURE(expect_refusal_keeping({2, "", "a: b\n"}, {}, dir / "in.txt", before), "was changed");
  fs::remove_all(dir);
}

// Tiny models of both programs, trained once for the suite.
class Refusals : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("cppgrad_refusals_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "hf");
    std::string words, text;
    const char* syllables[] = {"ba", "ko", "tu", "ri", "ne", "sa"};
    for (int i = 0; i < 300; ++i) words += std::string(syllables[i % 6]) + syllables[(i / 6) % 6] + "\n";
    for (int i = 0; i < 200; ++i) text += std::string(syllables[(i * 7) % 6]) + (i % 9 == 8 ? ".\n" : " ");
    write(dir_ / "words.txt", words);
    write(dir_ / "text.txt", text);
    const std::vector<std::string> tiny = {"--steps", "4", "--eval-every", "2", "--d-model", "16", "--heads", "2",
                                           "--layers", "1", "--batch-size", "4", "--quiet", "--samples", "0",
                                           "--threads", "1"};
    std::vector<std::string> lines = {"train", "--data", path("words.txt"), "--save", path("lines.safetensors")};
    std::vector<std::string> running = {"train", "--data", path("text.txt"), "--format", "text", "--context", "16",
                                        "--save", path("text.safetensors")};
    lines.insert(lines.end(), tiny.begin(), tiny.end());
    running.insert(running.end(), tiny.begin(), tiny.end());
    ASSERT_EQ(gpt(lines).status, 0);
    ASSERT_EQ(gpt(running).status, 0);
    ASSERT_EQ(gpt({"export", "--checkpoint", path("text.safetensors"), "--out", path("hf/model.safetensors"),
                   "--config-json"}).status, 0);
    ASSERT_EQ(reverse({"train", "--epochs", "1", "--vocab", "6", "--seq-len", "4", "--train-size", "64",
                       "--test-size", "16", "--d-model", "8", "--heads", "2", "--d-ff", "8", "--encoder-layers", "1",
                       "--decoder-layers", "1", "--threads", "1", "--quiet", "--save", path("rev.safetensors")})
                  .status, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static CliResult gpt(const std::vector<std::string>& args) {
    return cppgrad::test::run_cli(CPPGRAD_GPT_BIN, args, dir_);
  }
  static CliResult reverse(const std::vector<std::string>& args) {
    return cppgrad::test::run_cli(CPPGRAD_REVERSE_BIN, args, dir_);
  }
  // A copy of a file the test may lose: the input an output is pointed at.
  static std::string victim(const std::string& from, const std::string& name) {
    fs::copy_file(path(from), path(name), fs::copy_options::overwrite_existing);
    return path(name);
  }
  // The lines checkpoint with one more tensor, under a name the file chooses.
  static std::string with_tensor(const std::string& name, const std::string& file) {
    cppgrad::SafetensorsFile f = cppgrad::read_safetensors(path("lines.safetensors"));
    f.tensors.emplace(name, cppgrad::Tensor::zeros({1}));
    cppgrad::write_safetensors(path(file), f.tensors, f.metadata);
    return path(file);
  }
  // The lines checkpoint with one key of its stored config replaced.
  static std::string with_config(const std::string& key, const nlohmann::json& value, const std::string& file) {
    cppgrad::SafetensorsFile f = cppgrad::read_safetensors(path("lines.safetensors"));
    nlohmann::json config = nlohmann::json::parse(f.metadata.at("config"));
    config[key] = value;
    f.metadata["config"] = config.dump();
    cppgrad::write_safetensors(path(file), f.tensors, f.metadata);
    return path(file);
  }

  static fs::path dir_;
};

fs::path Refusals::dir_;

// ------------------------------------------------------------------------------ outputs never overwrite inputs
TEST_F(Refusals, AnOutputNamingACheckpointReadIsRefusedAndTheCheckpointKept) {
  const std::string ck = victim("text.safetensors", "victim.safetensors"), before = slurp(ck);
  expect_refusal_keeping(gpt({"attention", "--checkpoint", ck, "--prompt", "ba", "--svg", ck}),
                         {"--svg " + ck + " names the file --checkpoint reads"}, ck, before);
  // Another spelling of the same file, and a symlink to it.
  const std::string spelled = (dir_ / "hf" / ".." / "victim.safetensors").string();
  expect_refusal_keeping(gpt({"attention", "--checkpoint", ck, "--prompt", "ba", "--svg", spelled}),
                         {"--svg " + spelled, "--checkpoint"}, ck, before);
  fs::create_symlink(ck, path("link.safetensors"));
  expect_refusal_keeping(gpt({"eval", "--checkpoint", ck, "--metrics-out", path("link.safetensors")}),
                         {"--metrics-out " + path("link.safetensors") + " names the file --checkpoint reads"}, ck,
                         before);
  expect_refusal_keeping(gpt({"eval", "--checkpoint", ck, "--metrics-out", ck}), {"--metrics-out " + ck}, ck, before);

  const std::string rev = victim("rev.safetensors", "victim_rev.safetensors"), rev_before = slurp(rev);
  const std::vector<std::string> tokens = {"1", "2", "3", "4"};
  for (const std::string& svg : {rev, path("rev_link.safetensors")}) {
    if (svg != rev) fs::create_symlink(rev, svg);
    std::vector<std::string> args = {"predict", "--checkpoint", rev, "--attention-svg", svg};
    args.insert(args.end(), tokens.begin(), tokens.end());
    expect_refusal_keeping(reverse(args), {"--attention-svg " + svg + " names the file --checkpoint reads"}, rev,
                           rev_before);
  }
  // The check passes what it should: an output of its own is written.
  std::vector<std::string> args = {"predict", "--checkpoint", rev, "--attention-svg", path("att.svg")};
  args.insert(args.end(), tokens.begin(), tokens.end());
  EXPECT_EQ(reverse(args).status, 0);
  EXPECT_THAT(slurp(path("att.svg")), HasSubstr("<svg"));
  EXPECT_EQ(gpt({"attention", "--checkpoint", ck, "--prompt", "ba", "--svg", path("att2.svg")}).status, 0);
  EXPECT_THAT(slurp(path("att2.svg")), HasSubstr("<svg"));
}

TEST_F(Refusals, EvalMetricsNeverReplaceTheDataItScores) {
  const std::string data = victim("text.txt", "victim_data.txt"), before = slurp(data);
  expect_refusal_keeping(gpt({"eval", "--checkpoint", path("text.safetensors"), "--data", data, "--metrics-out", data}),
                         {"--metrics-out " + data + " names the file --data reads"}, data, before);
  // Without --data eval reads the checkpoint's own data: the words the lines model was trained on.
  const std::string words = path("words.txt"), words_before = slurp(words);
  expect_refusal_keeping(gpt({"eval", "--checkpoint", path("lines.safetensors"), "--metrics-out", words}),
                         {"--metrics-out " + words + " names the checkpoint's --data (" + words + ")"}, words,
                         words_before);
  EXPECT_EQ(gpt({"eval", "--checkpoint", path("lines.safetensors"), "--metrics-out", path("m.jsonl")}).status, 0);
}

TEST_F(Refusals, ImportNeverReplacesTheConfigJsonBesideHf) {
  const std::string config = path("hf/config.json"), before = slurp(config);
  ASSERT_THAT(before, HasSubstr("n_head"));
  expect_refusal_keeping(gpt({"import", "--hf", path("hf/model.safetensors"), "--out", config, "--tokenizer", "char",
                              "--data", path("text.txt")}),
                         {"--out " + config + " names the config.json beside --hf"}, config, before);
}

// ------------------------------------------------------------------------------ one line, whatever the input holds
TEST_F(Refusals, UserTextWithNewlinesAndNulsStaysOnOneLine) {
  expect_refusal(gpt({"sample", "--checkpoint", path("lines.safetensors"), "--prompt", "ba\nko", "--num", "1"}),
                 {"--prompt 'ba\\nko': the character '\\n' (U+000A)"});
  expect_refusal(gpt({"attention", "--checkpoint", path("text.safetensors"), "--prompt", "ba\nko\n!"}),
                 {"--prompt 'ba\\nko\\n!'"});
  // (a tensor outside model.* and optim.*: an extra model.* one is refused first by the weights' count)
  expect_refusal(gpt({"sample", "--checkpoint", with_tensor("evil\nsecond line\nthird", "newline.safetensors"),
                      "--num", "1"}),
                 {"unexpected tensor 'evil\\nsecond line\\nthird'"});
  expect_refusal(gpt({"sample", "--checkpoint",
                      with_tensor(std::string("\xE2\x80\xAE\0evil", 8), "nul_name.safetensors"), "--num", "1"}),
                 {"unexpected tensor '\\u202E\\0evil'"});
  expect_refusal(gpt({"eval", "--checkpoint", with_config("data", "/nonexistent\nsecond line", "newline_data.safetensors")}),
                 {"the checkpoint's --data /nonexistent\\nsecond line"});
  write(dir_ / "nul.txt", std::string("basa\nb\0a\nkone\n", 14));
  expect_refusal(gpt({"eval", "--checkpoint", path("lines.safetensors"), "--data", path("nul.txt")}),
                 {"--data " + path("nul.txt") + ": line 2: character '\\0' (U+0000) is not in the tokenizer's"});
}

TEST_F(Refusals, AHugeValueIsCutAndTheLineKeepsItsEnd) {
  const std::string prompt(100'000, 'z');  // 'z' is not in the model's vocabulary
  const CliResult a = gpt({"attention", "--checkpoint", path("text.safetensors"), "--prompt", prompt});
  expect_refusal(a, {"--prompt 'zzzz", "...' (100000 bytes): the character 'z' (U+007A)"});
  EXPECT_LT(a.err.size(), 1200u);
  const CliResult name = gpt({"sample", "--checkpoint",
                              with_tensor("junk." + std::string(2 << 20, 'N'), "long_name.safetensors")});
  expect_refusal(name, {"long_name.safetensors"});
  EXPECT_LT(name.err.size(), 1200u) << name.err.substr(0, 2000);
  const CliResult data = gpt({"eval", "--checkpoint", with_config("data", std::string(1 << 20, 'D'),
                                                                  "long_data.safetensors")});
  expect_refusal(data, {"the checkpoint's --data DDDD", "(cut: "});
  EXPECT_LT(data.err.size(), 1200u) << data.err.substr(0, 2000);
}

// ------------------------------------------------------------------------------ refusals name the flag and the file
TEST_F(Refusals, BadDataNamesTheFlagAndTheFile) {
  write(dir_ / "only_nl.txt", "\n\n\n\n");
  write(dir_ / "bad_utf8.txt", "hello\nw\xffrld\nabc\n");
  const CliResult empty = gpt({"train", "--data", path("only_nl.txt"), "--steps", "2", "--quiet"});
  expect_refusal(empty, {"--data " + path("only_nl.txt") + ": lines mode needs at least 2 non-empty lines"});
  EXPECT_THAT(empty.err, Not(HasSubstr("make_text_corpus")));
  const std::string utf8 = "--data " + path("bad_utf8.txt") + ": invalid UTF-8 at byte offset 7";
  expect_refusal(gpt({"train", "--data", path("bad_utf8.txt"), "--steps", "2", "--quiet"}), {utf8});
  expect_refusal(gpt({"eval", "--checkpoint", path("lines.safetensors"), "--data", path("bad_utf8.txt")}), {utf8});
  expect_refusal(gpt({"import", "--hf", path("hf/model.safetensors"), "--out", path("imported.safetensors"),
                      "--tokenizer", "char", "--data", path("bad_utf8.txt")}),
                 {utf8});
  expect_refusal(gpt({"eval", "--checkpoint", path("lines.safetensors"), "--data", path("missing.txt")}),
                 {"--data " + path("missing.txt") + ": "});
}

TEST_F(Refusals, DecodeChecksEveryIdBeforeWritingAByte) {
  // Ids 257..99999 are a gap between the one merge and the special token: in range, and no token.
  write(dir_ / "gap.model", "minbpe v1\n\\p{L}+|\\s+|.\n1\n<|endoftext|> 100000\n32 116\n");
  std::string ids;
  for (int i = 0; i < 5000; ++i) ids += "65 ";
  write(dir_ / "ids.txt", ids + "500\n");
  expect_refusal(gpt({"tokenize", "decode", "--tokenizer", "bpe:" + path("gap.model"), "--data", path("ids.txt")}),
                 {"--data '" + path("ids.txt") + "': id 5001 is 500, which is no token of --tokenizer bpe:"});
  write(dir_ / "ids.txt", ids + "100000\n");
  const CliResult good = gpt({"tokenize", "decode", "--tokenizer", "bpe:" + path("gap.model"), "--data", path("ids.txt")});
  EXPECT_EQ(good.status, 0) << good.err;
  EXPECT_EQ(good.out, std::string(5000, 'A') + "<|endoftext|>");
}

// ------------------------------------------------------------------------------ bad output paths, before any work
TEST_F(Refusals, AnOutputPathThatCannotBeWrittenIsRefusedBeforeAnyWork) {
  const std::string long_name(300, 'x');
  const CliResult train = gpt({"train", "--data", path("words.txt"), "--steps", "300", "--eval-every", "300",
                               "--d-model", "16", "--heads", "2", "--layers", "1", "--batch-size", "4", "--samples",
                               "0", "--save", long_name});
  expect_refusal(train, {"--save " + long_name + ": its file name is 300 bytes, more than the 255"});
  // 240 bytes fit a name, not the temporary file written beside it first.
  const std::string near(240, 'y');
  expect_refusal(gpt({"attention", "--checkpoint", path("text.safetensors"), "--prompt", "ba", "--svg", near}),
                 {"--svg " + near + ": its file name is 240 bytes: with the 22 of the temporary file"});
  expect_refusal(gpt({"tokenize", "train", "--vocab-size", "260", "--data", path("text.txt"), "--out", long_name}),
                 {"--out " + long_name});
  // /proc takes no new file, whatever its mode bits tell root: refused before every setting is trained.
  expect_refusal(reverse({"sweep", "--epochs", "1", "--train-size", "64", "--test-size", "16", "--plot",
                          "/proc/version"}),
                 {"--plot /proc/version: "});
  expect_refusal(gpt({"eval", "--checkpoint", path("text.safetensors"), "--metrics-out", path("nodir/m.jsonl")}),
                 {"--metrics-out " + path("nodir/m.jsonl") + ": its directory " + path("nodir") + " does not exist"});
  for (const auto& entry : fs::directory_iterator(dir_))  // the check's trial file is gone
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp."))) << entry.path();
}

}  // namespace
