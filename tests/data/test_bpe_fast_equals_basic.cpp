// The fast BPE (train_bpe_merges, BpeRanks::encode_piece behind BpeTokenizer) against the readable one
// (data/bpe_basic.h) on random and real text: the same merges in the same order, the same ids. And proof that the
// comparison can fail: a wrong tie-break and a wrong merge order give answers these assertions reject.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "data/bpe.h"
#include "data/bpe_basic.h"
#include "data/bpe_train.h"
#include "data/utf8.h"
#include "test_util.h"

namespace cppgrad {
namespace {

namespace bb = data::bpe_basic;
using data::BpeTokenizer;
using Ids = std::vector<std::int64_t>;

// The committed excerpt (tests/golden/tokenizer/, the King James Bible's Genesis 1-3: 11 KB of real English).
std::string genesis() {
  const auto path = std::filesystem::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "tokenizer" / "kjv_genesis_1-3.txt";
  return data::read_text_file(path.string());
}

// Text over a few letters, spaces and a newline, so that many pairs tie in count.
std::string random_text(std::mt19937& rng, std::size_t n) {
  static const std::string alphabet = "aabbc d\n\xC3\xA9";
  std::string s(n, ' ');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

std::vector<std::string> chunks_of(const std::string& text, std::string_view pattern) {
  std::vector<std::string> chunks;
  for (const auto piece : data::TextSplitter(pattern).pieces(text)) chunks.emplace_back(piece);
  return chunks;
}

std::vector<data::BpeMerge> fast_merges(const std::vector<std::string>& chunks, std::int64_t n) {
  return data::train_bpe_merges(std::vector<std::string_view>(chunks.begin(), chunks.end()), n);
}

std::vector<data::BpeMerge> as_fast(const std::vector<bb::Merge>& merges) {
  std::vector<data::BpeMerge> out;
  for (const auto& m : merges) out.push_back({m.pair.first, m.pair.second});
  return out;
}

// The readable encoder, piece by piece, with the tokenizer's byte ids and merges.
Ids basic_encode(const BpeTokenizer& tok, std::string_view text) {
  bb::MergeTable merges;
  for (std::size_t r = 0; r < tok.ranks().merges().size(); ++r)
    merges[{tok.ranks().merges()[r].left, tok.ranks().merges()[r].right}] = static_cast<bb::Id>(256 + r);
  Ids out;
  for (const auto piece : data::TextSplitter(tok.split_pattern()).pieces(text)) {
    Ids ids;
    for (const char c : piece) ids.push_back(tok.ranks().byte_ids()[static_cast<unsigned char>(c)]);
    const Ids merged = bb::encode(ids, merges);
    out.insert(out.end(), merged.begin(), merged.end());
  }
  return out;
}

TEST(BpeFastEqualsBasic, TrainingLearnsTheSameMergesOnRandomText) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    const std::string text = random_text(rng, 200 + rng() % 400);
    const auto chunks = chunks_of(text, trial % 2 ? data::kGpt4SplitPattern : data::kGpt2SplitPattern);
    const std::int64_t n = 1 + rng() % 40;
    std::vector<bb::Merge> basic;
    try {
      basic = bb::train(chunks, n);
    } catch (const std::invalid_argument&) {  // ran out of pairs: the fast one must too
      EXPECT_THROW(fast_merges(chunks, n), std::invalid_argument);
      continue;
    }
    EXPECT_EQ(fast_merges(chunks, n), as_fast(basic));
  }
}

TEST(BpeFastEqualsBasic, TrainingLearnsTheSameMergesOnRealText) {
  const std::string text = genesis();
  for (const auto pattern : {data::kGpt4SplitPattern, data::kGpt2SplitPattern}) {
    const auto chunks = chunks_of(text, pattern);
    EXPECT_EQ(fast_merges(chunks, 150), as_fast(bb::train(chunks, 150)));
  }
  const std::vector<std::string> whole{text};  // minbpe's BasicTokenizer: no split at all
  EXPECT_EQ(fast_merges(whole, 60), as_fast(bb::train(whole, 60)));
}

// The pair counts of the chunks as they stand before the last of the merges (each chunk encoded with the others).
bb::PairCounts counts_before_last(const std::vector<std::string>& chunks, const std::vector<bb::Merge>& merges) {
  const bb::MergeTable table = bb::merge_table(std::vector<bb::Merge>(merges.begin(), merges.end() - 1));
  bb::PairCounts counts;
  for (const auto& chunk : chunks) bb::get_stats(bb::encode(bb::bytes_to_ids(chunk), table), counts);
  return counts;
}

// Late in a long training on random text nearly every pair is as rare as the others (count 1 or 2), so each merge
// is chosen among hundreds of ties by first occurrence alone: a wrong tie order, or a first occurrence gone stale as
// the tokens before it merge, gives other merges here.
TEST(BpeFastEqualsBasic, TrainingLearnsTheSameMergesThroughHundredsOfTies) {
  std::mt19937 rng(11);
  std::string text(6000, ' ');
  for (char& c : text) c = "abcd e"[rng() % 6];
  // Both run out of pairs soon after (1458 and 1081 merges); all but the first ~300 merges tie at count 1 or 2.
  const std::vector<std::pair<std::vector<std::string>, std::int64_t>> cases = {
      {chunks_of(text, data::kGpt4SplitPattern), 1000},  // 6 KB in ~1000 pieces
      {{text.substr(0, 2500)}, 800},                     // one chunk: no split at all
  };
  for (const auto& [chunks, n] : cases) {
    SCOPED_TRACE(chunks.size());
    const auto basic = bb::train(chunks, n);
    EXPECT_EQ(fast_merges(chunks, n), as_fast(basic));
    // The case is what it claims: the last merge's pair is one of many that occur as rarely, at most twice.
    const bb::PairCounts counts = counts_before_last(chunks, basic);
    const std::int64_t last = counts.count.at(basic.back().pair);
    EXPECT_LE(last, 2);
    EXPECT_GT(std::count_if(counts.count.begin(), counts.count.end(), [&](const auto& c) { return c.second == last; }),
              100);
  }
}

TEST(BpeFastEqualsBasic, EncodingGivesTheSameIdsOnRandomAndRealText) {
  const std::string text = genesis();
  const auto tok = BpeTokenizer::train(text, 256 + 300);
  EXPECT_EQ(tok.encode_ordinary(text), basic_encode(tok, text));
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes = text.substr(rng() % (text.size() - 200), 150);
    for (int k = 0; k < 5; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());  // some invalid UTF-8
    EXPECT_EQ(tok.encode_ordinary(bytes), basic_encode(tok, bytes));
  }
  // Pieces longer than 256 bytes take the heap-based kernel.
  std::string word;
  for (int k = 0; k < 2000; ++k) word += "thegodearth"[rng() % 11];
  EXPECT_EQ(tok.encode_ordinary(word), basic_encode(tok, word));
  EXPECT_EQ(tok.encode_ordinary(std::string(5000, 'e')), basic_encode(tok, std::string(5000, 'e')));
}

