// Incremental greedy decoding (cached keys and values) against the readable full re-decoding.
#include "core/autograd.h"
#include "models/reverse/greedy.h"
#include "test_util.h"

namespace cppgrad {
namespace {

nn::Seq2SeqTransformer make_model(nn::CrossAttentionKind cross, bool pre_ln, std::int64_t vocab_out, std::uint64_t seed) {
  Generator gen(seed);
  return nn::Seq2SeqTransformer({.src_vocab = 8, .tgt_vocab = 10, .out_vocab = vocab_out, .d_model = 16, .n_heads = 2,
                                 .n_encoder_layers = 2, .n_decoder_layers = 2, .d_ff = 24, .max_len = 12,
                                 .norm_first = pre_ln, .cross_attention = cross},
                                gen);
}

TEST(Greedy, IncrementalDecodingPredictsExactlyWhatFullDecodingPredicts) {
  // Untrained models: their predictions are arbitrary, so agreement is a strict check.
  const data::ReversalConfig fixed{.vocab = 8, .min_len = 6, .max_len = 6};
  const data::ReversalConfig variable{.vocab = 8, .min_len = 2, .max_len = 6};
  for (auto cross : {nn::CrossAttentionKind::ScaledDot, nn::CrossAttentionKind::Additive,
                     nn::CrossAttentionKind::Multiplicative})
    for (bool pre_ln : {false, true})
      for (const auto& cfg : {fixed, variable}) {
        nn::Seq2SeqTransformer model = make_model(cross, pre_ln, cfg.output_vocab(), 3);
        model.eval();
        Generator gen(9);
        Tensor src = Tensor::randint(1, 8, {16, 6}, gen);
        Tensor mask;
        if (cfg.variable_length()) {
          src.slice(1, 4, 6).fill_(0.0);  // rows padded after 4 tokens
          mask = Tensor::zeros({16, 1, 1, 6}, DType::Bool);
          mask.slice(3, 0, 4).fill_(1.0);
        }
        EXPECT_EQ(reverse::greedy_decode(model, src, mask, cfg).to_vector<std::int64_t>(),
                  reverse::greedy_decode_full(model, src, mask, cfg).to_vector<std::int64_t>())
            << nn::cross_attention_name(cross) << (pre_ln ? " pre-LN" : " post-LN")
            << (cfg.variable_length() ? " variable" : " fixed");
      }
}

}  // namespace
}  // namespace cppgrad
