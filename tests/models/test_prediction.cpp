// models/reverse/prediction.h: predictions as a person reads them (cut at PAD, or at EOS with variable lengths), the
// predict command's words checked against a model's vocabulary and lengths, and the lines eval and predict print.
#include <stdexcept>

#include "models/reverse/config.h"
#include "models/reverse/prediction.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(Prediction, TokensTextListsTheTokens) {
  EXPECT_EQ(reverse::tokens_text({1, 3, 5}), "[1, 3, 5]");
  EXPECT_EQ(reverse::tokens_text({7}), "[7]");
  EXPECT_EQ(reverse::tokens_text({}), "[]");
}

TEST(Prediction, AReadableRowStopsAtPadAndWithVariableLengthsAtEos) {
  const data::ReversalConfig fixed{.vocab = 10, .min_len = 4, .max_len = 4};
  const data::ReversalConfig variable{.vocab = 10, .min_len = 2, .max_len = 4};  // EOS = 11
  // Row 0: 4 3 11 0; row 1: 2 0 5 6 (a PAD inside: what follows it is not read).
  const Tensor pred = Tensor::from_vector(std::vector<std::int64_t>{4, 3, 11, 0, 2, 0, 5, 6}, {2, 4});
  EXPECT_EQ(reverse::readable_row(pred, 0, variable), (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(reverse::readable_row(pred, 0, fixed), (std::vector<std::int64_t>{4, 3, 11}));  // no EOS in fixed runs
  EXPECT_EQ(reverse::readable_row(pred, 1, fixed), (std::vector<std::int64_t>{2}));
}

TEST(Prediction, ParseSequenceTakesIntegersInTheVocabularyAndTheLengths) {
  const data::ReversalConfig c{.vocab = 10, .min_len = 2, .max_len = 4};
  EXPECT_EQ(reverse::parse_sequence({"1", "9", "5"}, c), (std::vector<std::int64_t>{1, 9, 5}));
  const auto refusal = [&](const std::vector<std::string>& words) {
    try {
      reverse::parse_sequence(words, c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal({"1", "x2"}), "predict: 'x2' is not a token (an integer) or a known flag");
  EXPECT_EQ(refusal({"1", "10"}), "token 10 is outside this model's vocabulary 1..9");
  EXPECT_EQ(refusal({"0", "1"}), "token 0 is outside this model's vocabulary 1..9");
  EXPECT_EQ(refusal({"1"}), "this model reverses sequences of length 2..4, got 1");
  EXPECT_EQ(refusal({"1", "2", "3", "4", "5"}), "this model reverses sequences of length 2..4, got 5");
  const data::ReversalConfig fixed{.vocab = 10, .min_len = 3, .max_len = 3};
  EXPECT_THROW(reverse::parse_sequence({"1", "2"}, fixed), std::invalid_argument);
}

TEST(Prediction, TheLinesSayWhetherTheOutputIsTheReversal) {
  EXPECT_EQ(reverse::prediction_line({1, 2, 3}, {3, 2, 1}), "[1, 2, 3] -> [3, 2, 1]  (correct)\n");
  EXPECT_EQ(reverse::prediction_line({1, 2, 3}, {1, 2, 3}), "[1, 2, 3] -> [1, 2, 3]  (expected [3, 2, 1])\n");
  EXPECT_EQ(reverse::example_line({4, 5}, {5, 4}), "  [4, 5] -> [5, 4]  ok\n");
  EXPECT_EQ(reverse::example_line({4, 5}, {5}), "  [4, 5] -> [5]  WRONG, expected [5, 4]\n");
}

TEST(Prediction, PredictOneDecodesASequenceAsABatchOfOne) {
  reverse::TrainConfig config;
  config.model.d_model = 16, config.model.n_heads = 2, config.model.d_ff = 24, config.min_len = 2, config.max_len = 5;
  const data::ReversalConfig c = config.data_config();
  Generator gen(3);
  nn::Seq2SeqTransformer model(config.model_options(), gen);
  model.eval();
  const reverse::Prediction p = reverse::predict_one(model, {3, 1, 4}, c);
  EXPECT_EQ(p.tokens, (std::vector<std::int64_t>{3, 1, 4}));
  EXPECT_EQ(p.batch.src.shape()[0], 1);
  EXPECT_EQ(p.batch.src.shape()[1], 5);  // padded to max_len
  EXPECT_TRUE(p.batch.src_mask.defined());
  ASSERT_EQ(p.predictions.shape()[0], 1);
  EXPECT_EQ(p.output, reverse::readable_row(p.predictions, 0, c));
  EXPECT_LE(std::ssize(p.output), p.predictions.shape()[1]);
}

}  // namespace
}  // namespace cppgrad
