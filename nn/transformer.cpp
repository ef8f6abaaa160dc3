#include "nn/transformer.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/multiplicative_attention.h"

namespace cppgrad::nn {

namespace {

std::shared_ptr<Dropout> make_dropout(double p, const std::shared_ptr<Generator>& gen, const char* who) {
  if (p <= 0) return nullptr;
  if (!gen) throw std::invalid_argument(std::string(who) + ": dropout > 0 needs a dropout generator");
  return std::make_shared<Dropout>(p, gen);
}

FeedForwardOptions ffn_options(const TransformerLayerOptions& o) {
  return {.d_model = o.d_model, .d_ff = o.d_ff, .activation = o.activation, .dropout = o.dropout};
}

std::string layer_repr(const TransformerLayerOptions& o) {
  return fmt::format("d_model={}, heads={}, d_ff={}, {}", o.d_model, o.n_heads, o.d_ff, o.norm_first ? "pre-LN" : "post-LN");
}

}  // namespace

// ------------------------------------------------------------------------------------------- encoder
TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& options, Generator& gen,
                                                 std::shared_ptr<Generator> dropout_gen)
    : options_(options) {
  self_attn_ = register_module("self_attn", std::make_shared<MultiHeadAttention>(
                                                MultiHeadAttentionOptions{options.d_model, options.n_heads}, gen));
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(ffn_options(options), gen, dropout_gen));
  norm1_ = register_module("norm1", std::make_shared<LayerNorm>(options.d_model, options.eps));
  norm2_ = register_module("norm2", std::make_shared<LayerNorm>(options.d_model, options.eps));
  if (auto d = make_dropout(options.dropout, dropout_gen, "TransformerEncoderLayer")) dropout_ = register_module("dropout", d);
}

std::string TransformerEncoderLayer::extra_repr() const { return layer_repr(options_); }

AttentionResult TransformerEncoderLayer::forward_with_attention(const Tensor& x, const Tensor& src_mask) const {
  Tensor weights;
  auto attend = [&](const Tensor& h) {
    AttentionResult r = self_attn_->attend(h, h, h, src_mask);  // [B, S, D], weights [B, H, S, S]
    weights = r.weights.detach();
    return residual_dropout(r.output);
  };
  Tensor y;
  if (options_.norm_first) {
    y = add(x, attend(norm1_->forward(x)));
    y = add(y, residual_dropout(ffn_->forward(norm2_->forward(y))));
  } else {
    y = norm1_->forward(add(x, attend(x)));
    y = norm2_->forward(add(y, residual_dropout(ffn_->forward(y))));
  }
  return {y, weights};
}

// ------------------------------------------------------------------------------------------- decoder
TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& options, Generator& gen,
                                                 std::shared_ptr<Generator> dropout_gen)
    : options_(options) {
  self_attn_ = register_module("self_attn", std::make_shared<MultiHeadAttention>(
                                                MultiHeadAttentionOptions{options.d_model, options.n_heads}, gen));
  switch (options.cross_attention) {
    case CrossAttentionKind::ScaledDot:
      cross_attn_ = register_module("cross_attn", std::make_shared<MultiHeadAttention>(
                                                      MultiHeadAttentionOptions{options.d_model, options.n_heads}, gen));
      break;
    case CrossAttentionKind::Additive:
      cross_attn_ = register_module("cross_attn", std::make_shared<AdditiveAttention>(
                                                      AdditiveAttentionOptions{options.d_model, options.d_model, options.d_model}, gen));
      break;
    case CrossAttentionKind::Multiplicative:
      cross_attn_ = register_module("cross_attn", std::make_shared<MultiplicativeAttention>(
                                                      MultiplicativeAttentionOptions{options.d_model, options.d_model}, gen));
      break;
  }
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(ffn_options(options), gen, dropout_gen));
  norm1_ = register_module("norm1", std::make_shared<LayerNorm>(options.d_model, options.eps));
  norm2_ = register_module("norm2", std::make_shared<LayerNorm>(options.d_model, options.eps));
  norm3_ = register_module("norm3", std::make_shared<LayerNorm>(options.d_model, options.eps));
  if (auto d = make_dropout(options.dropout, dropout_gen, "TransformerDecoderLayer")) dropout_ = register_module("dropout", d);
}

