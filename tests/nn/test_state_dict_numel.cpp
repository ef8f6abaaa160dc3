// nn::state_dict_numel: the values a model of a config holds in its state dict, without building it (a checkpoint's
// tensors are checked against it before its config's model is built, train/checkpoint.h's check_model_size). It must
// be exactly what the built model's state_dict() holds, for every shape and option.
#include <vector>

#include "nn/gpt.h"
#include "nn/seq2seq.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;

std::int64_t held(const Module& m) {
  std::int64_t n = 0;
  for (const auto& [name, t] : m.state_dict()) n += t.numel();
  return n;
}

TEST(StateDictNumel, IsTheBuiltGptsStateDict) {
  for (const GPTConfig& c : std::vector<GPTConfig>{
           {.block_size = 5, .vocab_size = 7, .n_layer = 2, .n_head = 2, .n_embd = 8},
           {.block_size = 1, .vocab_size = 1, .n_layer = 1, .n_head = 1, .n_embd = 1},
           {.block_size = 64, .vocab_size = 300, .n_layer = 3, .n_head = 4, .n_embd = 48, .dropout = 0.1},
       }) {
    Generator gen(0);
    const GPT model(c, gen);
    SCOPED_TRACE(model.extra_repr());
    EXPECT_EQ(state_dict_numel(c), held(model));
  }
  // Every value of every choice row of GPTConfig's table (a field added as a choice, a norm say, is built here at each
  // of its values without this test changing).
  for (const auto& row : gpt_config_table().rows())
    for (const std::string& name : row.choices) {
      GPTConfig c{.block_size = 5, .vocab_size = 7, .n_layer = 2, .n_head = 2, .n_embd = 8};
      row.set(c, name);
      Generator gen(0);
      const GPT model(c, gen);
      SCOPED_TRACE(row.name + " " + name);
      EXPECT_EQ(state_dict_numel(c), held(model));
    }
  // nanoGPT's parameter count (1856 for the small config) and the tied head counted once more.
  EXPECT_EQ(state_dict_numel({.block_size = 5, .vocab_size = 7, .n_layer = 2, .n_head = 2, .n_embd = 8}), 1856 + 7 * 8);
}

TEST(StateDictNumel, IsTheBuiltSeq2SeqsStateDict) {
  std::vector<Seq2SeqOptions> cases;
  for (const auto cross : {CrossAttentionKind::ScaledDot, CrossAttentionKind::Additive, CrossAttentionKind::Multiplicative})
    for (const auto positional : {PositionalKind::Learned, PositionalKind::Sinusoidal})
      for (const std::int64_t encoders : {0, 2})
        cases.push_back({.src_vocab = 5, .tgt_vocab = 7, .out_vocab = 6, .d_model = 8, .n_heads = 2,
                         .n_encoder_layers = encoders, .n_decoder_layers = 3, .d_ff = 12, .max_len = 9,
                         .dropout = 0.1, .cross_attention = cross, .positional = positional});
  for (const auto& row : seq2seq_options_table().rows())  // every value of every choice row, as for the GPT
    for (const std::string& name : row.choices) {
      Seq2SeqOptions o{.src_vocab = 5, .tgt_vocab = 7, .out_vocab = 6, .d_model = 8, .n_heads = 2, .d_ff = 12, .max_len = 9};
      row.set(o, name);
      cases.push_back(o);
    }
  for (const Seq2SeqOptions& o : cases) {
    Generator gen(0);
    const Seq2SeqTransformer model(o, gen);
    SCOPED_TRACE(model.extra_repr());
    EXPECT_EQ(state_dict_numel(o), held(model));
  }
}

}  // namespace
}  // namespace cppgrad
