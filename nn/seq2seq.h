#pragma once
// The encoder-decoder transformer of the reversal task.
//
//   encode:  x = src_embed(src) + pos(0..S-1)            [B, S, D]
//            x = encoder[i](x, src_mask) for each layer   -> memory [B, S, D]
//   decode:  y = tgt_embed(dec_in) + pos(0..T-1)          [B, T, D]
//            y = decoder[i](y, memory, causal, memory_mask)
//            logits = out(y)                              [B, T, V_out]
//
// Parameter names follow the golden PyTorch model: src_embed, src_pos, tgt_embed, tgt_pos, encoder.N.*,
// decoder.N.*, out.
#include <memory>
#include <vector>

#include "core/config_table.h"
#include "nn/embedding.h"
#include "nn/kv_cache.h"
#include "nn/linear.h"
#include "nn/positional.h"
#include "nn/transformer.h"

namespace cppgrad::nn {

enum class PositionalKind { Learned, Sinusoidal };

// The model's options. Each field is declared once more, as a row of seq2seq_options_table() (nn/seq2seq.cpp): its
// name in a checkpoint, the flag `cppgrad-reverse train` sets it by, its bound.
struct Seq2SeqOptions {
  std::int64_t src_vocab = 10;   // encoder input ids in [0, src_vocab)
  std::int64_t tgt_vocab = 11;   // decoder input ids (the output vocabulary plus BOS)
  std::int64_t out_vocab = 10;   // logits per position
  std::int64_t d_model = 32;
  std::int64_t n_heads = 4;
  std::int64_t n_encoder_layers = 2;
  std::int64_t n_decoder_layers = 2;
  std::int64_t d_ff = 64;
  std::int64_t max_len = 50;
  double dropout = 0.0;
  double eps = 1e-5;
  bool norm_first = false;
  Activation activation = Activation::Relu;
  CrossAttentionKind cross_attention = CrossAttentionKind::ScaledDot;
  PositionalKind positional = PositionalKind::Learned;
  std::uint64_t dropout_seed = 0;  // the dropout masks' own generator

  // The largest a config read from a file or typed as a flag may ask for (a model built in code is not held to them).
  static constexpr std::int64_t kMaxVocab = 100'002;  // the reversal task's 100,000 tokens, plus BOS and PAD
  static constexpr std::int64_t kMaxWidth = 16'384;   // d_model, d_ff
  static constexpr std::int64_t kMaxLayers = 64;
  static constexpr std::int64_t kMaxPositions = 1'026;

  bool operator==(const Seq2SeqOptions&) const = default;
  // The options as a checkpoint stores the model: {"d_model": 32, "n_heads": 4, ...}, every row's key.
  std::string to_json() const;
  // And back: a key left out takes its default, an unknown key or a value out of its bound is a std::invalid_argument
  // naming it. Nothing is allocated.
  static Seq2SeqOptions from_json(const std::string& json);
};

// Seq2SeqOptions' rows: their names, the flags that set them (--heads sets n_heads, --positions max_len; the
// vocabularies have none, the data sets them), their bounds.
const ConfigTable<Seq2SeqOptions>& seq2seq_options_table();

// Attention weights of one layer, for plots: "encoder.0.self_attn", "decoder.1.cross_attn", ...
struct NamedAttention {
  std::string name;
  Tensor weights;
};

// The values a Seq2SeqTransformer of these options holds in its state_dict(), without building it: what a file's
// tensors must hold for the model to load them.
std::int64_t state_dict_numel(const Seq2SeqOptions& options);

class Seq2SeqTransformer : public Module {
 public:
  Seq2SeqTransformer(const Seq2SeqOptions& options, Generator& gen);
  std::string type_name() const override { return "Seq2SeqTransformer"; }
  std::string extra_repr() const override;
  const Seq2SeqOptions& options() const { return options_; }

  // src: [B, S] int64  src_mask: key padding, e.g. [B, 1, 1, S] (undefined: attend everywhere) -> memory [B, S, D]
  Tensor encode(const Tensor& src, const Tensor& src_mask = Tensor()) const;
  // dec_in: [B, T] int64  memory: [B, S, D] -> logits [B, T, out_vocab]
  Tensor decode(const Tensor& dec_in, const Tensor& memory, const Tensor& memory_mask = Tensor()) const;
  Tensor forward(const Tensor& src, const Tensor& dec_in, const Tensor& src_mask = Tensor()) const {
    return decode(dec_in, encode(src, src_mask), src_mask);
  }

  // Incremental decoding (nn/kv_cache.h), the GPT's design: the encoder's memory, its keys and values projected once
  // per decoder layer, and a KVCache with one layer per decoder layer, allocated once for the whole decode.
  // decode_step feeds one token per row and returns the logits of that position; they equal those of decode() on
  // the whole prefix. Copying a state shares its cache's buffers (see KVCache).
  struct DecodeState {
    Tensor memory, memory_mask;                            // [B, S, D], key padding over S (or undefined)
    std::vector<MultiHeadAttention::KeyValues> memory_kv;  // per decoder layer: [B, H, S, dh] (scaled-dot cross only)
    KVCache self;  // per decoder layer: its self-attention's keys and values; self.length = positions decoded so far
  };
  // max_length: the most positions the decode will feed (1..max_len); the caches hold that many.
  DecodeState start_decoding(const Tensor& memory, const Tensor& memory_mask, std::int64_t max_length) const;
  // tokens: [B] int64, the decoder input at position state.self.length -> logits [B, out_vocab]. Inference only.
  Tensor decode_step(DecodeState& state, const Tensor& tokens) const;

  // forward()'s inputs -> the weights of every attention layer (detached), in order: encoder.i.self_attn, then
  // decoder.i.self_attn and decoder.i.cross_attn. Its own forward, under no grad: the model keeps nothing.
  std::vector<NamedAttention> attention(const Tensor& src, const Tensor& dec_in, const Tensor& src_mask = Tensor()) const;
  // Dropout draws from this generator; exposed so checkpoints can save and restore its state.
  Generator& dropout_generator() const { return *dropout_gen_; }

 private:
  // ids: [B, L] at positions first_position .. first_position+L-1 -> [B, L, D]
  Tensor embed(const Embedding& table, const Module* learned_pos, const Tensor& ids, std::int64_t first_position = 0) const;

  Seq2SeqOptions options_;
  std::shared_ptr<Generator> dropout_gen_;
  std::shared_ptr<Embedding> src_embed_, tgt_embed_, src_pos_, tgt_pos_;  // positions: null when sinusoidal
  std::shared_ptr<SinusoidalPositionalEncoding> sinusoid_;
  std::shared_ptr<ModuleList<TransformerEncoderLayer>> encoder_;
  std::shared_ptr<ModuleList<TransformerDecoderLayer>> decoder_;
  std::shared_ptr<Linear> out_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace cppgrad::nn
