#pragma once
// A decoder-only language model, GPT-2's architecture, as nanoGPT's model.py writes it.
//
//   x = drop(wte(idx) + wpe(0..T-1))     [B, T, C]   a token's meaning plus its position
//   x = h[i](x) for each block           [B, T, C]   (nn/gpt_block.h)
//   logits = lm_head(ln_f(x))            [B, T, V]   the next token's scores at every position
//
// Names and shapes are nanoGPT's (transformer.wte.weight [V, C], transformer.h.0.attn.c_attn.weight [3C, C],
// ..., lm_head.weight [V, C]), so state_dict() loads into nanoGPT's PyTorch model with load_state_dict. lm_head
// reads wte's table (weight tying, https://paperswithcode.com/method/weight-tying): one parameter, which
// named_parameters() lists once, as transformer.wte.weight, and state_dict() under both names, as PyTorch's do.
// (nanoGPT on PyTorch < 2.0 also keeps a causal-mask buffer, attn.bias, in its state dict: load with
// strict=False there.)
#include <memory>
#include <vector>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/gpt_block.h"
#include "nn/gpt_config.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"

namespace cppgrad::nn {

struct GPTOutput {
  Tensor logits;  // [B, T, V]
  Tensor loss;    // []: mean cross-entropy over the counted targets; undefined without targets
};

class GPT : public Module {
 public:
  // Draws every initial value from gen: GPT-2's init (see init_weights in gpt.cpp).
  GPT(const GPTConfig& config, Generator& gen);
  std::string type_name() const override { return "GPT"; }
  std::string extra_repr() const override;
  const GPTConfig& config() const { return config_; }

  // idx: [B, T] int64 token ids, T <= block_size  targets: [B, T] int64, -1 where a position is not counted
  // (the padding of a batch of unequal sequences), or undefined -> logits [B, T, V] and the loss
  GPTOutput forward(const Tensor& idx, const Tensor& targets = Tensor()) const;

  // Incremental decoding (nn/kv_cache.h). make_cache: empty keys and values for `batch` sequences, room for the
  // whole context, in the parameters' dtype. forward_cached: idx [B, t] int64, the tokens at positions
  // cache.length..cache.length+t-1 (a whole prompt at once, or one token a step) -> logits [B, t, V], equal to the
  // last t rows of forward() on all cache.length+t tokens; appends their keys and values and advances cache.length.
  // Refuses (std::invalid_argument) a batch size other than the cache's and running past block_size: crop and
  // start again (clear() the cache), as nanoGPT's generate crops its context. Inference only: runs under its own
  // NoGradGuard (no graph is recorded, whatever the grad mode), applies no dropout, and so refuses training mode
  // when the config's dropout > 0 (call eval() first).
  KVCache make_cache(std::int64_t batch) const;
  Tensor forward_cached(const Tensor& idx, KVCache& cache) const;

  // The blocks' attention weights [B, nh, T, T] from the latest forward, for attention maps.
  std::vector<Tensor> attention_maps() const;
  // Dropout draws from this generator; exposed so checkpoints can save and restore its state.
  Generator& dropout_generator() const { return *dropout_gen_; }

 private:
  // nanoGPT's `transformer` ModuleDict, so names read transformer.wte.weight, transformer.h.0.ln_1.weight, ...
  struct Transformer : Module {
    std::string type_name() const override { return "ModuleDict"; }
    std::shared_ptr<Embedding> wte, wpe;
    std::shared_ptr<Dropout> drop;
    std::shared_ptr<ModuleList<Block>> h;
    std::shared_ptr<LayerNorm> ln_f;
    using Module::register_module;
  };
  void init_weights(Generator& gen);

  GPTConfig config_;
  std::shared_ptr<Generator> dropout_gen_;
  std::shared_ptr<Transformer> transformer_;
  std::shared_ptr<Linear> lm_head_;  // tied to transformer.wte
};

}  // namespace cppgrad::nn
