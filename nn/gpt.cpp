// The GPT, in the order of nanoGPT's model.py: the config's check, GPTAttention, MLP, Block, GPT. Shapes use
// nanoGPT's names: B batch, T positions, C = n_embd, nh heads of hs = C / nh, V the vocabulary.
#include "nn/gpt.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "core/ops/views.h"
#include "nn/init.h"

namespace cppgrad::nn {

// ------------------------------------------------------------------------------------------- GPTConfig
const ConfigTable<GPTConfig>& gpt_config_table() {
  using C = GPTConfig;
  constexpr FieldRole size = FieldRole::size, training = FieldRole::training;
  static const ConfigTable<C> table = {
      with_role(size, named("n_embd", field<C>("d-model", "model", "width of the residual stream", at(&C::n_embd),
                                               in_range(1, kMaxWidth)))),
      with_role(size, named("n_head", field<C>("heads", "model", "attention heads (must divide --d-model)",
                                               at(&C::n_head), in_range(1, kMaxHeads)))),
      with_role(size, named("n_layer", field<C>("layers", "model", "transformer blocks", at(&C::n_layer),
                                                in_range(1, kMaxLayers)))),
      with_role(training, field<C>("dropout", "model", "dropout probability", at(&C::dropout), in_interval(0, 1, true))),
      with_role(size, named("block_size", field<C>("", "model", "positions the model reads (wpe's rows)",
                                                   at(&C::block_size), in_range(1, kMaxContext)))),
      with_role(size, named("vocab_size", field<C>("", "model", "tokens (wte's rows)", at(&C::vocab_size),
                                                   in_range(1, kMaxVocab)))),
      with_role(training, named("dropout_seed", field<C>("", "model", "the dropout masks' generator's seed",
                                                         at(&C::dropout_seed)))),
  };
  return table;
}

std::vector<const ConfigRow<GPTConfig>*> architecture_changes(const GPTConfig& config) {
  const GPTConfig gpt2;
  std::vector<const ConfigRow<GPTConfig>*> changed;
  for (const auto& row : gpt_config_table().rows())
    if (row.role == FieldRole::architecture && row.get(config) != row.get(gpt2)) changed.push_back(&row);
  return changed;
}

std::string GPTConfig::to_json() const { return gpt_config_table().to_json(*this); }

GPTConfig GPTConfig::from_json(const std::string& json) {
  const GPTConfig c = gpt_config_table().from_json(json, ConfigTable<GPTConfig>::Keys::stored, "model");
  gpt_config_table().check(c);
  check_config(c);
  return c;
}

void check_config(const GPTConfig& c) {
  auto positive = [](const char* name, std::int64_t v) {
    if (v <= 0) throw std::invalid_argument(fmt::format("GPTConfig: {} must be positive, got {}", name, v));
  };
  positive("block_size", c.block_size);
  positive("vocab_size", c.vocab_size);
  positive("n_layer", c.n_layer);
  positive("n_head", c.n_head);
  positive("n_embd", c.n_embd);
  if (c.n_embd % c.n_head != 0)
    throw std::invalid_argument(
        fmt::format("GPTConfig: n_embd ({}) must be a multiple of n_head ({})", c.n_embd, c.n_head));
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw std::invalid_argument(fmt::format("GPTConfig: dropout must be in [0, 1), got {}", c.dropout));
}

std::int64_t state_dict_numel(const GPTConfig& c) {
  const std::int64_t C = c.n_embd;
  // A block: ln_1 and ln_2 2C each, c_attn 3C^2 + 3C, attn.c_proj C^2 + C, c_fc 4C^2 + 4C, mlp.c_proj 4C^2 + C.
  const std::int64_t block = 12 * C * C + 13 * C;
  // wte and lm_head (tied: one tensor, two names), wpe, the blocks, ln_f.
  return 2 * c.vocab_size * C + c.block_size * C + c.n_layer * block + 2 * C;
}

// ------------------------------------------------------------------------------------------- GPTAttention
GPTAttention::GPTAttention(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen)
    : n_embd_(config.n_embd), n_head_(config.n_head) {
  check_config(config);  // built alone too (tests, gradient checks): n_embd must split into n_head heads
  const std::int64_t C = n_embd_;
  c_attn_ = register_module("c_attn", std::make_shared<Linear>(LinearOptions{.in = C, .out = 3 * C}, gen));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(LinearOptions{.in = C, .out = C}, gen));
  if (config.dropout > 0) {
    if (!dropout_gen) throw std::invalid_argument("GPTAttention: dropout > 0 needs a dropout generator");
    attn_dropout_ = register_module("attn_dropout", std::make_shared<Dropout>(config.dropout, dropout_gen));
    resid_dropout_ = register_module("resid_dropout", std::make_shared<Dropout>(config.dropout, dropout_gen));
  }
}

