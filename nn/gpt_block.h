#pragma once
// One transformer block of GPT-2 (nanoGPT's Block), pre-LayerNorm: each branch reads a normalised copy of the
// residual stream x and adds its result back.
//
//   x = x + attn(ln_1(x))    causal self-attention: each position reads the positions up to it
//   x = x + mlp(ln_2(x))     each position on its own
#include <memory>

#include "nn/gpt_config.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/mlp.h"
#include "nn/self_attention.h"

namespace cppgrad::nn {

class Block : public Module {
 public:
  Block(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen);
  std::string type_name() const override { return "Block"; }

  Tensor forward(const Tensor& x) const;  // x: [B, T, C] -> [B, T, C]
  // Incremental decoding: x [B, t, C], the t positions after the `length` whose keys and values `kv` holds
  // (CausalSelfAttention::forward_cached, which appends the new ones) -> [B, t, C], equal to the last t rows of
  // forward() on all length+t positions. Inference only (no graph, no dropout); leaves last_attention() alone.
  Tensor forward_cached(const Tensor& x, const KVCache::Layer& kv, std::int64_t length) const;

  const CausalSelfAttention& attn() const { return *attn_; }
  const MLP& mlp() const { return *mlp_; }
  // The attention weights [B, nh, T, T] of the latest forward (detached), for attention maps.
  const Tensor& last_attention() const { return last_attention_; }

 private:
  std::shared_ptr<LayerNorm> ln_1_, ln_2_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<MLP> mlp_;
  mutable Tensor last_attention_;
};

}  // namespace cppgrad::nn
