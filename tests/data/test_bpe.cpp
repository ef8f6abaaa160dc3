// BpeTokenizer (data/bpe.h) on tokenizers trained here: byte round trips, special tokens, misuse, and the .model
// file (minbpe's format) written, read back byte-identical, and refused when hostile.
#include <fmt/format.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/bpe.h"
#include "hostile_bpe_models.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::BpeTokenizer;
using Ids = std::vector<std::int64_t>;

const std::string kText =
    "In the beginning God created the heaven and the earth. And the earth was without form, and void; and "
    "darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters.\n"
    "And God said, Let there be light: and there was light. 1234 I'm HE'S caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\n";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(BpeTokenizer, TrainGivesVocabSizeTokensAndRoundTrips) {
  const auto tok = BpeTokenizer::train(kText, 300);
  EXPECT_EQ(tok.size(), 300);
  EXPECT_EQ(tok.num_merges(), 44);
  EXPECT_EQ(tok.split_pattern(), data::kGpt4SplitPattern);
  const Ids ids = tok.encode(kText);
  EXPECT_LT(ids.size(), kText.size() / 2);  // the merges compress the text they were learned from
  EXPECT_EQ(tok.decode(ids), kText);
}

TEST(BpeTokenizer, TrainTellsItsProgressAfterEachMerge) {
  std::vector<std::pair<std::int64_t, std::int64_t>> told;
  const auto tok = BpeTokenizer::train(kText, 300, data::kGpt4SplitPattern, {},
                                       [&](std::int64_t done, std::int64_t total) { told.emplace_back(done, total); });
  std::vector<std::pair<std::int64_t, std::int64_t>> expected;
  for (std::int64_t done = 1; done <= 44; ++done) expected.emplace_back(done, 44);
  EXPECT_EQ(told, expected);
  EXPECT_EQ(tok.ranks().merges(), BpeTokenizer::train(kText, 300).ranks().merges());  // the same merges without it
}

TEST(BpeTokenizer, AnyBytesRoundTripInvalidUtf8Included) {
  const auto tok = BpeTokenizer::train(kText, 320);
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes(static_cast<std::size_t>(rng() % 80), '\0');
    for (char& c : bytes) c = static_cast<char>(trial % 2 ? rng() : "the ea\xC3\xA9\xFF\x80 "[rng() % 11]);
    EXPECT_EQ(tok.decode(tok.encode(bytes)), bytes);
  }
  // Invalid bytes are pieces of their own: never merged with valid neighbours, whatever the merges say.
  std::string a50b(50, 'a');
  a50b += 'b';
  const auto ab = BpeTokenizer::train(a50b, 258, R"(\p{L}+)");  // learns "aa" (256), "aaaa" (257)
  EXPECT_EQ(ab.encode("aa\xFF" "aa"), (Ids{256, 0xFF, 256}));
}

TEST(BpeTokenizer, SpecialTokensAreTokensInEncodeAndTextInEncodeOrdinary) {
  const auto tok = BpeTokenizer::train(kText, 280, data::kGpt4SplitPattern, {"<|endoftext|>", "<|end|>"});
  EXPECT_EQ(tok.size(), 282);
  EXPECT_EQ(tok.special_id("<|endoftext|>"), 280);
  EXPECT_EQ(tok.special_id("<|end|>"), 281);
  const std::string text = "the<|end|>earth<|endoftext|><|endoftext|>";
  const Ids ids = tok.encode(text);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 280), 2);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 281), 1);
  EXPECT_EQ(tok.decode(ids), text);
  const Ids ordinary = tok.encode_ordinary(text);
  EXPECT_EQ(std::count_if(ordinary.begin(), ordinary.end(), [](auto id) { return id >= 280; }), 0);
  EXPECT_EQ(tok.decode(ordinary), text);
  // The longest special token wins where two start at the same place.
  const auto nested = BpeTokenizer::train(kText, 260, data::kGpt4SplitPattern, {"<|e", "<|end|>"});
  EXPECT_EQ(nested.encode("<|end|>"), (Ids{261}));
}

TEST(BpeTokenizer, CopiesShareTheCompiledPatternAndEncodeFromManyThreads) {
  const auto tok = BpeTokenizer::train(kText, 300);
  const Ids expected = tok.encode(kText);
  const BpeTokenizer copy = tok;  // the copy shares the compiled split pattern, which is never written after compiling
  std::vector<Ids> got(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) got[t] = (t % 2 ? copy : tok).encode(kText);
    });
  for (auto& thread : threads) thread.join();
  for (const Ids& ids : got) EXPECT_EQ(ids, expected);
}

