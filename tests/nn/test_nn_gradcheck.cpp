// A float64 gradient check for every module, with and without masks: inputs and every parameter.
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;
using test::leaf;
using test::random_ids;
using Inputs = std::vector<Tensor>;

// [B, 1, 1, Lk] key padding: batch 0 sees all keys, batch 1 only the first `keep`.
Tensor padding_mask(std::int64_t Lk, std::int64_t keep) {
  return key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({Lk, keep}, {2}), Lk);
}

TEST(GradCheck, LinearModule) {
  Generator gen(1);
  Linear lin({.in = 3, .out = 4}, gen);
  EXPECT_MODULE_GRADCHECK(lin, (Inputs{leaf({2, 3}, 1)}), [&](const Inputs& in) { return lin.forward(in[0]); });
}

TEST(GradCheck, LinearModuleWithoutBias) {
  Generator gen(2);
  Linear lin({.in = 3, .out = 2, .bias = false}, gen);
  EXPECT_MODULE_GRADCHECK(lin, (Inputs{leaf({2, 2, 3}, 2)}), [&](const Inputs& in) { return lin.forward(in[0]); });
}

TEST(GradCheck, EmbeddingModule) {
  Generator gen(3);
  Embedding emb(5, 3, gen);
  Tensor ids = Tensor::from_vector<std::int64_t>({0, 4, 4, 2}, {2, 2});
  EXPECT_MODULE_GRADCHECK(emb, Inputs{}, [&](const Inputs&) { return emb.forward(ids); });
}

TEST(GradCheck, LayerNormModule) {
  LayerNorm norm(4);
  EXPECT_MODULE_GRADCHECK(norm, (Inputs{leaf({3, 4}, 4, -2, 2)}), [&](const Inputs& in) { return norm.forward(in[0]); });
}

TEST(GradCheck, FeedForwardRelu) {
  Generator gen(5);
  FeedForward ffn({.d_model = 3, .d_ff = 5}, gen);
  EXPECT_MODULE_GRADCHECK(ffn, (Inputs{leaf({2, 3}, 5)}), [&](const Inputs& in) { return ffn.forward(in[0]); });
}

TEST(GradCheck, FeedForwardGelu) {
  Generator gen(6);
  FeedForward ffn({.d_model = 3, .d_ff = 4, .activation = Activation::Gelu}, gen);
  EXPECT_MODULE_GRADCHECK(ffn, (Inputs{leaf({2, 3}, 6)}), [&](const Inputs& in) { return ffn.forward(in[0]); });
}

TEST(GradCheck, FeedForwardWithDropoutInTraining) {
  Generator gen(7);
  auto dgen = std::make_shared<Generator>(0);
  FeedForward ffn({.d_model = 3, .d_ff = 6, .dropout = 0.3}, gen, dgen);
  // Re-seed before each evaluation so every forward draws the same mask.
  EXPECT_MODULE_GRADCHECK(ffn, (Inputs{leaf({2, 3}, 7)}), [&](const Inputs& in) {
    dgen->manual_seed(11);
    return ffn.forward(in[0]);
  });
}

TEST(GradCheck, ScaledDotProductAttention) {
  EXPECT_GRADCHECK([](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).output; },
                   (Inputs{leaf({2, 3, 4}, 8), leaf({2, 5, 4}, 9), leaf({2, 5, 3}, 10)}));
}

TEST(GradCheck, ScaledDotProductAttentionWeights) {
  EXPECT_GRADCHECK([](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).weights; },
                   (Inputs{leaf({2, 3, 4}, 11), leaf({2, 5, 4}, 12), leaf({2, 5, 3}, 13)}));
}

