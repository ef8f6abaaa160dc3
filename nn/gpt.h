#pragma once
// A decoder-only language model, GPT-2's architecture, in the order of nanoGPT's model.py: the config, the
// attention, the MLP, the block, the model. This header and nn/gpt.cpp are the whole GPT; the third file to read is
// nn/attention.h (scaled dot-product attention and the causal mask, written out in ops). A piece only the GPT uses (a
// norm, an activation, a position scheme, with its config field) is written here and in nn/gpt.cpp, beside the parts
// that use it, as nanoGPT's LayerNorm is a class in its model.py, and named for the GPT as GPTAttention is, so it
// cannot take the name of a library module (docs/add-a-module.md builds nn::RMSNorm beside this header); it moves to
// a file of its own in nn/ when a second model needs it.
//
//   x = drop(wte(idx) + wpe(0..T-1))     [B, T, C]   a token's meaning plus its position
//   x = x + attn(ln_1(x))                [B, T, C]   each block: positions read the positions up to them...
//   x = x + mlp(ln_2(x))                 [B, T, C]   ...then each position thinks on its own
//   logits = lm_head(ln_f(x))            [B, T, V]   the next token's scores at every position
//   loss = cross_entropy(logits, targets)            the mean of -log p(the true next token)
//
// Names and shapes are nanoGPT's (transformer.wte.weight [V, C], transformer.h.0.attn.c_attn.weight [3C, C],
// ..., lm_head.weight [V, C]), so state_dict() loads into nanoGPT's PyTorch model with load_state_dict. lm_head
// reads wte's table (weight tying, https://paperswithcode.com/method/weight-tying): one parameter, which
// named_parameters() lists once, as transformer.wte.weight, and state_dict() under both names, as PyTorch's do.
// (nanoGPT on PyTorch < 2.0 also keeps a causal-mask buffer, attn.bias, in its state dict: load with
// strict=False there.) Incremental decoding with a KV cache: nn/kv_cache.h; sampling: nn/generate.h.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/config_table.h"
#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"

namespace cppgrad::nn {

// The largest sizes a config read from a file or typed as a flag may ask for (gpt_config_table's bounds): each is
// bounded before anything is allocated for it, so a typo or a hostile file cannot ask for terabytes. (A GPT built in
// code is held to check_config alone.)
inline constexpr std::int64_t kMaxContext = 4'096;
inline constexpr std::int64_t kMaxVocab = 2'000'000;  // more than Unicode's characters and data/bpe.h's kMaxBpeTokens
inline constexpr std::int64_t kMaxLayers = 96;
inline constexpr std::int64_t kMaxHeads = 256;
inline constexpr std::int64_t kMaxWidth = 8'192;

// The sizes of a GPT (nanoGPT's GPTConfig; its defaults are GPT-2 small's). Every Linear and LayerNorm has a bias,
// as GPT-2's (nanoGPT's `bias = True`). Each field is declared once more, as a row of gpt_config_table() (nn/gpt.cpp):
// its name in a checkpoint, the flag that sets it, its bound, its role (a size, the architecture, or training's: what
// `train --init` pins and `export` refuses follow from it; core/config_table.h's FieldRole).
struct GPTConfig {
  std::int64_t block_size = 1024;  // the context: the longest sequence the model reads (wpe's rows)
  std::int64_t vocab_size = 50304;
  std::int64_t n_layer = 12;
  std::int64_t n_head = 12;
  std::int64_t n_embd = 768;
  double dropout = 0.0;            // after the embeddings, on the attention weights, after each residual branch
  std::uint64_t dropout_seed = 0;  // the dropout masks' own generator

  bool operator==(const GPTConfig&) const = default;
  // nanoGPT's model_args, as a checkpoint stores the model: {"block_size": 1024, "dropout": 0.0, "n_embd": 768, ...}.
  std::string to_json() const;
  // And back: a key left out takes its default (a field added since the file was written), an unknown key, a value
  // out of its bound or n_head not dividing n_embd is a std::invalid_argument naming it. Nothing is allocated.
  static GPTConfig from_json(const std::string& json);
};

// GPTConfig's rows: the JSON's keys (nanoGPT's names), the flags `cppgrad-gpt train` sets them by (--d-model sets
// n_embd; block_size and vocab_size have none, the data sets them), the bounds.
const ConfigTable<GPTConfig>& gpt_config_table();

// The rows of gpt_config_table() where `config` is not GPT-2's architecture: its architecture rows
// (FieldRole::architecture) whose value is not GPTConfig's default. Empty for a GPT-2 of any size; what `export`
// refuses and the run's header names.
std::vector<const ConfigRow<GPTConfig>*> architecture_changes(const GPTConfig& config);

// Throws std::invalid_argument naming the first size out of range (n_embd must be a multiple of n_head).
void check_config(const GPTConfig& config);

// The values a GPT of this config holds in its state_dict(), the tied lm_head.weight counted under its own name too
// (as a checkpoint stores it), without building it: what a file's tensors must hold for the model to load them.
std::int64_t state_dict_numel(const GPTConfig& config);

// Causal self-attention in GPT-2's layout (nanoGPT's CausalSelfAttention): q, k and v of every head from one
// projection c_attn [3C, C], the heads' outputs side by side mixed by c_proj [C, C], both with bias. Position t
// reads positions 0..t only. (The tutorial's layout, separate W_q, W_k, W_v: CausalSelfAttention, nn/self_attention.h.)
class GPTAttention : public Module {
 public:
  // dropout_gen: the model's dropout generator, needed when config.dropout > 0
  GPTAttention(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen = nullptr);
  std::string type_name() const override { return "GPTAttention"; }
  std::string extra_repr() const override;

