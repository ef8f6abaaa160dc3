#include "nn/seq2seq.h"

#include "core/autograd.h"
#include "nn/attention.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/elementwise.h"

namespace cppgrad::nn {

Seq2SeqTransformer::Seq2SeqTransformer(const Seq2SeqOptions& options, Generator& gen)
    : options_(options), dropout_gen_(std::make_shared<Generator>(options.dropout_seed)) {
  const std::int64_t D = options.d_model;
  src_embed_ = register_module("src_embed", std::make_shared<Embedding>(options.src_vocab, D, gen));
  if (options.positional == PositionalKind::Learned)
    src_pos_ = register_module("src_pos", std::make_shared<Embedding>(options.max_len, D, gen));
  tgt_embed_ = register_module("tgt_embed", std::make_shared<Embedding>(options.tgt_vocab, D, gen));
  if (options.positional == PositionalKind::Learned)
    tgt_pos_ = register_module("tgt_pos", std::make_shared<Embedding>(options.max_len, D, gen));
  else
    sinusoid_ = register_module("pos", std::make_shared<SinusoidalPositionalEncoding>(options.max_len, D));
  const TransformerLayerOptions layer{.d_model = D,
                                      .n_heads = options.n_heads,
                                      .d_ff = options.d_ff,
                                      .dropout = options.dropout,
                                      .eps = options.eps,
                                      .norm_first = options.norm_first,
                                      .activation = options.activation,
                                      .cross_attention = options.cross_attention};
  encoder_ = register_module("encoder", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (std::int64_t i = 0; i < options.n_encoder_layers; ++i)
    encoder_->push_back(std::make_shared<TransformerEncoderLayer>(layer, gen, dropout_gen_));
  decoder_ = register_module("decoder", std::make_shared<ModuleList<TransformerDecoderLayer>>());
  for (std::int64_t i = 0; i < options.n_decoder_layers; ++i)
    decoder_->push_back(std::make_shared<TransformerDecoderLayer>(layer, gen, dropout_gen_));
  out_ = register_module("out", std::make_shared<Linear>(LinearOptions{.in = D, .out = options.out_vocab}, gen));
  if (options.dropout > 0) dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, dropout_gen_));
}

const ConfigTable<Seq2SeqOptions>& seq2seq_options_table() {
  using O = Seq2SeqOptions;
  const auto vocab = [](const char* name, std::int64_t O::*member) {
    return named(name, field<O>("", "model", "token ids (the data sets it)", at(member), in_range(1, O::kMaxVocab)));
  };
  static const ConfigTable<O> table = {
      field<O>("d-model", "model", "model width", at(&O::d_model), in_range(1, O::kMaxWidth)),
      named("n_heads", field<O>("heads", "model", "attention heads (must divide d-model)", at(&O::n_heads),
                                in_range(1, O::kMaxWidth))),
      named("n_encoder_layers", field<O>("encoder-layers", "model", "encoder layers", at(&O::n_encoder_layers),
                                         in_range(0, O::kMaxLayers))),
      named("n_decoder_layers", field<O>("decoder-layers", "model", "decoder layers", at(&O::n_decoder_layers),
                                         in_range(1, O::kMaxLayers))),
      field<O>("d-ff", "model", "feed-forward width", at(&O::d_ff), in_range(1, O::kMaxWidth)),
      // Named by its flag, not max_len: the reversal run's own max_len (the longest sequence) sits in the same table.
      field<O>("positions", "model", "rows of the learned position tables", at(&O::max_len), in_range(1, O::kMaxPositions)),
      field<O>("dropout", "model", "dropout probability", at(&O::dropout), in_interval(0, 1, true)),
      named("cross_attention", choice<O>("attention", "model", "cross-attention: scaled_dot | additive | multiplicative",
                                         at(&O::cross_attention), kCrossAttentionChoices)),
      vocab("src_vocab", &O::src_vocab),
      vocab("tgt_vocab", &O::tgt_vocab),
      vocab("out_vocab", &O::out_vocab),
      named("eps", field<O>("", "model", "LayerNorm's epsilon", at(&O::eps), in_interval(0, 1, false))),
      named("norm_first", choice<O>("", "model", "pre-LN (true) or post-LN", at(&O::norm_first),
                                    Choices<bool>{{"false", false}, {"true", true}})),
      named("activation", choice<O>("", "model", "the feed-forward's activation", at(&O::activation),
                                    Choices<Activation>{{"relu", Activation::Relu}, {"gelu", Activation::Gelu}})),
      named("positional", choice<O>("", "model", "position codes", at(&O::positional),
                                    Choices<PositionalKind>{{"learned", PositionalKind::Learned},
                                                            {"sinusoidal", PositionalKind::Sinusoidal}})),
      named("dropout_seed", field<O>("", "model", "the dropout masks' generator's seed", at(&O::dropout_seed))),
  };
  return table;
}