TEST(BpeTokenizer, MisuseIsRefusedWithAMessageToActOn) {
  EXPECT_THROW_MSG(BpeTokenizer::train(kText, 100), std::invalid_argument, "vocab_size 100 must be at least 256");
  EXPECT_THROW_MSG(BpeTokenizer::train("ab", 300), std::invalid_argument,
                   "no pairs left to merge after 1 merges: vocab_size 300 needs 44 merges; use a smaller vocab_size");
  const auto tok = BpeTokenizer::train(kText, 260, data::kGpt4SplitPattern, {"<|endoftext|>"});
  EXPECT_THROW_MSG(tok.decode(Ids{1, 261}), std::invalid_argument, "id 261 is outside the vocabulary [0, 261) (at index 1)");
  EXPECT_THROW_MSG(tok.decode(Ids{-1}), std::invalid_argument, "id -1");
  EXPECT_THROW_MSG(BpeTokenizer(data::BpeRanks(), data::kGpt2SplitPattern, {{"<s>", 12}}), std::invalid_argument,
                   "special token '<s>' has id 12: must be in [256, 2^31)");
}

TEST(BpeTokenizer, SaveLoadRoundTripIsByteIdentical) {
  test::TempDir dir;
  const auto tok = BpeTokenizer::train(kText, 300, data::kGpt4SplitPattern, {"<|endoftext|>"});
  const auto path = (dir.path / "kjv.model").string();
  tok.save(path);
  const std::string written = read_file(path);
  EXPECT_TRUE(written.starts_with("minbpe v1\n" + std::string(data::kGpt4SplitPattern) + "\n1\n<|endoftext|> 300\n"));
  const auto loaded = BpeTokenizer::load(path);
  EXPECT_EQ(loaded.encode(kText), tok.encode(kText));
  EXPECT_EQ(loaded.special_tokens(), tok.special_tokens());
  const auto again = (dir.path / "again.model").string();
  loaded.save(again);
  EXPECT_EQ(read_file(again), written);
}

TEST(BpeTokenizer, ReadsAMinbpeFileWithSpecialIdsAfterAGap) {
  // As minbpe's register_special_tokens leaves them (GPT-4's ids on a small tokenizer): the ids between are no token.
  const auto tok = BpeTokenizer::from_model_text("minbpe v1\n\\p{L}+|\\s\n1\n<|endoftext|> 100257\n97 97\n256 97\n");
  EXPECT_EQ(tok.size(), 100258);
  EXPECT_EQ(tok.encode("aaa<|endoftext|>"), (Ids{257, 100257}));
  EXPECT_THROW_MSG(tok.decode(Ids{300}), std::invalid_argument, "id 300 is no token");
  EXPECT_EQ(tok.to_model_text(), "minbpe v1\n\\p{L}+|\\s\n1\n<|endoftext|> 100257\n97 97\n256 97\n");
}

void expect_refused(const std::string& text, const std::string& why) {
  SCOPED_TRACE(text);
  EXPECT_THROW_MSG(BpeTokenizer::from_model_text(text, "bad.model"), std::runtime_error, why);
}

TEST(BpeTokenizer, AHostileModelFileIsRefusedNamingTheLine) {
  expect_refused("", "bad.model:1: the file ends where the header 'minbpe v1' should be");
  expect_refused("minbpe v2\nx\n0\n", "bad.model:1: not a minbpe .model file");
  expect_refused("minbpe v1\n", "bad.model:2: the file ends where the split pattern should be");
  expect_refused("minbpe v1\n(ab\n0\n", "bad.model:2: split pattern '(ab' does not compile");
  expect_refused("minbpe v1\nx\n-1\n", "bad.model:3: '-1' is not a number of special tokens");
  expect_refused("minbpe v1\nx\n99999999999999999999\n", "bad.model:3:");
  expect_refused("minbpe v1\nx\n1000000000\n1 2\n", "bad.model:3: '1000000000' is not a number of special tokens the "
                                                    "file holds (1 line follows)");
  expect_refused("minbpe v1\nx\n1\n<s>\n", "bad.model:4: expected a special token as '<text> <id>'");
  expect_refused("minbpe v1\nx\n1\n<s> 5\n", "bad.model:4: special token '<s>' has id 5: must be in [256, 2^31)");
  expect_refused("minbpe v1\nx\n2\n<s> 300\n<t> 300\n",
                 "bad.model:5: special token '<t>' 300 repeats the text or id of '<s>' 300");
  expect_refused("minbpe v1\nx\n0\n97 98\n256 257\n", "bad.model:5: expected a merge '<left> <right>' of two token ids "
                                                      "below 257");
  expect_refused("minbpe v1\nx\n0\n97 98\n97 98\n", "bad.model:5: the merge 97 98 is already learned above");
  expect_refused("minbpe v1\nx\n0\n97  98\n", "bad.model:4: expected a merge");
  expect_refused("minbpe v1\nx\n0\n97 98 99\n", "bad.model:4: expected a merge");
  expect_refused("minbpe v1\nx\n0\n97 0x62\n", "bad.model:4: expected a merge");
  // numbers as minbpe writes them: a padded id would let a line grow toward the file's bounds without saying more
  expect_refused("minbpe v1\nx\n0\n97 0098\n", "bad.model:4: expected a merge");
  expect_refused("minbpe v1\nx\n0\n+97 98\n", "bad.model:4: expected a merge");
  expect_refused("minbpe v1\nx\n01\n<s> 300\n", "bad.model:3: '01' is not a number of special tokens");
  expect_refused("minbpe v1\nx\n1\n<s> 0300\n", "bad.model:4:");
  expect_refused("minbpe v1\nx\n0\n\n", "bad.model:4: expected a merge");
  EXPECT_THROW_MSG(BpeTokenizer::load("/nonexistent/dir/tok.model"), std::runtime_error, "/nonexistent/dir/tok.model");
}

