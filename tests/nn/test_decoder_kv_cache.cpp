// The reversal transformer's decoder on the KV cache (nn/kv_cache.h, TransformerDecoderLayer::forward_cached,
// Seq2SeqTransformer::decode_step): the cached outputs equal the full forward's at every position, fed token by token
// or in chunks, for every cross-attention kind, post-LN and pre-LN; and the refusals.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "nn/seq2seq.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;

// A [B, 1, 1, S] key-padding mask: row b sees its first S - b keys.
Tensor padding_mask(std::int64_t B, std::int64_t S) {
  Tensor mask = Tensor::ones({B, 1, 1, S}, DType::Bool);
  for (std::int64_t b = 1; b < B; ++b) mask.select(0, b).slice(2, S - b, S).fill_(0.0);
  return mask;
}

// float64 runs the reference kernels on both paths, so only the rows' lengths differ: rounding far below 1e-12.
TEST(DecoderKVCache, CachedLayerEqualsTheFullForwardInChunks) {
  for (auto cross : {CrossAttentionKind::ScaledDot, CrossAttentionKind::Additive, CrossAttentionKind::Multiplicative})
    for (bool pre_ln : {false, true}) {
      Generator gen(11);
      TransformerDecoderLayer layer({.d_model = 8, .n_heads = 2, .d_ff = 12, .norm_first = pre_ln,
                                     .cross_attention = cross},
                                    gen);
      layer.to(DType::Float64);
      const Tensor x = Tensor::randn({3, 7, 8}, gen, DType::Float64);
      const Tensor memory = Tensor::randn({3, 5, 8}, gen, DType::Float64);
      const Tensor mask = padding_mask(3, 5);
      Tensor want;
      {
        NoGradGuard no_grad;
        want = layer.forward(x, memory, Tensor(), mask);  // [3, 7, 8], causal
      }
      const std::string name = std::string(cross_attention_name(cross)) + (pre_ln ? " pre-LN" : " post-LN");
      for (const std::vector<std::int64_t>& chunks : {std::vector<std::int64_t>(7, 1), {3, 1, 2, 1}, {7}}) {
        KVCache cache(1, 3, 2, 7, 4, DType::Float64);
        const MultiHeadAttention::KeyValues memory_kv = layer.project_memory(memory);
        Tensor got = Tensor::zeros({3, 7, 8}, DType::Float64);
        for (std::int64_t t : chunks) {
          const std::int64_t at = cache.length;
          got.slice(1, at, at + t)
              .copy_(layer.forward_cached(x.slice(1, at, at + t), memory, mask, memory_kv, cache.layers[0], at));
          cache.length = at + t;
        }
        EXPECT_LE(test::max_abs_diff(got, want), 1e-12) << name << ", " << chunks.size() << " chunks";
      }
    }
}

std::unique_ptr<Seq2SeqTransformer> make_model(CrossAttentionKind cross, bool pre_ln) {
  Generator gen(12);
  const Seq2SeqOptions options{.src_vocab = 8, .tgt_vocab = 10, .out_vocab = 8, .d_model = 8, .n_heads = 2,
                               .n_encoder_layers = 1, .n_decoder_layers = 2, .d_ff = 12, .max_len = 9,
                               .norm_first = pre_ln, .cross_attention = cross};
  auto model = std::make_unique<Seq2SeqTransformer>(options, gen);
  model->to(DType::Float64);
  model->eval();
  return model;
}

TEST(DecoderKVCache, DecodeStepLogitsEqualTheFullDecodesForEveryKind) {
  for (auto cross : {CrossAttentionKind::ScaledDot, CrossAttentionKind::Additive, CrossAttentionKind::Multiplicative})
    for (bool pre_ln : {false, true}) {
      const auto owned = make_model(cross, pre_ln);
      const Seq2SeqTransformer& model = *owned;
      const Tensor src = test::random_ids({3, 5}, 1, 8, 1), dec = test::random_ids({3, 6}, 1, 10, 2);
      const Tensor mask = padding_mask(3, 5);
      NoGradGuard no_grad;
      const Tensor memory = model.encode(src, mask);
      const Tensor want = model.decode(dec, memory, mask);  // [3, 6, 8]
      Seq2SeqTransformer::DecodeState state = model.start_decoding(memory, mask, 6);
      EXPECT_EQ(state.self.layers.size(), 2u);
      EXPECT_EQ(state.self.layers[0].k.shape(), (Shape{3, 2, 6, 4}));  // [B, H, max_length, dh], allocated once
      const void* buffer = state.self.layers[0].k.data<double>();
      for (std::int64_t t = 0; t < 6; ++t) {
        const Tensor step = model.decode_step(state, dec.select(1, t).contiguous());  // [3, 8]
        EXPECT_LE(test::max_abs_diff(step, want.select(1, t)), 1e-12)
            << cross_attention_name(cross) << (pre_ln ? " pre-LN" : " post-LN") << ", position " << t;
      }
      EXPECT_EQ(state.self.length, 6);
      EXPECT_EQ(state.self.layers[0].k.data<double>(), buffer) << "decoding must not reallocate the cache";
    }
}

TEST(DecoderKVCache, RefusesMisuseNamingIt) {
  const auto owned = make_model(CrossAttentionKind::ScaledDot, false);
  const Seq2SeqTransformer& model = *owned;
  NoGradGuard no_grad;
  const Tensor memory = model.encode(test::random_ids({2, 5}, 1, 8, 3));
  EXPECT_THROW_MSG(model.start_decoding(memory, Tensor(), 10), std::invalid_argument,
                   "Seq2SeqTransformer::start_decoding: max_length must be in [1, 9] (max_len), got 10");
  EXPECT_THROW_MSG(model.start_decoding(memory, Tensor(), 0), std::invalid_argument, "got 0");
  EXPECT_THROW_MSG(model.start_decoding(memory.select(0, 0), Tensor(), 3), std::invalid_argument,
                   "memory must be [B, S, 8], got [5, 8]");
  Seq2SeqTransformer::DecodeState state = model.start_decoding(memory, Tensor(), 2);
  const Tensor bos = Tensor::full({2}, 9.0, DType::Int64);
  model.decode_step(state, bos);
  model.decode_step(state, bos);
  EXPECT_THROW_MSG(model.decode_step(state, bos), std::invalid_argument,
                   "decode_step: position 2 is past the 2 the state was started for (start_decoding's max_length)");
  Seq2SeqTransformer::DecodeState other = model.start_decoding(memory, Tensor(), 2);
  EXPECT_THROW_MSG(model.decode_step(other, Tensor::full({3}, 9.0, DType::Int64)), std::invalid_argument,
                   "MultiHeadAttention::forward_cached: caches must be [3, 2, capacity, 4]");

  Generator gen(13);
  TransformerDecoderLayer layer({.d_model = 8, .n_heads = 2, .d_ff = 12}, gen);
  KVCache cache(1, 2, 2, 4, 4, DType::Float32);
  const Tensor x = Tensor::randn({2, 1, 8}, gen), mem = Tensor::randn({2, 5, 8}, gen);
  EXPECT_THROW_MSG(layer.forward_cached(x, mem, Tensor(), {}, cache.layers[0], 0), std::invalid_argument,
                   "TransformerDecoderLayer::forward_cached: multi-head cross-attention needs memory_kv");
}

}  // namespace
}  // namespace cppgrad