std::string GPTAttention::extra_repr() const { return fmt::format("n_embd={}, n_head={}", n_embd_, n_head_); }

AttentionResult GPTAttention::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.shape()[2] != n_embd_)
    throw std::invalid_argument(fmt::format("GPTAttention: expected x [B, T, {}], got {}", n_embd_, shape_str(x.shape())));
  const std::int64_t B = x.shape()[0], T = x.shape()[1], nh = n_head_, hs = n_embd_ / nh;
  // q, k, v = c_attn(x).split(C, dim=2), each viewed as [B, nh, T, hs]: qkv[0], qkv[1], qkv[2], views of one
  // [B, T, 3C] tensor, no copies
  const Tensor qkv = c_attn_->forward(x).view({B, T, 3, nh, hs}).permute({2, 0, 3, 1, 4});  // [3, B, nh, T, hs]
  const AttentionResult a = attend(qkv);               // y [B, nh, T, hs], att [B, nh, T, T]
  Tensor y = c_proj_->forward(merge_heads(a.output));  // the heads side by side [B, T, C], mixed by c_proj
  if (resid_dropout_) y = resid_dropout_->forward(y);
  return {y, a.weights};
}

// Each head's attention, nanoGPT's "manual implementation":
//   att = q k^T / sqrt(hs)              [B, nh, T, T]  how well position t's query matches each key
//   att = where(causal, att, -inf)                     causal_mask(T) [T, T] is true where key j <= query t, so
//                                                      position t sees positions 0..t only; e^-inf = 0 exactly
//   att = softmax(att, over the keys)                  each row sums to 1
//   y = dropout(att) v                  [B, nh, T, hs] a weighted average of the values
// The first three lines are core's attention_weights (core/ops/attention.h), called below when training with dropout
// (dropout needs att in the graph). Otherwise the four lines run as one op, fused_attention_stacked (faster, no
// [B, nh, T, T] graph nodes; its definition is the same attention_weights, then @ v), which
// GPTAttention.TheFusedOpEqualsTheAttentionWrittenInOps holds equal to the ops.
AttentionResult GPTAttention::attend(const Tensor& qkv) const {
  const std::int64_t T = qkv.shape()[3];
  if (!(attn_dropout_ && is_training())) {
    const FusedAttention f = fused_attention_stacked(qkv, causal_mask(T));  // the same four lines, fused
    return {f.output, f.weights};
  }
  const Tensor q = qkv.select(0, 0), k = qkv.select(0, 1), v = qkv.select(0, 2);  // [B, nh, T, hs]
  const Tensor att = attention_weights(q, k, causal_mask(T), "GPTAttention");     // [B, nh, T, T]
  return {matmul(attn_dropout_->forward(att), v), att.detach()};                  // [B, nh, T, hs]
}

