// The KV cache (nn/kv_cache.h, GPT::forward_cached): the cached forward's logits equal the full forward's at every
// position, whether a sequence is fed whole, token by token or in chunks, in float64 and float32; a broken cache
// fails that comparison; and the refusals.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "nn/gpt.h"
#include "nn/self_attention.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;

GPTConfig cache_config() { return {.block_size = 12, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 16}; }

std::unique_ptr<GPT> make_model(DType dtype, std::uint64_t seed = 0) {
  Generator gen(seed);
  auto model = std::make_unique<GPT>(cache_config(), gen);
  model->to(dtype);
  model->eval();
  return model;
}

// idx [B, T] fed through a fresh cache in chunks of these sizes (summing to T) -> logits [B, T, V]. `tamper` runs
// after every chunk, so a test can break the cache the way a bug would.
Tensor cached_logits(const GPT& model, const Tensor& idx, const std::vector<std::int64_t>& chunks,
                     const std::function<void(KVCache&)>& tamper = nullptr) {
  const std::int64_t B = idx.shape()[0], T = idx.shape()[1];
  KVCache cache = model.make_cache(B);
  Tensor out = Tensor::zeros({B, T, model.config().vocab_size}, model.named_parameters().front().second.dtype());
  std::int64_t at = 0;
  for (std::int64_t t : chunks) {
    out.slice(1, at, at + t).copy_(model.forward_cached(idx.slice(1, at, at + t), cache));
    at += t;
    if (tamper) tamper(cache);
  }
  EXPECT_EQ(at, T) << "the chunks must cover idx";
  return out;
}

Tensor full_logits(const GPT& model, const Tensor& idx) {
  NoGradGuard no_grad;
  return model.forward(idx).logits;
}

const std::vector<std::vector<std::int64_t>>& feeds() {  // each sums to block_size = 12
  static const std::vector<std::vector<std::int64_t>> f = {
      {12}, std::vector<std::int64_t>(12, 1), {5, 1, 1, 3, 2}, {1, 11}};
  return f;
}

// float64 runs the reference kernels on both paths; what differs is only the length of the rows the attention
// reduces over (masked keys add exact zeros) and the GEMMs' row counts: rounding far below 1e-12.
TEST(KVCache, CachedLogitsEqualTheFullForwardsInFloat64) {
  const auto owned = make_model(DType::Float64);
  const GPT& model = *owned;
  const Tensor idx = test::random_ids({2, 12}, 0, 11, 1);
  const Tensor want = full_logits(model, idx);
  for (const auto& chunks : feeds()) EXPECT_LE(test::max_abs_diff(cached_logits(model, idx, chunks), want), 1e-12);
}

// float32 takes the fast kernels, whose blocking depends on the shapes (a one-query step groups heads eight to a
// vector, a GEMM of 1 row takes another path than one of 12), so the two paths round differently. Each logit is a
// dot product of C = 16 terms of ln_f's output (|x| <~ 3) with wte rows (|w| <~ 0.1), after 2 blocks whose sums run
// over at most 4C = 64 terms: a few hundred roundings of relative size 6e-8 on values of order 1 give a bound of
// order 1e-5. Measured: at most 6e-8, where a cache off by one position moves them by 0.2
// (BrokenCacheFailsTheComparison).
constexpr double kFloat32Tolerance = 1e-5;

TEST(KVCache, CachedLogitsEqualTheFullForwardsInFloat32) {
  const auto owned = make_model(DType::Float32);
  const GPT& model = *owned;
  const Tensor idx = test::random_ids({2, 12}, 0, 11, 2);
  const Tensor want = full_logits(model, idx);
  for (const auto& chunks : feeds())
    EXPECT_LE(test::max_abs_diff(cached_logits(model, idx, chunks), want), kFloat32Tolerance);
}

// The comparison above can fail: a cache that loses a position after the third token (the next token then sits one
// position early and overwrites the third's keys) or that skips one must exceed the tolerance by far.
TEST(KVCache, BrokenCacheFailsTheComparison) {
  const auto owned = make_model(DType::Float32);
  const GPT& model = *owned;
  const Tensor idx = test::random_ids({2, 10}, 0, 11, 3);
  const Tensor want = full_logits(model, idx);
  for (const std::int64_t shift : {-1, +1}) {
    int steps = 0;
    const Tensor got = cached_logits(model, idx, std::vector<std::int64_t>(10, 1), [&](KVCache& c) {
      if (++steps == 3) c.length += shift;
    });
    EXPECT_GT(test::max_abs_diff(got, want), 100 * kFloat32Tolerance) << "shift " << shift;
  }
}

