// data/corpus_rows.h: what a trainer does with lines and with a running text, one overload per shape, worked out by
// hand on tiny corpora.
#include "data/corpus_rows.h"

#include "test_util.h"

namespace cppgrad {
namespace {

using Ids = std::vector<std::int64_t>;

TEST(CorpusRows, LinesDrawLinesAndCountEachLinesCharactersAndItsBoundary) {
  const data::Lines s{.train = {{1, 2, 3}, {2}}, .val = {{3, 1}}, .longest_line = 3};
  EXPECT_EQ(data::random_row_count(s, 4), 2);
  EXPECT_EQ(data::eval_rows(s, data::Split::validation, 4), Ids{0});
  EXPECT_EQ(data::eval_rows(s, data::Split::train, 4), (Ids{0, 1}));
  const data::TokenBatch b = data::batch(s, data::Split::validation, {0}, 4);
  EXPECT_EQ(b.tokens, 3);  // 3, 1 and the closing <b>
  EXPECT_EQ(data::split_size(s, data::Split::train), 2);
  EXPECT_STREQ(data::split_unit(s), "lines");
}

TEST(CorpusRows, RunningTextDrawsWindowStartsAndCountsTPerWindow) {
  const data::RunningText s{.train = {0, 1, 2, 3, 4, 5, 6}, .val = {6, 5, 4, 3, 2}};
  EXPECT_EQ(data::random_row_count(s, 3), 4);  // starts 0..3: each window has its T + 1 tokens
  EXPECT_EQ(data::eval_rows(s, data::Split::validation, 2), (Ids{0, 2}));
  const data::TokenBatch b = data::batch(s, data::Split::train, {3}, 3);
  EXPECT_EQ(b.tokens, 3);
  EXPECT_EQ(b.idx.data<std::int64_t>()[0], 3);
  EXPECT_EQ(b.targets.data<std::int64_t>()[2], 6);
  EXPECT_EQ(data::split_size(s, data::Split::validation), 5);
  EXPECT_STREQ(data::split_unit(s), "characters");
}

}  // namespace
}  // namespace cppgrad