// The new positions' q, k, v [B, nh, t, hs] as forward() computes them; k and v go into the caches, and q attends to
// the cached positions 0..length+t-1 through the same fused op, so the two paths share every kernel.
Tensor GPTAttention::forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                    std::int64_t length) const {
  check_cached_attention_inputs("GPTAttention::forward_cached", x, k_cache, v_cache, length, n_embd_, n_head_);
  if (attn_dropout_ && is_training())
    throw std::invalid_argument("GPTAttention::forward_cached: decoding applies no dropout; call eval() first");
  NoGradGuard no_grad;
  const std::int64_t B = x.shape()[0], t = x.shape()[1], nh = n_head_, hs = n_embd_ / nh;
  const Tensor qkv = c_attn_->forward(x).view({B, t, 3, nh, hs}).permute({2, 0, 3, 1, 4});  // [3, B, nh, t, hs]
  const Tensor q = qkv.select(0, 0), k = qkv.select(0, 1), v = qkv.select(0, 2);           // [B, nh, t, hs]
  return c_proj_->forward(merge_heads(attend_cached(q, k, v, k_cache, v_cache, length)));  // [B, t, C]
}

// ------------------------------------------------------------------------------------------- MLP
MLP::MLP(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  const std::int64_t C = config.n_embd;
  c_fc_ = register_module("c_fc", std::make_shared<Linear>(LinearOptions{.in = C, .out = 4 * C}, gen));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(LinearOptions{.in = 4 * C, .out = C}, gen));
  if (config.dropout > 0) dropout_ = register_module("dropout", std::make_shared<Dropout>(config.dropout, dropout_gen));
}

// gelu_tanh is one op (core/ops/unary.cpp) rather than its formula in five ops here: the [B, T, 4C] activation is
// the model's largest, and one pass over it, one graph node, beats six of each.
Tensor MLP::forward(const Tensor& x) const {
  const Tensor h = gelu_tanh(c_fc_->forward(x));  // [B, T, 4C]
  const Tensor y = c_proj_->forward(h);           // [B, T, C]
  return dropout_ ? dropout_->forward(y) : y;
}

// ------------------------------------------------------------------------------------------- Block
// Registered in nanoGPT's order (ln_1, attn, ln_2, mlp), so named_parameters() lists them as its state_dict does.
Block::Block(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen) {
  const std::int64_t C = config.n_embd;
  ln_1_ = register_module("ln_1", std::make_shared<LayerNorm>(C));
  attn_ = register_module("attn", std::make_shared<GPTAttention>(config, gen, dropout_gen));
  ln_2_ = register_module("ln_2", std::make_shared<LayerNorm>(C));
  mlp_ = register_module("mlp", std::make_shared<MLP>(config, gen, dropout_gen));
}

Tensor Block::forward(const Tensor& x) const { return forward_with_attention(x).output; }

AttentionResult Block::forward_with_attention(const Tensor& x) const {
  const AttentionResult a = attn_->forward(ln_1_->forward(x));  // [B, T, C], weights [B, nh, T, T]
  const Tensor h = add(x, a.output);                            // x = x + attn(ln_1(x))   [B, T, C]
  return {add(h, mlp_->forward(ln_2_->forward(h))), a.weights};  // x = x + mlp(ln_2(x))    [B, T, C]
}

Tensor Block::forward_cached(const Tensor& x, const KVCache::Layer& kv, std::int64_t length) const {
  NoGradGuard no_grad;
  const Tensor h = add(x, attn_->forward_cached(ln_1_->forward(x), kv.k, kv.v, length));  // [B, t, C]
  return add(h, mlp_->forward(ln_2_->forward(h)));                                        // [B, t, C]
}

// ------------------------------------------------------------------------------------------- GPT
namespace {

const GPTConfig& checked(const GPTConfig& config) {
  check_config(config);
  return config;
}

}  // namespace

