// Stop 6 (docs/learn.md): the reversal model. Read nn/seq2seq.h (encode, decode) and data/reversal.h (src, target,
// dec_in), then the reversal model's plain_step (train/reversal_step.cpp).
//
// Question: the decoder is trained on the target itself (teacher forcing). Why can it not simply copy it? Because
// its input is the target shifted right, [BOS] + target[:-1], and its self-attention is causal: the logits at
// position t see target tokens before t only.
// Exercise: make the decoder input from a target, and check it against the data's own dec_in.
#include <cstdint>
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// target: one row's tokens -> [BOS] + target[:-1]
std::vector<std::int64_t> decoder_input(const std::vector<std::int64_t>& target, std::int64_t bos) {
  if constexpr (kPlantedWrong) return target;  // the mistake: the decoder is shown the answer it must predict
  std::vector<std::int64_t> in{bos};
  in.insert(in.end(), target.begin(), target.end() - 1);
  return in;
}

TEST(Stop6, TheDecoderInputIsTheTargetShiftedRight) {
  const data::ReversalConfig config{.vocab = 10, .min_len = 5, .max_len = 5};
  const data::ReversalSet set = data::make_set(config, {{1, 2, 3, 4, 5}, {9, 9, 1, 8, 2}});
  for (std::int64_t row = 0; row < set.size(); ++row) {
    const std::vector<std::int64_t> target = set.target.select(0, row).to_vector<std::int64_t>();
    EXPECT_EQ(decoder_input(target, config.bos()), set.dec_in.select(0, row).to_vector<std::int64_t>());
  }
  EXPECT_EQ(set.target.select(0, 0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{5, 4, 3, 2, 1}));
}

TEST(Stop6, ThePredictionAtPositionZeroSeesOnlyBOS) {
  Generator gen(0);
  const nn::Seq2SeqTransformer model({.src_vocab = 10, .tgt_vocab = 11, .out_vocab = 10, .d_model = 16,
                                      .n_heads = 2, .d_ff = 32, .max_len = 8}, gen);
  const Tensor src = Tensor::from_vector<std::int64_t>({1, 2, 3, 4}, {1, 4});
  const Tensor a = model.forward(src, Tensor::from_vector<std::int64_t>({10, 4, 3, 2}, {1, 4}));
  const Tensor b = model.forward(src, Tensor::from_vector<std::int64_t>({10, 7, 7, 7}, {1, 4}));
  EXPECT_EQ(a.select(1, 0).to_vector<float>(), b.select(1, 0).to_vector<float>());
}

}  // namespace
}  // namespace cppgrad::learn