  // x: [B, T, C] -> output [B, T, C], weights [B, nh, T, T] (zero above the diagonal; detached, for reading)
  AttentionResult forward(const Tensor& x) const;
  // Incremental decoding (nn/kv_cache.h). x: [B, t, C], the t positions after the `length` already cached;
  // k_cache, v_cache: [B, nh, capacity, hs]. Writes the new keys and values at length..length+t-1; position
  // length+i attends to 0..length+i -> [B, t, C], equal to the last t rows of forward() on all length+t positions.
  // Inference only: its own NoGradGuard (the caches are overwritten in place), no dropout (refuses training mode
  // when dropout > 0).
  Tensor forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length) const;

  const std::shared_ptr<Linear>& c_attn() const { return c_attn_; }
  const std::shared_ptr<Linear>& c_proj() const { return c_proj_; }  // ends a residual branch (GPT-2's init scales it)

 private:
  AttentionResult attend(const Tensor& qkv) const;  // qkv: [3, B, nh, T, hs] -> y [B, nh, T, hs], att [B, nh, T, T]

  std::int64_t n_embd_, n_head_;
  std::shared_ptr<Linear> c_attn_, c_proj_;
  std::shared_ptr<Dropout> attn_dropout_, resid_dropout_;  // null when dropout == 0
};

// GPT-2's MLP (nanoGPT's MLP): c_fc widens to 4C, GELU in its tanh form, c_proj narrows back.
class MLP : public Layer {
 public:
  MLP(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen);
  std::string type_name() const override { return "MLP"; }

  Tensor forward(const Tensor& x) const override;  // x: [B, T, C] -> [B, T, C]

  const std::shared_ptr<Linear>& c_fc() const { return c_fc_; }
  const std::shared_ptr<Linear>& c_proj() const { return c_proj_; }  // ends a residual branch (GPT-2's init scales it)

 private:
  std::shared_ptr<Linear> c_fc_, c_proj_;
  std::shared_ptr<Dropout> dropout_;  // null when config.dropout == 0
};

// One transformer block (nanoGPT's Block), pre-LayerNorm: each branch reads a normalised copy of the residual
// stream x and adds its result back.
class Block : public Layer {
 public:
  Block(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen);
  std::string type_name() const override { return "Block"; }

  Tensor forward(const Tensor& x) const override;  // x: [B, T, C] -> [B, T, C]
  // The same, and the attention's weights: output [B, T, C], weights [B, nh, T, T] (detached, for reading).
  AttentionResult forward_with_attention(const Tensor& x) const;
  // Incremental decoding: x [B, t, C] after the `length` positions `kv` holds -> [B, t, C] (GPTAttention's
  // forward_cached). Inference only.
  Tensor forward_cached(const Tensor& x, const KVCache::Layer& kv, std::int64_t length) const;

  const GPTAttention& attn() const { return *attn_; }
  const MLP& mlp() const { return *mlp_; }

 private:
  std::shared_ptr<LayerNorm> ln_1_, ln_2_;
  std::shared_ptr<GPTAttention> attn_;
  std::shared_ptr<MLP> mlp_;
};

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
  // The training loss alone: forward(idx, targets).loss, the same bits, from one op that never keeps the logits
  // (linear_cross_entropy, core/ops/softmax.h), so backward starts with one [B, T, V] buffer live instead of two.
  Tensor loss(const Tensor& idx, const Tensor& targets) const;

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

  // The forward of idx [B, T] as forward() runs it, returning each block's attention weights [B, nh, T, T]
  // (detached, for attention maps) instead of the logits. Nothing is kept in the model between calls.
  std::vector<Tensor> attention(const Tensor& idx) const;
  // Dropout draws from this generator; exposed so checkpoints can save and restore its state.
  Generator& dropout_generator() const { return *dropout_gen_; }
  // ... and shared, for a module added later that draws masks from it too (a LoRA's dropout, nn/lora.h).
  const std::shared_ptr<Generator>& shared_dropout_generator() const { return dropout_gen_; }

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
  Tensor embed(const Tensor& idx) const;  // idx [B, T], checked -> tokens' and positions' embeddings [B, T, C]
  Tensor features(const Tensor& idx) const;  // idx [B, T] -> the blocks' output after ln_f [B, T, C]: lm_head's input

  GPTConfig config_;
  std::shared_ptr<Generator> dropout_gen_;
  std::shared_ptr<Transformer> transformer_;
  std::shared_ptr<Linear> lm_head_;  // tied to transformer.wte
};

}  // namespace cppgrad::nn
