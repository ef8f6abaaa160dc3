// The count-based bigram baseline: add-one smoothed probabilities worked out by hand, rows that sum to 1, mean NLL
// by hand, the validation loss at the positions the GPT's loss counts, and a synthetic corpus whose loss is known.
#include <cmath>
#include <string>
#include <vector>

#include "data/bigram.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::BigramModel;
using Ids = std::vector<std::int64_t>;

// Lines "ab" and "b" with <b> = 0, a = 1, b = 2 (V = 3): pairs (0,1) (1,2) (2,0) (0,2) (2,0), so the rows count
// n(0) = 2, n(1) = 1, n(2) = 2.
BigramModel tiny() {
  BigramModel m(3);
  m.count(data::with_boundaries({1, 2}));
  m.count(data::with_boundaries({2}));
  return m;
}

TEST(Bigram, AddOneSmoothingByHand) {
  const auto m = tiny();
  EXPECT_DOUBLE_EQ(m.probability(2, 0), (2.0 + 1) / (2 + 3));  // seen twice
  EXPECT_DOUBLE_EQ(m.probability(0, 1), (1.0 + 1) / (2 + 3));
  EXPECT_DOUBLE_EQ(m.probability(1, 0), (0.0 + 1) / (1 + 3));  // never seen: the smoothing's share
  EXPECT_DOUBLE_EQ(m.probability(1, 1), 1.0 / 4);
  EXPECT_EQ(data::with_boundaries({1, 2}), (Ids{0, 1, 2, 0}));
}

TEST(Bigram, EachRowIsADistributionOverTheNextToken) {
  auto m = tiny();
  m.count({2, 2, 2, 1, 0, 0});
  BigramModel empty(5);
  for (const BigramModel* model : {&m, &empty})
    for (std::int64_t t = 0; t < model->vocab(); ++t) {
      double sum = 0;
      for (std::int64_t n = 0; n < model->vocab(); ++n) sum += model->probability(t, n);
      EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << t;
    }
  EXPECT_DOUBLE_EQ(empty.probability(3, 4), 1.0 / 5);  // nothing counted: uniform
}

TEST(Bigram, MeanNllByHand) {
  const auto m = tiny();
  // [0, 1, 2, 0]: P(1|0) = 2/5, P(2|1) = 2/4, P(0|2) = 3/5; [2]: no pair; [1, 0]: P(0|1) = 1/4.
  const double want = -(std::log(0.4) + std::log(0.5) + std::log(0.6) + std::log(0.25)) / 4;
  EXPECT_DOUBLE_EQ(m.mean_nll({{0, 1, 2, 0}, {2}, {1, 0}}), want);
  EXPECT_DOUBLE_EQ(m.mean_nll_stream({0, 1, 2, 0}), -(std::log(0.4) + std::log(0.5) + std::log(0.6)) / 3);
  EXPECT_THROW_MSG(m.mean_nll({{1}, {}}), std::invalid_argument, "no (token, next) pair");
}

TEST(Bigram, RefusesIdsOutsideTheVocabularyWithoutCountingAnything) {
  BigramModel m(3);
  EXPECT_THROW_MSG(m.count({0, 1, 3}), std::invalid_argument, "BigramModel::count: token 3 is outside the vocabulary [0, 3)");
  EXPECT_DOUBLE_EQ(m.probability(0, 1), 1.0 / 3);  // the pair (0, 1) before the bad id was not counted
  EXPECT_THROW_MSG(m.probability(-1, 0), std::invalid_argument, "token -1");
  EXPECT_THROW_MSG(BigramModel(0), std::invalid_argument, "vocab must be in [1, 2^31], got 0");
}

TEST(Bigram, ValLossCountsEveryLineTargetIncludingTheClosingBoundary) {
  data::TextCorpus lines;
  lines.tokenizer = data::CharTokenizer::from_text(U"ab", true);
  lines.splits = data::Lines{.train = {{1, 2}, {2}}, .val = {{1}}};
  // [0, 1, 0]: P(1|0) = 2/5, and the closing <b>, P(0|1) = 1/4.
  EXPECT_DOUBLE_EQ(data::bigram_val_loss(lines), -(std::log(0.4) + std::log(0.25)) / 2);

  data::TextCorpus text;
  text.tokenizer = data::CharTokenizer::from_text(U"ab", false);
  text.splits = data::RunningText{.train = {0, 1, 1, 0},  // n(0) = 1, n(1) = 2; n(1,0) = 1, n(0,0) = 0
                                  .val = {1, 0, 0}};      // P(0|1) = 2/4, P(0|0) = 1/3
  EXPECT_DOUBLE_EQ(data::bigram_val_loss(text), -(std::log(0.5) + std::log(1.0 / 3)) / 2);
}

TEST(Bigram, ValLossOnASyntheticCorpusApproachesItsEntropy) {
  // Lines from a known chain: after <b>, 'a' or 'b' with 1/2 each; after a letter, the other letter or the end of
  // the line with 1/2 each. Every step has entropy ln 2, so the fitted bigram's validation loss must come out near
  // 0.693 nats (smoothing moves it by a hair at these counts), far below the uniform ln 3.
  Generator gen(11);
  std::string text;
  for (int line = 0; line < 4000; ++line) {
    char c = gen.uniform() < 0.5 ? 'a' : 'b';
    text += c;
    while (gen.uniform() < 0.5) text += (c = c == 'a' ? 'b' : 'a');
    text += '\n';
  }
  const auto corpus = data::make_text_corpus(text, {.seed = 1});
  EXPECT_NEAR(data::bigram_val_loss(corpus), std::log(2.0), 0.02);

  // Running text that repeats "abc": every next character is certain, so the loss is nearly 0.
  std::string abc;
  for (int i = 0; i < 1000; ++i) abc += "abc";
  const auto stream = data::make_text_corpus(abc, {.format = data::TextFormat::text, .context = 8});
  EXPECT_GT(data::bigram_val_loss(stream), 0.0);
  EXPECT_LT(data::bigram_val_loss(stream), 0.01);  // -log((n + 1) / (n + 3)) with n about 900
}

}  // namespace
}  // namespace cppgrad