std::string TransformerDecoderLayer::extra_repr() const {
  return layer_repr(options_) + ", cross=" + cross_attention_name(options_.cross_attention);
}

// The three sublayers around their residual connections; self_block and cross_block are the attentions, which
// differ between a whole-sequence forward and a one-position step.
Tensor TransformerDecoderLayer::sublayers(const Tensor& x, const SublayerFn& self_block,
                                          const SublayerFn& cross_block) const {
  Tensor y;
  if (options_.norm_first) {
    y = add(x, self_block(norm1_->forward(x)));
    y = add(y, cross_block(norm2_->forward(y)));
    y = add(y, residual_dropout(ffn_->forward(norm3_->forward(y))));
  } else {
    y = norm1_->forward(add(x, self_block(x)));
    y = norm2_->forward(add(y, cross_block(y)));
    y = norm3_->forward(add(y, residual_dropout(ffn_->forward(y))));
  }
  return y;
}

TransformerDecoderLayer::Attended TransformerDecoderLayer::forward_with_attention(const Tensor& x, const Tensor& memory,
                                                                                 const Tensor& self_mask,
                                                                                 const Tensor& memory_mask) const {
  const Tensor causal = self_mask.defined() ? self_mask : causal_mask(x.shape()[1]);  // [T, T]
  Attended out;
  auto self_block = [&](const Tensor& h) {
    AttentionResult r = self_attn_->attend(h, h, h, causal);  // [B, T, D]
    out.self_weights = r.weights.detach();
    return residual_dropout(r.output);
  };
  auto cross_block = [&](const Tensor& h) {
    AttentionResult r = cross_attn_->attend(h, memory, memory, memory_mask);  // [B, T, D]
    out.cross_weights = r.weights.detach();
    return residual_dropout(r.output);
  };
  out.output = sublayers(x, self_block, cross_block);
  return out;
}

MultiHeadAttention::KeyValues TransformerDecoderLayer::project_memory(const Tensor& memory) const {
  const auto* mha = dynamic_cast<const MultiHeadAttention*>(cross_attn_.get());
  return mha ? mha->project_key_values(memory, memory) : MultiHeadAttention::KeyValues{};  // [B, H, S, dh]
}

Tensor TransformerDecoderLayer::forward_cached(const Tensor& x, const Tensor& memory, const Tensor& memory_mask,
                                               const MultiHeadAttention::KeyValues& memory_kv,
                                               const KVCache::Layer& self, std::int64_t length) const {
  const auto* mha = dynamic_cast<const MultiHeadAttention*>(cross_attn_.get());
  if (mha && !memory_kv.k.defined())
    throw std::invalid_argument("TransformerDecoderLayer::forward_cached: multi-head cross-attention needs memory_kv, "
                                "the memory's projected keys and values (project_memory), got none for memory " +
                                shape_str(memory.shape()));
  NoGradGuard no_grad;
  auto self_block = [&](const Tensor& h) {  // the new positions attend to the cached ones and, causally, each other
    return residual_dropout(self_attn_->forward_cached(h, self.k, self.v, length));  // [B, t, D]
  };
  auto cross_block = [&](const Tensor& h) {
    AttentionResult r = mha ? mha->attend_projected(h, memory_kv, memory_mask)
                            : cross_attn_->attend(h, memory, memory, memory_mask);  // [B, t, D]
    return residual_dropout(r.output);
  };
  return sublayers(x, self_block, cross_block);
}

}  // namespace cppgrad::nn
