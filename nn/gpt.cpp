#include "nn/gpt.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/softmax.h"

namespace cppgrad::nn {

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
  auto normal = [&](const Tensor& p, double std) { p.copy_(mul(Tensor::randn(p.shape(), gen, p.dtype()), std)); };
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

GPTOutput GPT::forward(const Tensor& idx, const Tensor& targets) const {
  if (idx.dim() != 2 || idx.dtype() != DType::Int64)
    throw std::invalid_argument("GPT: idx must be [B, T] int64, got " + shape_str(idx.shape()) + " " +
                                dtype_name(idx.dtype()));
  const std::int64_t T = idx.shape()[1];
  if (T > config_.block_size)
    throw std::invalid_argument(
        fmt::format("GPT: cannot read a sequence of length {}, the context (block_size) is {}", T, config_.block_size));
  if (targets.defined() && targets.shape() != idx.shape())
    throw std::invalid_argument("GPT: targets " + shape_str(targets.shape()) + " must be shaped like idx " +
                                shape_str(idx.shape()));
  const Transformer& t = *transformer_;
  const Tensor tok_emb = t.wte->forward(idx);                   // [B, T, C]
  const Tensor pos_emb = t.wpe->forward(Tensor::arange(0, T));  // [T, C]
  Tensor x = t.drop->forward(add(tok_emb, pos_emb));            // [B, T, C]
  for (const auto& block : *t.h) x = block->forward(x);         // [B, T, C]
  const Tensor logits = lm_head_->forward(t.ln_f->forward(x));  // [B, T, V]
  Tensor loss = targets.defined() ? cross_entropy(logits, targets, /*ignore_index=*/-1) : Tensor();
  return {remember_output(logits), loss};
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
  return remember_output(lm_head_->forward(tr.ln_f->forward(x)));                           // [B, t, V]
}

std::vector<Tensor> GPT::attention_maps() const {
  std::vector<Tensor> maps;
  for (const auto& block : *transformer_->h) maps.push_back(block->last_attention());
  return maps;
}

}  // namespace cppgrad::nn
