// The reversal data: targets are reversals, the decoder input is shifted, train and test never share a
// sequence, everything follows the seed, bad configurations are refused with a reason.
#include <algorithm>
#include <set>

#include "data/reversal.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::ReversalConfig;

TEST(ReversalData, FixedLengthTensorsAreReversalsWithAShiftedDecoderInput) {
  ReversalConfig c{.vocab = 10, .min_len = 5, .max_len = 5, .train_size = 50, .test_size = 20, .seed = 1};
  const auto d = data::make_reversal_data(c);
  ASSERT_EQ(d.train.src.shape(), (Shape{50, 5}));
  ASSERT_EQ(d.train.target.shape(), (Shape{50, 5}));
  for (std::int64_t i = 0; i < 50; ++i)
    for (std::int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(d.train.target.at({i, j}), d.train.src.at({i, 4 - j}));
      EXPECT_GE(d.train.src.at({i, j}), 1);
      EXPECT_LE(d.train.src.at({i, j}), 9);
      EXPECT_EQ(d.train.dec_in.at({i, j}), j == 0 ? 10.0 : d.train.target.at({i, j - 1}));
    }
}

TEST(ReversalData, TrainAndTestNeverShareASequence) {
  // A small space (4^3 = 64 sequences) makes collisions certain unless they are prevented.
  ReversalConfig c{.vocab = 5, .min_len = 3, .max_len = 3, .train_size = 40, .test_size = 10, .seed = 2};
  const auto d = data::make_reversal_data(c);
  const std::set<std::vector<std::int64_t>> train(d.train.sequences.begin(), d.train.sequences.end());
  std::set<std::vector<std::int64_t>> test;
  for (const auto& s : d.test.sequences) {
    EXPECT_FALSE(train.count(s));
    EXPECT_TRUE(test.insert(s).second) << "test sequences are distinct";
  }
}

TEST(ReversalData, SameSeedSameDataOtherSeedOtherData) {
  ReversalConfig c{.train_size = 30, .test_size = 10, .seed = 7};
  EXPECT_EQ(data::make_reversal_data(c).train.sequences, data::make_reversal_data(c).train.sequences);
  ReversalConfig other = c;
  other.seed = 8;
  EXPECT_NE(data::make_reversal_data(c).train.sequences, data::make_reversal_data(other).train.sequences);
}

TEST(ReversalData, VariableLengthsArePaddedAndEndWithEos) {
  ReversalConfig c{.vocab = 6, .min_len = 2, .max_len = 5, .train_size = 100, .test_size = 10, .seed = 3};
  const auto d = data::make_reversal_data(c);
  EXPECT_EQ(c.eos(), 7);
  EXPECT_EQ(c.decoder_vocab(), 8);
  EXPECT_EQ(c.output_vocab(), 8);  // ids 0..7: EOS = 7 must be a class
  ASSERT_EQ(d.train.target.shape(), (Shape{100, 6}));
  std::set<std::size_t> lengths;
  for (std::int64_t i = 0; i < 100; ++i) {
    const auto& s = d.train.sequences[i];
    const std::int64_t L = static_cast<std::int64_t>(s.size());
    lengths.insert(s.size());
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_EQ(d.train.src.at({i, j}), j < L ? s[j] : data::kPad);
    for (std::int64_t j = 0; j < L; ++j) EXPECT_EQ(d.train.target.at({i, j}), s[L - 1 - j]);
    EXPECT_EQ(d.train.target.at({i, L}), c.eos());
    for (std::int64_t j = L + 1; j < 6; ++j) EXPECT_EQ(d.train.target.at({i, j}), data::kPad);
  }
  EXPECT_EQ(lengths, (std::set<std::size_t>{2, 3, 4, 5}));
  data::Batch b = data::gather_batch(d.train, {0, 1}, /*with_mask=*/true);
  EXPECT_EQ(b.src_mask.shape(), (Shape{2, 1, 1, 5}));
  for (std::int64_t j = 0; j < 5; ++j)
    EXPECT_EQ(b.src_mask.at({0, 0, 0, j}) != 0, j < static_cast<std::int64_t>(d.train.sequences[0].size()));
}

TEST(ReversalData, EpochOrderIsAReproduciblePermutationThatChangesPerEpoch) {
  const auto a = data::epoch_order(100, 5, 0), b = data::epoch_order(100, 5, 0), c = data::epoch_order(100, 5, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  const auto batches = data::batch_rows(a, 32);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches.back().size(), 4u);
}

TEST(ReversalData, BadConfigurationsSayWhy) {
  EXPECT_THROW_MSG(data::make_reversal_data({.vocab = 2}), std::invalid_argument, "vocab must be at least 3");
  EXPECT_THROW_MSG(data::make_reversal_data({.min_len = 5, .max_len = 3}), std::invalid_argument,
                   "1 <= min-len <= max-len");
  EXPECT_THROW_MSG(data::make_reversal_data({.vocab = 3, .min_len = 2, .max_len = 2, .train_size = 10, .test_size = 4}),
                   std::invalid_argument, "only 4 distinct sequences exist");
  EXPECT_THROW_MSG(data::make_set({.vocab = 5, .min_len = 3, .max_len = 3}, {{1, 7, 2}}), std::invalid_argument,
                   "token 7 is outside the vocabulary 1..4");
  // Extremes that would overflow the index arithmetic (eos = vocab + 1, i * length + j) are refused first; under
  // UBSan (the sanitizer stage) any overflow on the way would fail this test.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW_MSG(data::make_reversal_data({.vocab = kMax}), std::invalid_argument, "vocab must be at most 2^40");
  EXPECT_THROW_MSG(data::make_reversal_data({.min_len = 1, .max_len = kMax}), std::invalid_argument,
                   "max-len must be at most 2^20");
  EXPECT_THROW_MSG(data::make_reversal_data({.train_size = kMax, .test_size = kMax}), std::invalid_argument,
                   "more than 2^40 tokens");
  EXPECT_THROW_MSG(data::make_reversal_data({.max_len = 1 << 20, .train_size = 1 << 30}), std::invalid_argument,
                   "more than 2^40 tokens");
}

}  // namespace
}  // namespace cppgrad