std::string Seq2SeqOptions::to_json() const { return seq2seq_options_table().to_json(*this); }

Seq2SeqOptions Seq2SeqOptions::from_json(const std::string& json) {
  const Seq2SeqOptions o = seq2seq_options_table().from_json(json, ConfigTable<Seq2SeqOptions>::Keys::stored, "model");
  seq2seq_options_table().check(o);
  check_heads_divide(o.n_heads, o.d_model, "n_heads", "d_model");
  return o;
}

std::int64_t state_dict_numel(const Seq2SeqOptions& o) {
  const std::int64_t D = o.d_model, F = o.d_ff;
  const std::int64_t attention = 4 * D * D;  // W_q, W_k, W_v, W_o, no biases
  const std::int64_t ffn = 2 * D * F + F + D;   // lin1 and lin2 with biases
  std::int64_t cross = attention;
  if (o.cross_attention == CrossAttentionKind::Additive) cross = 2 * D * D + D;  // W1, W2, v
  if (o.cross_attention == CrossAttentionKind::Multiplicative) cross = D * D;    // W
  const std::int64_t encoder_layer = attention + ffn + 2 * 2 * D;         // norm1, norm2
  const std::int64_t decoder_layer = attention + cross + ffn + 3 * 2 * D;  // norm1..norm3
  const std::int64_t positions = o.positional == PositionalKind::Learned ? 2 * o.max_len * D : 0;  // src_pos, tgt_pos
  return (o.src_vocab + o.tgt_vocab) * D + positions + o.n_encoder_layers * encoder_layer +
         o.n_decoder_layers * decoder_layer + D * o.out_vocab + o.out_vocab;
}

std::string Seq2SeqTransformer::extra_repr() const {
  return fmt::format("d_model={}, heads={}, layers={}+{}, cross={}", options_.d_model, options_.n_heads,
                     options_.n_encoder_layers, options_.n_decoder_layers, cross_attention_name(options_.cross_attention));
}

// ids: [B, L] -> token embedding + position code [B, L, D]
Tensor Seq2SeqTransformer::embed(const Embedding& table, const Module* learned_pos, const Tensor& ids,
                                 std::int64_t first_position) const {
  if (ids.dim() != 2 || ids.dtype() != DType::Int64)
    throw std::invalid_argument("Seq2SeqTransformer: token ids must be [B, L] int64, got " + shape_str(ids.shape()) + " " +
                                dtype_name(ids.dtype()));
  const std::int64_t L = ids.shape()[1], end = first_position + L;
  if (end > options_.max_len)
    throw std::invalid_argument(fmt::format("Seq2SeqTransformer: sequence length {} exceeds max_len {}", end, options_.max_len));
  Tensor x = table.forward(ids);  // [B, L, D]
  Tensor pos = learned_pos ? static_cast<const Embedding*>(learned_pos)->forward(Tensor::arange(first_position, end))
                           : sinusoid_->forward(end).slice(0, first_position, end).to(x.dtype());  // [L, D]
  x = add(x, pos);
  return dropout_ ? dropout_->forward(x) : x;
}