// ---- the comparison catches wrong answers ----

// A wrong tie-break: of equally frequent pairs, the one seen LAST.
std::vector<bb::Merge> train_last_seen_wins(const std::vector<std::string>& chunks, std::int64_t n) {
  std::vector<bb::Id> ids = bb::bytes_to_ids(chunks.at(0));
  std::vector<bb::Merge> merges;
  for (std::int64_t i = 0; i < n; ++i) {
    bb::PairCounts counts;
    bb::get_stats(ids, counts);
    bb::Pair best = counts.first_seen.at(0);
    for (const auto& pair : counts.first_seen)
      if (counts.count.at(pair) >= counts.count.at(best)) best = pair;  // >=: the later pair takes a tie
    ids = bb::merge(ids, best, 256 + i);
    merges.push_back({best, 256 + i});
  }
  return merges;
}

TEST(BpeFastEqualsBasic, AWrongTieBreakIsCaught) {
  const std::vector<std::string> whole{genesis()};
  const auto wrong = train_last_seen_wins(whole, 60);
  EXPECT_NE(fast_merges(whole, 60), as_fast(wrong));
  EXPECT_EQ(fast_merges(whole, 60), as_fast(bb::train(whole, 60)));
}

TEST(BpeFastEqualsBasic, AWrongMergeOrderIsCaught) {
  const std::string text = genesis();
  const auto tok = BpeTokenizer::train(text, 256 + 300);
  // The same merges applied latest-learned first: a different tokenizer, which the equality rejects.
  bb::MergeTable reversed;
  for (std::size_t r = 0; r < tok.ranks().merges().size(); ++r)
    reversed[{tok.ranks().merges()[r].left, tok.ranks().merges()[r].right}] =
        static_cast<bb::Id>(256 + tok.num_merges() - 1 - r);
  Ids wrong;
  for (const auto piece : data::TextSplitter(tok.split_pattern()).pieces(text)) {
    const Ids merged = bb::encode(bb::bytes_to_ids(piece), reversed);
    wrong.insert(wrong.end(), merged.begin(), merged.end());
  }
  EXPECT_NE(tok.encode_ordinary(text), wrong);
}

}  // namespace
}  // namespace cppgrad