GPT::GPT(const GPTConfig& config, Generator& gen)
    : config_(checked(config)), dropout_gen_(std::make_shared<Generator>(config.dropout_seed)) {
  const std::int64_t C = config.n_embd;
  transformer_ = register_module("transformer", std::make_shared<Transformer>());
  Transformer& t = *transformer_;
  t.wte = t.register_module("wte", std::make_shared<Embedding>(config.vocab_size, C, gen));
  t.wpe = t.register_module("wpe", std::make_shared<Embedding>(config.block_size, C, gen));
  t.drop = t.register_module("drop", std::make_shared<Dropout>(config.dropout, dropout_gen_));
  t.h = t.register_module("h", std::make_shared<ModuleList<Block>>());
  for (std::int64_t i = 0; i < config.n_layer; ++i) t.h->push_back(std::make_shared<Block>(config, gen, dropout_gen_));
  t.ln_f = t.register_module("ln_f", std::make_shared<LayerNorm>(C));
  // weight tying: lm_head reads wte's table (nanoGPT: self.transformer.wte.weight = self.lm_head.weight)
  const LinearOptions head{.in = C, .out = config.vocab_size, .bias = false};
  lm_head_ = register_module("lm_head", std::make_shared<Linear>(head, t.wte->weight()));
  init_weights(gen);
}

// GPT-2's init (nanoGPT's _init_weights): every Linear and Embedding weight N(0, 0.02), biases 0, LayerNorms 1 and
// 0; the projections that end a residual branch (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 n_layer)), because
// 2 n_layer of them add into the residual stream and its variance should not grow with depth.
void GPT::init_weights(Generator& gen) {
  NoGradGuard no_grad;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.n_layer));
  auto normal = [&](const Tensor& p, double std) { init::normal_(p, std, gen); };
  auto linear = [&](const Linear& l, double std) {
    normal(l.weight(), std);
    if (l.bias().defined()) l.bias().copy_(Tensor::zeros(l.bias().shape(), l.bias().dtype()));
  };
  normal(transformer_->wte->weight(), 0.02);
  normal(transformer_->wpe->weight(), 0.02);
  for (const auto& block : *transformer_->h) {
    linear(*block->attn().c_attn(), 0.02);
    linear(*block->attn().c_proj(), residual_std);
    linear(*block->mlp().c_fc(), 0.02);
    linear(*block->mlp().c_proj(), residual_std);
  }
}

std::string GPT::extra_repr() const {
  return fmt::format("vocab_size={}, block_size={}, n_layer={}, n_head={}, n_embd={}, dropout={:g}", config_.vocab_size,
                     config_.block_size, config_.n_layer, config_.n_head, config_.n_embd, config_.dropout);
}

Tensor GPT::embed(const Tensor& idx) const {
  if (idx.dim() != 2 || idx.dtype() != DType::Int64)
    throw std::invalid_argument("GPT: idx must be [B, T] int64, got " + shape_str(idx.shape()) + " " +
                                dtype_name(idx.dtype()));
  const std::int64_t T = idx.shape()[1];
  if (T > config_.block_size)
    throw std::invalid_argument(
        fmt::format("GPT: cannot read a sequence of length {}, the context (block_size) is {}", T, config_.block_size));
  const Transformer& t = *transformer_;
  const Tensor tok_emb = t.wte->forward(idx);                   // [B, T, C]
  const Tensor pos_emb = t.wpe->forward(Tensor::arange(0, T));  // [T, C]
  return t.drop->forward(add(tok_emb, pos_emb));                // [B, T, C]
}

Tensor GPT::features(const Tensor& idx) const {
  const Transformer& t = *transformer_;
  Tensor x = embed(idx);                                 // [B, T, C]
  for (const auto& block : *t.h) x = block->forward(x);  // [B, T, C]
  return t.ln_f->forward(x);                             // [B, T, C]
}

namespace {

void check_targets(const Tensor& idx, const Tensor& targets) {
  if (targets.defined() && targets.shape() != idx.shape())
    throw std::invalid_argument("GPT: targets " + shape_str(targets.shape()) + " must be shaped like idx " +
                                shape_str(idx.shape()));
}

}  // namespace