// A file of a few hundred bytes once made the reader build 2^41 bytes of tokens, one of 390 KB a quadratic 1.5 GB,
// and 100,000 special tokens took 50 s (each compared with every other). Each is refused (or read) at the cost of
// its size, naming the line and the bound.
TEST(BpeTokenizer, AModelFileCannotMakeMoreThanItsSizeBounds) {
  const std::string doubling = test::doubling_model(40);
  EXPECT_LT(doubling.size(), 400u);
  expect_refused(doubling, "bad.model:16: the merge 267 267 makes a token of 8192 bytes, more than the 4096 a token "
                           "may hold (GPT-2's longest has 128)");
  const std::string growing = test::growing_model(50'000);
  expect_refused(growing, fmt::format("bad.model:1965: the tokens so far hold 1927921 bytes in all, more than the "
                                      "1927644 a model file of {} bytes may make", growing.size()));
  const std::string wide = test::wide_model(60'000);
  EXPECT_THROW_MSG(BpeTokenizer::from_model_text(wide, "bad.model"), std::runtime_error,
                   fmt::format("bytes in all, more than the {} a model file of {} bytes may make",
                               data::max_bpe_token_bytes_total(wide.size()), wide.size()));
  expect_refused("minbpe v1\nx\n1\n" + std::string(300, 'S') + " 256\n",
                 "bad.model:4: a special token of 300 bytes, more than the 256 one may have");
  expect_refused("minbpe v1\n" + std::string(5000, 'a') + "\n0\n",
                 "bad.model:2: the split pattern has 5000 bytes, more than the 4096 a pattern may have");
  // At the bounds, a file is read: 4096-byte tokens, and 100,000 special tokens.
  const BpeTokenizer chain = BpeTokenizer::from_model_text(test::doubling_model(12), "chain.model");
  EXPECT_TRUE(chain.token_bytes(256 + 11) == std::string(4096, 'a'));
  const BpeTokenizer specials = BpeTokenizer::from_model_text(test::many_specials_model(100'000), "specials.model");
  EXPECT_EQ(specials.size(), 256 + 100'000);
  EXPECT_EQ(specials.special_id("<s99999>"), 256 + 99'999);
  // Lines beyond what a BPE of kMaxBpeTokens holds are refused before any is read.
  EXPECT_THROW_MSG(BpeTokenizer::from_model_text(test::model_header() + std::string(data::kMaxBpeTokens, '\n'), "m"),
                   std::runtime_error, "m: 1000003 lines, more than a BPE of at most 1000000 tokens holds");
}

TEST(BpeTokenizer, ARepeatedSpecialTokenIsFoundAmongManyNamingBoth) {
  std::string text = test::model_header(50'000);
  for (int i = 0; i < 49'999; ++i) text += fmt::format("<s{}> {}\n", i, 256 + i);
  text += "<last> 257\n";  // <s1>'s id
  expect_refused(text, "bad.model:50003: special token '<last>' 257 repeats the text or id of '<s1>' 257");
}

TEST(BpeTokenizer, WhatMinbpesFormatCannotHoldIsRefusedOnSave) {
  const auto spaced = BpeTokenizer::train(kText, 256, " ?\\p{L}+");
  EXPECT_THROW_MSG(spaced.to_model_text(), std::invalid_argument, "must be one line of at most 4096 bytes without space at either end");
  const auto special = BpeTokenizer::train(kText, 256, data::kGpt4SplitPattern, {"<end of text>"});
  EXPECT_THROW_MSG(special.to_model_text(), std::invalid_argument, "special token '<end of text>' holds white space");
  // What load would refuse is refused on save: 13 merges of a run of 16,384 letters make a token of 8,192 bytes.
  const auto runs = BpeTokenizer::train(std::string(16384, 'a'), 256 + 13);
  EXPECT_THROW_MSG(runs.to_model_text(), std::invalid_argument,
                   "BPE save: token 268 holds 8192 bytes, more than the 4096 a .model file may hold");
  EXPECT_NO_THROW(BpeTokenizer::train(std::string(16384, 'a'), 256 + 12).to_model_text());
}

}  // namespace
}  // namespace cppgrad