TEST(KVCache, RecordsNoGraphAndKeepsItsBuffers) {
  const auto owned = make_model(DType::Float32);
  const GPT& model = *owned;
  KVCache cache = model.make_cache(3);
  ASSERT_EQ(cache.layers.size(), 2u);
  EXPECT_EQ(cache.layers[0].k.shape(), (Shape{3, 2, 12, 8}));  // [B, nh, block_size, hd]
  EXPECT_EQ(cache.batch(), 3);
  EXPECT_EQ(cache.capacity(), 12);
  const void* k_storage = cache.layers[1].k.impl().storage.get();
  const Tensor logits = model.forward_cached(test::random_ids({3, 4}, 0, 11, 4), cache);  // grad mode on
  EXPECT_EQ(logits.shape(), (Shape{3, 4, 11}));
  EXPECT_FALSE(logits.requires_grad());
  EXPECT_EQ(logits.grad_fn(), nullptr);
  EXPECT_EQ(cache.length, 4);
  model.forward_cached(test::random_ids({3, 1}, 0, 11, 5), cache);
  EXPECT_EQ(cache.length, 5);
  EXPECT_EQ(cache.layers[1].k.impl().storage.get(), k_storage);
  cache.clear();
  EXPECT_EQ(cache.length, 0);
}

TEST(KVCache, RefusesMisuseNamingIt) {
  const auto owned = make_model(DType::Float32);
  GPT& model = *owned;
  KVCache cache = model.make_cache(2);
  EXPECT_THROW_MSG(model.forward_cached(test::random_ids({2, 13}, 0, 11, 6), cache), std::invalid_argument,
                   "GPT::forward_cached: 13 new tokens after 0 cached run past the context (block_size) 12");
  model.forward_cached(test::random_ids({2, 12}, 0, 11, 6), cache);
  EXPECT_THROW_MSG(model.forward_cached(test::random_ids({2, 1}, 0, 11, 6), cache), std::invalid_argument,
                   "GPT::forward_cached: 1 new tokens after 12 cached run past the context (block_size) 12");
  EXPECT_EQ(cache.length, 12);  // a refused call leaves the cache as it was
  cache.clear();
  EXPECT_THROW_MSG(model.forward_cached(test::random_ids({3, 1}, 0, 11, 6), cache), std::invalid_argument,
                   "GPT::forward_cached: idx [3, 1] has batch 3, the cache batch 2");
  EXPECT_THROW_MSG(model.forward_cached(test::random_ids({2}, 0, 11, 6), cache), std::invalid_argument,
                   "GPT::forward_cached: idx must be [B, t] int64 with t >= 1, got [2] int64");
  KVCache other(3, 2, 2, 12, 8, DType::Float32);
  EXPECT_THROW_MSG(model.forward_cached(test::random_ids({2, 1}, 0, 11, 6), other), std::invalid_argument,
                   "the cache has 3 layers of 12 positions, the model 2 of 12");

  Generator gen(7);
  GPTConfig with_dropout = cache_config();
  with_dropout.dropout = 0.1;
  GPT dropped(with_dropout, gen);  // modules start in training mode
  KVCache c = dropped.make_cache(1);
  EXPECT_THROW_MSG(dropped.forward_cached(test::random_ids({1, 1}, 0, 11, 6), c), std::invalid_argument,
                   "training mode with dropout 0.1: call eval() first");
  dropped.eval();
  EXPECT_EQ(dropped.forward_cached(test::random_ids({1, 1}, 0, 11, 6), c).shape(), (Shape{1, 1, 11}));
}

// The cached path of each causal attention layout equals its forward: GPT-2's (GPTAttention) and seed 003's
// (CausalSelfAttention: W_q, W_k, W_v, no output projection).
template <class Attention>
void expect_cached_equals_forward(const Attention& attn, Generator& gen, const std::string& name) {
  const Tensor x = Tensor::randn({2, 5, 6}, gen, DType::Float64);
  Tensor want;
  {
    NoGradGuard no_grad;
    want = attn.forward(x).output;  // [2, 5, 6]
  }
  const Tensor k = Tensor::empty({2, 3, 7, 2}, DType::Float64), v = Tensor::empty({2, 3, 7, 2}, DType::Float64);
  Tensor got = Tensor::zeros({2, 5, 6}, DType::Float64);
  got.slice(1, 0, 3).copy_(attn.forward_cached(x.slice(1, 0, 3), k, v, 0));
  got.slice(1, 3, 5).copy_(attn.forward_cached(x.slice(1, 3, 5), k, v, 3));
  EXPECT_LE(test::max_abs_diff(got, want), 1e-14) << name;
  EXPECT_THROW_MSG(attn.forward_cached(x.slice(1, 0, 3), k, v, 5), std::invalid_argument,
                   name + "::forward_cached: cannot add 3 positions to 5 cached, the caches hold 7");
}

TEST(KVCache, CachedAttentionEqualsForwardInBothLayouts) {
  Generator gen(8);
  GPTAttention gpt_attn(GPTConfig{.n_head = 3, .n_embd = 6}, gen);
  gpt_attn.to(DType::Float64);
  expect_cached_equals_forward(gpt_attn, gen, "GPTAttention");
  CausalSelfAttention seed_attn({.d_model = 6, .n_heads = 3}, gen);
  seed_attn.to(DType::Float64);
  expect_cached_equals_forward(seed_attn, gen, "CausalSelfAttention");
}

}  // namespace
}  // namespace cppgrad