GPTOutput GPT::forward(const Tensor& idx, const Tensor& targets) const {
  check_targets(idx, targets);
  const Tensor logits = lm_head_->forward(features(idx));  // [B, T, V]
  // The mean over the counted positions of -log softmax(logits)[target]. A target of -1 (padding after a short line)
  // is not counted; its position needs no mask in the attention either: padding comes after a line's tokens, so the
  // causal mask already hides it from every counted position.
  Tensor loss = targets.defined() ? cross_entropy(logits, targets, /*ignore_index=*/-1) : Tensor();
  return {logits, loss};
}

Tensor GPT::loss(const Tensor& idx, const Tensor& targets) const {
  if (!targets.defined()) throw std::invalid_argument("GPT::loss: needs targets [B, T], shaped like idx");
  check_targets(idx, targets);
  // lm_head then cross_entropy, as forward(), in one op: lm_head has no bias, and no adapter (its weight is wte's)
  return linear_cross_entropy(features(idx), lm_head_->weight(), targets, /*ignore_index=*/-1);  // []
}

KVCache GPT::make_cache(std::int64_t batch) const {
  const GPTConfig& c = config_;
  return KVCache(c.n_layer, batch, c.n_head, c.block_size, c.n_embd / c.n_head, lm_head_->weight().dtype());
}

namespace {

void check_forward_cached(const Tensor& idx, const KVCache& cache, const GPTConfig& c, bool training) {
  if (idx.dim() != 2 || idx.dtype() != DType::Int64 || idx.shape()[1] < 1)
    throw std::invalid_argument(fmt::format("GPT::forward_cached: idx must be [B, t] int64 with t >= 1, got {} {}",
                                            shape_str(idx.shape()), dtype_name(idx.dtype())));
  if (static_cast<std::int64_t>(cache.layers.size()) != c.n_layer || cache.capacity() != c.block_size)
    throw std::invalid_argument(fmt::format("GPT::forward_cached: the cache has {} layers of {} positions, the model "
                                            "{} of {}: make it with make_cache",
                                            cache.layers.size(), cache.capacity(), c.n_layer, c.block_size));
  if (idx.shape()[0] != cache.batch())
    throw std::invalid_argument(fmt::format("GPT::forward_cached: idx {} has batch {}, the cache batch {}",
                                            shape_str(idx.shape()), idx.shape()[0], cache.batch()));
  if (cache.length + idx.shape()[1] > c.block_size)
    throw std::invalid_argument(fmt::format("GPT::forward_cached: {} new tokens after {} cached run past the context "
                                            "(block_size) {}", idx.shape()[1], cache.length, c.block_size));
  if (c.dropout > 0 && training)
    throw std::invalid_argument(fmt::format("GPT::forward_cached: decoding applies no dropout, the model is in "
                                            "training mode with dropout {:g}: call eval() first", c.dropout));
}

}  // namespace

// forward() on the new tokens only: their embeddings at their own positions, each block reading and extending its
// layer of the cache.
Tensor GPT::forward_cached(const Tensor& idx, KVCache& cache) const {
  check_forward_cached(idx, cache, config_, is_training());
  NoGradGuard no_grad;
  const std::int64_t start = cache.length, t = idx.shape()[1];
  const Transformer& tr = *transformer_;
  Tensor x = add(tr.wte->forward(idx), tr.wpe->forward(Tensor::arange(start, start + t)));  // [B, t, C]
  for (std::size_t i = 0; i < cache.layers.size(); ++i)
    x = (*tr.h)[i].forward_cached(x, cache.layers[i], start);                              // [B, t, C]
  cache.length = start + t;
  return lm_head_->forward(tr.ln_f->forward(x));                                            // [B, t, V]
}

std::vector<Tensor> GPT::attention(const Tensor& idx) const {
  Tensor x = embed(idx);  // [B, T, C]
  std::vector<Tensor> maps;
  for (const auto& block : *transformer_->h) {
    AttentionResult a = block->forward_with_attention(x);
    x = a.output;
    maps.push_back(a.weights);  // [B, nh, T, T]
  }
  return maps;
}

}  // namespace cppgrad::nn
