// Batches for next-token training, checked element by element on small hand-made examples: lines padded with -1
// targets after the closing <b>, text windows shifted by one, random rows in range and reproducible.
#include <vector>

#include "data/token_batch.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using Ids = std::vector<std::int64_t>;

Tensor ids(const Ids& values, std::int64_t rows, std::int64_t cols) {
  return Tensor::from_vector<std::int64_t>(values, {rows, cols});
}

void expect_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), DType::Int64);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.to_double_vector(), want.to_double_vector());
}

TEST(LinesBatch, ReadsBoundaryThenCharactersAndPredictsCharactersThenBoundary) {
  const std::vector<Ids> lines = {{1, 2}, {3}, {2, 2, 1}};
  const auto b = data::lines_batch(lines, {2, 1, 0}, 4);
  expect_equal(b.idx, ids({0, 2, 2, 1,    //  <b> c1 c2 c3     (a line of T - 1 characters fills the row)
                           0, 3, 0, 0,    //  <b> c1, then padding (0: never a target)
                           0, 1, 2, 0}, 3, 4));
  expect_equal(b.targets, ids({2, 2, 1, 0,     // c1 c2 c3 <b>
                               3, 0, -1, -1,   // c1 <b>, then ignored
                               1, 2, 0, -1}, 3, 4));
  EXPECT_EQ(b.tokens, 4 + 2 + 3);
}

TEST(LinesBatch, RefusesARowOutOfRangeAndALineLongerThanTheContextAllows) {
  const std::vector<Ids> lines = {{1, 2}, {3, 3, 3}};
  EXPECT_THROW_MSG(data::lines_batch(lines, {2}, 4), std::invalid_argument, "row 2 is outside [0, 2)");
  EXPECT_THROW_MSG(data::lines_batch(lines, {0, 1}, 3), std::invalid_argument, "line 1 has 3 tokens; context 3 holds at most 2");
  EXPECT_THROW_MSG(data::lines_batch(lines, {0}, 0), std::invalid_argument, "context must be positive");
}

TEST(TextBatch, TargetsAreTheWindowShiftedByOne) {
  const Ids tokens = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const auto b = data::text_batch(tokens, {0, 5}, 4);  // 5 = size - T - 1: the last start with T + 1 tokens
  expect_equal(b.idx, ids({10, 11, 12, 13, 15, 16, 17, 18}, 2, 4));
  expect_equal(b.targets, ids({11, 12, 13, 14, 16, 17, 18, 19}, 2, 4));
  EXPECT_EQ(b.tokens, 8);
  EXPECT_THROW_MSG(data::text_batch(tokens, {6}, 4), std::invalid_argument, "cannot start at 6 in 10 tokens");
  EXPECT_THROW_MSG(data::text_batch(tokens, {-1}, 4), std::invalid_argument, "cannot start at -1");
}

TEST(RandomRows, DrawsInRangeReproduciblyAsGeneratorRandintDoes) {
  Generator a(5), b(5), c(6);
  const auto rows = data::random_rows(7, 1000, a);
  ASSERT_EQ(rows.size(), 1000u);
  std::vector<int> seen(7, 0);
  for (const auto r : rows) {
    ASSERT_GE(r, 0);
    ASSERT_LT(r, 7);
    ++seen[static_cast<std::size_t>(r)];
  }
  for (const int n : seen) EXPECT_GT(n, 100);  // about 143 each: all of [0, 7) is reached
  const auto again = data::random_rows(7, 1000, b);
  EXPECT_EQ(rows, again);
  EXPECT_NE(rows, data::random_rows(7, 1000, c));
  Generator d(5);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(rows[i], d.randint(0, 7));  // the same draws words_pytorch.py makes
  EXPECT_THROW_MSG(data::random_rows(0, 4, a), std::invalid_argument, "nothing to draw from");
}

TEST(EvalWindowStarts, NonOverlappingWindowsThatEachHaveTheirNextToken) {
  EXPECT_EQ(data::eval_window_starts(10, 3), (Ids{0, 3, 6}));  // 6 + 3 + 1 = 10
  EXPECT_EQ(data::eval_window_starts(9, 3), (Ids{0, 3}));
  EXPECT_EQ(data::eval_window_starts(3, 3), Ids{});
  EXPECT_EQ(data::eval_window_starts(4, 3), Ids{0});
}

}  // namespace
}  // namespace cppgrad
