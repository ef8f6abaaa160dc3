// The readable BPE (data/bpe_basic.h): minbpe's worked example, its pieces one by one, and the tie-break.
#include <string>
#include <vector>

#include "data/bpe_basic.h"
#include "test_util.h"

namespace cppgrad {
namespace {

namespace bb = data::bpe_basic;
using Ids = std::vector<bb::Id>;

TEST(BpeBasic, MinbpeWorkedExampleAaabdaaabac) {
  // minbpe's tests/test_tokenizer.py and Wikipedia's BPE example: three merges, then encode the training text.
  const std::string text = "aaabdaaabac";
  const auto merges = bb::train({text}, 3);
  EXPECT_EQ(merges, (std::vector<bb::Merge>{{{97, 97}, 256}, {{256, 97}, 257}, {{257, 98}, 258}}));
  const Ids ids = bb::encode(bb::bytes_to_ids(text), bb::merge_table(merges));
  EXPECT_EQ(ids, (Ids{258, 100, 258, 97, 99}));
  EXPECT_EQ(bb::decode(ids, bb::vocab(merges)), text);
}

TEST(BpeBasic, GetStatsCountsOverlappingPairsInFirstSeenOrder) {
  bb::PairCounts counts;
  bb::get_stats(Ids{1, 2, 3, 1, 2}, counts);
  bb::get_stats(Ids{7, 7, 7}, counts);  // overlapping: (7,7) twice
  EXPECT_EQ(counts.first_seen, (std::vector<bb::Pair>{{1, 2}, {2, 3}, {3, 1}, {7, 7}}));
  EXPECT_EQ(counts.count.at({1, 2}), 2);
  EXPECT_EQ(counts.count.at({7, 7}), 2);
  EXPECT_EQ(counts.count.at({3, 1}), 1);
}

TEST(BpeBasic, MergeJoinsLeftToRightWithoutOverlap) {
  EXPECT_EQ(bb::merge(Ids{1, 1, 1}, {1, 1}, 4), (Ids{4, 1}));
  EXPECT_EQ(bb::merge(Ids{1, 1, 1, 1}, {1, 1}, 4), (Ids{4, 4}));
  EXPECT_EQ(bb::merge(Ids{5, 6, 2, 5, 6}, {5, 6}, 9), (Ids{9, 2, 9}));
  EXPECT_EQ(bb::merge(Ids{}, {5, 6}, 9), Ids{});
}

TEST(BpeBasic, TieBreakPicksThePairSeenFirst) {
  // "cdab": (c,d), (d,a), (a,b) each once; the first seen, (c,d), wins, not the smallest (a,b).
  const auto merges = bb::train({"cdab"}, 1);
  EXPECT_EQ(merges[0].pair, (bb::Pair{'c', 'd'}));
  // Counted over chunks in order: "xy" in the second chunk is seen after "ab" in the first.
  EXPECT_EQ(bb::train({"ab", "xy"}, 1)[0].pair, (bb::Pair{'a', 'b'}));
  EXPECT_EQ(bb::train({"xy", "ab"}, 1)[0].pair, (bb::Pair{'x', 'y'}));
  // A more frequent pair beats an earlier one.
  EXPECT_EQ(bb::train({"ab xyxy"}, 1)[0].pair, (bb::Pair{'x', 'y'}));
}

TEST(BpeBasic, EncodeAppliesTheEarliestLearnedMergeFirst) {
  // Learned: (b,c) -> 256, then (a,b) -> 257. "abc" must become a + (bc), not (ab) + c, although (a,b) comes first.
  const auto merges = bb::merge_table({{{'b', 'c'}, 256}, {{'a', 'b'}, 257}});
  EXPECT_EQ(bb::encode(bb::bytes_to_ids("abc"), merges), (Ids{'a', 256}));
  EXPECT_EQ(bb::encode(bb::bytes_to_ids("abd"), merges), (Ids{257, 'd'}));
}

TEST(BpeBasic, TrainRefusesWhenThePairsRunOut) {
  EXPECT_THROW_MSG(bb::train({"ab"}, 2), std::invalid_argument, "no pairs left to merge after 1 merges");
  EXPECT_THROW_MSG(bb::decode(Ids{256}, bb::vocab({})), std::invalid_argument, "id 256 is outside the vocabulary");
}

}  // namespace
}  // namespace cppgrad
