#include "nn/gpt_block.h"

#include "core/autograd.h"
#include "core/ops/elementwise.h"

namespace cppgrad::nn {

// Registered in nanoGPT's order (ln_1, attn, ln_2, mlp), so named_parameters() lists them as its state_dict does.
Block::Block(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  const std::int64_t C = config.n_embd;
  ln_1_ = register_module("ln_1", std::make_shared<LayerNorm>(C));
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(
                                      CausalSelfAttentionOptions{.d_model = C, .n_heads = config.n_head,
                                                                 .fused_qkv = true, .dropout = config.dropout},
                                      gen, dropout_gen));
  ln_2_ = register_module("ln_2", std::make_shared<LayerNorm>(C));
  mlp_ = register_module("mlp", std::make_shared<MLP>(config, gen, dropout_gen));
}

Tensor Block::forward(const Tensor& x) const {
  AttentionResult a = attn_->forward(ln_1_->forward(x));  // [B, T, C], weights [B, nh, T, T]
  last_attention_ = a.weights;
  Tensor h = add(x, a.output);                             // [B, T, C]
  return remember_output(add(h, mlp_->forward(ln_2_->forward(h))));
}

Tensor Block::forward_cached(const Tensor& x, const KVCache::Layer& kv, std::int64_t length) const {
  NoGradGuard no_grad;
  const Tensor h = add(x, attn_->forward_cached(ln_1_->forward(x), kv.k, kv.v, length));  // [B, t, C]
  return remember_output(add(h, mlp_->forward(ln_2_->forward(h))));                       // [B, t, C]
}

}  // namespace cppgrad::nn