TEST(GradCheck, ScaledDotProductAttentionCausalMask) {
  Tensor mask = causal_mask(4);
  EXPECT_GRADCHECK([mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                   (Inputs{leaf({2, 2, 4, 3}, 14), leaf({2, 2, 4, 3}, 15), leaf({2, 2, 4, 3}, 16)}));
}

TEST(GradCheck, ScaledDotProductAttentionKeyPadding) {
  Tensor mask = padding_mask(5, 3).squeeze(1);  // [B, 1, Lk]
  EXPECT_GRADCHECK([mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                   (Inputs{leaf({2, 3, 4}, 17), leaf({2, 5, 4}, 18), leaf({2, 5, 2}, 19)}));
}

TEST(GradCheck, SelfAttention) {
  Generator gen(20);
  SelfAttention attn({.d_model = 4, .d_k = 3, .d_v = 2}, gen);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 3, 4}, 20)}), [&](const Inputs& in) { return attn.forward(in[0]).output; });
}

TEST(GradCheck, SelfAttentionMasked) {
  Generator gen(21);
  SelfAttention attn({.d_model = 4, .d_k = 3, .d_v = 3}, gen);
  Tensor mask = causal_mask(3);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 3, 4}, 21)}),
                          [&](const Inputs& in) { return attn.forward(in[0], mask).output; });
}

TEST(GradCheck, CausalSelfAttention) {
  Generator gen(22);
  CausalSelfAttention attn({.d_model = 4, .n_heads = 2}, gen);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 3, 4}, 22)}), [&](const Inputs& in) { return attn.forward(in[0]).output; });
}

TEST(GradCheck, MultiHeadAttentionSelf) {
  Generator gen(23);
  MultiHeadAttention mha({.d_model = 4, .n_heads = 2}, gen);
  EXPECT_MODULE_GRADCHECK(mha, (Inputs{leaf({2, 3, 4}, 23)}),
                          [&](const Inputs& in) { return mha.forward(in[0], in[0], in[0]).output; });
}

TEST(GradCheck, MultiHeadAttentionCausalSelf) {
  Generator gen(24);
  MultiHeadAttention mha({.d_model = 4, .n_heads = 2}, gen);
  Tensor mask = causal_mask(3);
  EXPECT_MODULE_GRADCHECK(mha, (Inputs{leaf({2, 3, 4}, 24)}),
                          [&](const Inputs& in) { return mha.forward(in[0], in[0], in[0], mask).output; });
}

TEST(GradCheck, MultiHeadAttentionCrossWithPadding) {
  // Lq = 2 queries against Lk = 4 keys, the second batch's last key padded away.
  Generator gen(25);
  MultiHeadAttention mha({.d_model = 4, .n_heads = 2}, gen);
  Tensor mask = padding_mask(4, 3);
  EXPECT_MODULE_GRADCHECK(mha, (Inputs{leaf({2, 2, 4}, 25), leaf({2, 4, 4}, 26)}),
                          [&](const Inputs& in) { return mha.forward(in[0], in[1], in[1], mask).output; });
}

TEST(GradCheck, AdditiveAttention) {
  Generator gen(27);
  AdditiveAttention attn({.d_query = 3, .d_key = 4, .d_hidden = 2}, gen);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 1, 3}, 27), leaf({2, 4, 4}, 28), leaf({2, 4, 2}, 29)}),
                          [&](const Inputs& in) { return attn.attend(in[0], in[1], in[2]).output; });
}

TEST(GradCheck, AdditiveAttentionMaskedSeveralQueries) {
  Generator gen(30);
  AdditiveAttention attn({.d_query = 3, .d_key = 3, .d_hidden = 2}, gen);
  Tensor mask = padding_mask(4, 2);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 2, 3}, 30), leaf({2, 4, 3}, 31), leaf({2, 4, 2}, 32)}),
                          [&](const Inputs& in) { return attn.attend(in[0], in[1], in[2], mask).output; });
}

TEST(GradCheck, MultiplicativeAttention) {
  Generator gen(33);
  MultiplicativeAttention attn({.d_query = 3, .d_key = 4}, gen);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 1, 3}, 33), leaf({2, 4, 4}, 34), leaf({2, 4, 2}, 35)}),
                          [&](const Inputs& in) { return attn.attend(in[0], in[1], in[2]).output; });
}

