#pragma once
// Transformer encoder and decoder layers (post-LayerNorm by default, as the golden cases and "Attention Is All
// You Need"; pre-LayerNorm as an option, as GPT-2).
//
//   encoder, post-LN:  x = norm1(x + self_attn(x, x, x, src_mask));  x = norm2(x + ffn(x))
//   decoder, post-LN:  x = norm1(x + self_attn(x, x, x, causal));    x = norm2(x + cross_attn(x, mem, mem));
//                      x = norm3(x + ffn(x))
//   pre-LN replaces each  x = norm(x + f(x))  by  x = x + f(norm(x)).
#include <memory>

#include "core/config_table.h"
#include "nn/attention_module.h"
#include "nn/dropout.h"
#include "nn/feed_forward.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/multi_head_attention.h"

namespace cppgrad::nn {

enum class CrossAttentionKind { ScaledDot, Additive, Multiplicative };
// The cross-attention kinds by the one name each has, in a config, on a flag (--attention scaled_dot) and in a
// module's repr.
inline const Choices<CrossAttentionKind> kCrossAttentionChoices = {{"scaled_dot", CrossAttentionKind::ScaledDot},
                                                                   {"additive", CrossAttentionKind::Additive},
                                                                   {"multiplicative", CrossAttentionKind::Multiplicative}};
inline const std::string& cross_attention_name(CrossAttentionKind kind) {
  return choice_name(kCrossAttentionChoices, kind);
}

struct TransformerLayerOptions {
  std::int64_t d_model = 0;
  std::int64_t n_heads = 1;
  std::int64_t d_ff = 0;
  double dropout = 0.0;
  double eps = 1e-5;
  bool norm_first = false;  // pre-LN when true
  Activation activation = Activation::Relu;
  CrossAttentionKind cross_attention = CrossAttentionKind::ScaledDot;  // decoder only
};

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(const TransformerLayerOptions& options, Generator& gen,
                          std::shared_ptr<Generator> dropout_gen = nullptr);
  std::string type_name() const override { return "TransformerEncoderLayer"; }
  std::string extra_repr() const override;

  // x: [B, S, D]  src_mask: broadcastable to [B, H, S, S] (e.g. key padding [B, 1, 1, S]) -> [B, S, D]
  Tensor forward(const Tensor& x, const Tensor& src_mask = Tensor()) const { return forward_with_attention(x, src_mask).output; }
  // The same, with the self-attention weights [B, H, S, S] (detached), for plots: returned when asked, never kept.
  AttentionResult forward_with_attention(const Tensor& x, const Tensor& src_mask = Tensor()) const;

 private:
  Tensor residual_dropout(const Tensor& x) const { return dropout_ ? dropout_->forward(x) : x; }

  TransformerLayerOptions options_;
  std::shared_ptr<MultiHeadAttention> self_attn_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm1_, norm2_;
  std::shared_ptr<Dropout> dropout_;
};

class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(const TransformerLayerOptions& options, Generator& gen,
                          std::shared_ptr<Generator> dropout_gen = nullptr);
  std::string type_name() const override { return "TransformerDecoderLayer"; }
  std::string extra_repr() const override;

  // x: [B, T, D]  memory: [B, S, D]  self_mask: broadcastable to [B, H, T, T] (undefined = causal)
  // memory_mask: key padding over S, e.g. [B, 1, 1, S] -> [B, T, D]
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& self_mask = Tensor(),
                 const Tensor& memory_mask = Tensor()) const {
    return forward_with_attention(x, memory, self_mask, memory_mask).output;
  }
  // The same, with both attentions' weights (detached), for plots: returned when asked, never kept.
  struct Attended {
    Tensor output;         // [B, T, D]
    Tensor self_weights;   // [B, H, T, T]
    Tensor cross_weights;  // [B, H, T, S], or [B, T, S] for the single-head kinds
  };
  Attended forward_with_attention(const Tensor& x, const Tensor& memory, const Tensor& self_mask = Tensor(),
                                  const Tensor& memory_mask = Tensor()) const;

  // Incremental decoding (nn/kv_cache.h), as a GPT's Block::forward_cached: the self-attention's keys and values of
  // every position decoded so far sit in `self`, one layer of a KVCache allocated once for the whole decode, and the
  // multi-head cross-attention reads the memory's keys and values projected once (project_memory), so each new
  // position costs O(t) instead of re-running the prefix.
  //   project_memory: memory [B, S, D] -> keys and values [B, H, S, dh] (undefined for the single-head kinds, which
  //   attend to the memory itself)
  MultiHeadAttention::KeyValues project_memory(const Tensor& memory) const;
  // x: [B, t, D], the t positions after the `length` in self ([B, H, capacity, dh]); memory: [B, S, D];
  // memory_kv: project_memory(memory) -> [B, t, D], equal to the last t rows of forward() on all length+t
  // positions. Writes the new positions' keys and values into self. Inference only: runs under its own NoGradGuard.
  Tensor forward_cached(const Tensor& x, const Tensor& memory, const Tensor& memory_mask,
                        const MultiHeadAttention::KeyValues& memory_kv, const KVCache::Layer& self,
                        std::int64_t length) const;

 private:
  Tensor residual_dropout(const Tensor& x) const { return dropout_ ? dropout_->forward(x) : x; }
  // A borrowed reference to a sublayer's callable, valid for the call it is passed to (never store one): a
  // std::function would copy each lambda (its captures) into a heap allocation on every forward.
  class SublayerFn {
   public:
    template <typename F>
    SublayerFn(const F& f)  // NOLINT(google-explicit-constructor): callers pass their lambdas
        : callable_(&f), call_([](const void* c, const Tensor& x) { return (*static_cast<const F*>(c))(x); }) {}
    template <typename F>
    SublayerFn(const F&&) = delete;  // a temporary would be gone before the reference is used
    Tensor operator()(const Tensor& x) const { return call_(callable_, x); }

   private:
    const void* callable_;
    Tensor (*call_)(const void*, const Tensor&);
  };
  Tensor sublayers(const Tensor& x, const SublayerFn& self_block, const SublayerFn& cross_block) const;

  TransformerLayerOptions options_;
  std::shared_ptr<MultiHeadAttention> self_attn_;
  std::shared_ptr<AttentionModule> cross_attn_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm1_, norm2_, norm3_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace cppgrad::nn