Tensor Seq2SeqTransformer::encode(const Tensor& src, const Tensor& src_mask) const {
  Tensor x = embed(*src_embed_, src_pos_.get(), src);
  for (const auto& layer : *encoder_) x = layer->forward(x, src_mask);
  return x;  // memory [B, S, D]
}

Tensor Seq2SeqTransformer::decode(const Tensor& dec_in, const Tensor& memory, const Tensor& memory_mask) const {
  Tensor y = embed(*tgt_embed_, tgt_pos_.get(), dec_in);
  for (const auto& layer : *decoder_) y = layer->forward(y, memory, Tensor(), memory_mask);
  return out_->forward(y);  // [B, T, out_vocab]
}

Seq2SeqTransformer::DecodeState Seq2SeqTransformer::start_decoding(const Tensor& memory, const Tensor& memory_mask,
                                                                   std::int64_t max_length) const {
  if (memory.dim() != 3 || memory.shape()[2] != options_.d_model)
    throw std::invalid_argument(fmt::format("Seq2SeqTransformer::start_decoding: memory must be [B, S, {}], got {}",
                                            options_.d_model, shape_str(memory.shape())));
  if (max_length < 1 || max_length > options_.max_len)
    throw std::invalid_argument(fmt::format("Seq2SeqTransformer::start_decoding: max_length must be in [1, {}] "
                                            "(max_len), got {}", options_.max_len, max_length));
  const std::int64_t H = options_.n_heads;
  DecodeState state{memory, memory_mask, {},
                    KVCache(static_cast<std::int64_t>(decoder_->size()), memory.shape()[0], H, max_length,
                            options_.d_model / H, out_->weight().dtype())};
  for (const auto& layer : *decoder_) state.memory_kv.push_back(layer->project_memory(memory));
  return state;
}

Tensor Seq2SeqTransformer::decode_step(DecodeState& state, const Tensor& tokens) const {
  if (tokens.dim() != 1)
    throw std::invalid_argument("decode_step: tokens must be [B], got " + shape_str(tokens.shape()));
  NoGradGuard no_grad;
  const std::int64_t position = state.self.length;
  if (position >= state.self.capacity())
    throw std::invalid_argument(fmt::format("decode_step: position {} is past the {} the state was started for "
                                            "(start_decoding's max_length)", position, state.self.capacity()));
  Tensor y = embed(*tgt_embed_, tgt_pos_.get(), tokens.unsqueeze(1), position);  // [B, 1, D]
  for (std::size_t i = 0; i < decoder_->size(); ++i)
    y = (*decoder_)[i].forward_cached(y, state.memory, state.memory_mask, state.memory_kv[i], state.self.layers[i],
                                      position);  // [B, 1, D]
  state.self.length = position + 1;
  return out_->forward(y).squeeze(1);  // [B, out_vocab]
}

std::vector<NamedAttention> Seq2SeqTransformer::attention(const Tensor& src, const Tensor& dec_in,
                                                          const Tensor& src_mask) const {
  NoGradGuard no_grad;
  std::vector<NamedAttention> maps;
  Tensor x = embed(*src_embed_, src_pos_.get(), src);  // encode, keeping each layer's weights
  for (std::size_t i = 0; i < encoder_->size(); ++i) {
    AttentionResult r = (*encoder_)[i].forward_with_attention(x, src_mask);
    x = r.output;
    maps.push_back({fmt::format("encoder.{}.self_attn", i), r.weights});
  }
  Tensor y = embed(*tgt_embed_, tgt_pos_.get(), dec_in);  // decode, the same
  for (std::size_t i = 0; i < decoder_->size(); ++i) {
    TransformerDecoderLayer::Attended r = (*decoder_)[i].forward_with_attention(y, x, Tensor(), src_mask);
    y = r.output;
    maps.push_back({fmt::format("decoder.{}.self_attn", i), r.self_weights});
    maps.push_back({fmt::format("decoder.{}.cross_attn", i), r.cross_weights});
  }
  return maps;
}

}  // namespace cppgrad::nn