TEST(GradCheck, MultiplicativeAttentionMaskedSeveralQueries) {
  Generator gen(36);
  MultiplicativeAttention attn({.d_query = 3, .d_key = 3}, gen);
  Tensor mask = padding_mask(4, 2);
  EXPECT_MODULE_GRADCHECK(attn, (Inputs{leaf({2, 3, 3}, 36), leaf({2, 4, 3}, 37), leaf({2, 4, 2}, 38)}),
                          [&](const Inputs& in) { return attn.attend(in[0], in[1], in[2], mask).output; });
}

TEST(GradCheck, TransformerEncoderLayer) {
  Generator gen(39);
  TransformerEncoderLayer layer({.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 3, 4}, 39)}), [&](const Inputs& in) { return layer.forward(in[0]); });
}

TEST(GradCheck, TransformerEncoderLayerPreLNWithPadding) {
  Generator gen(40);
  TransformerEncoderLayer layer({.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
  Tensor mask = padding_mask(3, 2);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 3, 4}, 40)}), [&](const Inputs& in) { return layer.forward(in[0], mask); });
}

TEST(GradCheck, TransformerDecoderLayer) {
  Generator gen(41);
  TransformerDecoderLayer layer({.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 3, 4}, 41), leaf({2, 4, 4}, 42)}),
                          [&](const Inputs& in) { return layer.forward(in[0], in[1]); });
}

TEST(GradCheck, TransformerDecoderLayerPreLNWithMemoryPadding) {
  Generator gen(43);
  TransformerDecoderLayer layer({.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
  Tensor mask = padding_mask(4, 2);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 3, 4}, 43), leaf({2, 4, 4}, 44)}),
                          [&](const Inputs& in) { return layer.forward(in[0], in[1], Tensor(), mask); });
}

TEST(GradCheck, TransformerDecoderLayerAdditiveCross) {
  Generator gen(45);
  TransformerDecoderLayer layer({.d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Additive}, gen);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 2, 4}, 45), leaf({2, 3, 4}, 46)}),
                          [&](const Inputs& in) { return layer.forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
}

TEST(GradCheck, TransformerDecoderLayerMultiplicativeCross) {
  Generator gen(47);
  TransformerDecoderLayer layer(
      {.d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Multiplicative}, gen);
  EXPECT_MODULE_GRADCHECK(layer, (Inputs{leaf({2, 2, 4}, 47), leaf({2, 3, 4}, 48)}),
                          [&](const Inputs& in) { return layer.forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
}

// The whole model, end to end through the loss: every embedding, layer and the output projection.
void check_seq2seq(CrossAttentionKind cross, PositionalKind positional, std::uint64_t seed) {
  Generator gen(seed);
  Seq2SeqTransformer model({.src_vocab = 5, .tgt_vocab = 6, .out_vocab = 5, .d_model = 4, .n_heads = 2,
                            .n_encoder_layers = 1, .n_decoder_layers = 1, .d_ff = 6, .max_len = 4,
                            .cross_attention = cross, .positional = positional},
                           gen);
  Tensor src = random_ids({2, 3}, 1, 5, seed), dec_in = random_ids({2, 3}, 1, 6, seed + 1);
  Tensor tgt = random_ids({2, 3}, 0, 5, seed + 2);
  EXPECT_MODULE_GRADCHECK(model, Inputs{}, [&](const Inputs&) { return cross_entropy(model.forward(src, dec_in), tgt); });
}

TEST(GradCheck, Seq2SeqTransformer) { check_seq2seq(CrossAttentionKind::ScaledDot, PositionalKind::Learned, 50); }
TEST(GradCheck, Seq2SeqTransformerAdditive) { check_seq2seq(CrossAttentionKind::Additive, PositionalKind::Learned, 51); }
TEST(GradCheck, Seq2SeqTransformerMultiplicative) {
  check_seq2seq(CrossAttentionKind::Multiplicative, PositionalKind::Sinusoidal, 52);
}

}  // namespace
}  // namespace cppgrad
