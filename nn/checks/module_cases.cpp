// Gradient-check cases of every module and of the whole model, with the parameters as extra inputs: the
// Jacobian covers every parameter too.
#include <cmath>
#include <memory>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/elementwise.h"
#include "core/ops/softmax.h"
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/checks/registry.h"
#include "nn/embedding.h"
#include "nn/feed_forward.h"
#include "nn/gpt.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/lora.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"

namespace cppgrad::checks {

namespace {

using namespace nn;

// A module checked in float64 with its parameters as extra inputs: the Jacobian covers every parameter too.
template <typename M, typename F>
Prepared module_case(std::shared_ptr<M> module, Inputs inputs, F forward) {
  module->to(DType::Float64);
  for (const Tensor& p : module->parameters()) inputs.push_back(p);
  return Prepared{forward, inputs, module};
}

// [B, 1, 1, Lk] key padding: batch 0 sees all keys, batch 1 only the first `keep`.
Tensor padding_mask(std::int64_t Lk, std::int64_t keep) {
  return key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({Lk, keep}, {2}), Lk);
}

// The whole model, end to end through the loss.
Prepared seq2seq_case(CrossAttentionKind cross, PositionalKind positional, std::uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_shared<Seq2SeqTransformer>(Seq2SeqOptions{.src_vocab = 5,
                                                                   .tgt_vocab = 6,
                                                                   .out_vocab = 5,
                                                                   .d_model = 4,
                                                                   .n_heads = 2,
                                                                   .n_encoder_layers = 1,
                                                                   .n_decoder_layers = 1,
                                                                   .d_ff = 6,
                                                                   .max_len = 4,
                                                                   .cross_attention = cross,
                                                                   .positional = positional},
                                                    gen);
  Generator ids(seed);
  Tensor src = Tensor::randint(1, 5, {2, 3}, ids), dec_in = Tensor::randint(1, 6, {2, 3}, ids);
  Tensor tgt = Tensor::randint(0, 5, {2, 3}, ids);
  return module_case(model, Inputs{}, [=](const Inputs&) { return cross_entropy(model->forward(src, dec_in), tgt); });
}

// Linear, Embedding, LayerNorm, FeedForward.
void layer_cases(const CaseAdder& check) {
  check("LinearModule", [](std::uint64_t seed) {
    Generator gen(seed + 1);
    auto lin = std::make_shared<Linear>(LinearOptions{.in = 3, .out = 4}, gen);
    return module_case(lin, Inputs{leaf({2, 3}, seed + 1)}, [=](const Inputs& in) { return lin->forward(in[0]); });
  });
  check("LinearModuleWithoutBias", [](std::uint64_t seed) {
    Generator gen(seed + 2);
    auto lin = std::make_shared<Linear>(LinearOptions{.in = 3, .out = 2, .bias = false}, gen);
    return module_case(lin, Inputs{leaf({2, 2, 3}, seed + 2)}, [=](const Inputs& in) { return lin->forward(in[0]); });
  });
  // The adapter's parameters and the input, the frozen weight and bias held fixed; B drawn away from its zero start,
  // so that A's gradient (B^T g x, scaled) is not zero too.
  check("LoRALinearModule", [](std::uint64_t seed) {
    Generator gen(seed + 9);
    auto lin = std::make_shared<Linear>(LinearOptions{.in = 4, .out = 3}, gen);
    lin->add_lora({.rank = 2, .alpha = 3.0}, gen);
    lin->to(DType::Float64);
    lin->lora()->B().set_data(leaf({3, 2}, seed + 9).detach());
    Inputs inputs{leaf({2, 4}, seed + 10)};
    for (const auto& [name, p] : lin->named_trainable_parameters()) inputs.push_back(p);
    return Prepared{[=](const Inputs& in) { return lin->forward(in[0]); }, inputs, lin};
  });
  check("EmbeddingModule", [](std::uint64_t seed) {
    Generator gen(seed + 3);
    auto emb = std::make_shared<Embedding>(5, 3, gen);
    Tensor ids = Tensor::from_vector<std::int64_t>({0, 4, 4, 2}, {2, 2});
    return module_case(emb, Inputs{}, [=](const Inputs&) { return emb->forward(ids); });
  });
  check("LayerNormModule", [](std::uint64_t seed) {
    auto norm = std::make_shared<LayerNorm>(4);
    return module_case(norm, Inputs{leaf({3, 4}, seed + 4, -2, 2)}, [=](const Inputs& in) { return norm->forward(in[0]); });
  });
  check("FeedForwardRelu", [](std::uint64_t seed) {
    Generator gen(seed + 5);
    auto ffn = std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 5}, gen);
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 5)}, [=](const Inputs& in) { return ffn->forward(in[0]); });
  });
  check("FeedForwardGelu", [](std::uint64_t seed) {
    Generator gen(seed + 6);
    auto ffn =
        std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 4, .activation = Activation::Gelu}, gen);
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 6)}, [=](const Inputs& in) { return ffn->forward(in[0]); });
  });
  check("FeedForwardWithDropoutInTraining", [](std::uint64_t seed) {
    Generator gen(seed + 7);
    auto dgen = std::make_shared<Generator>(0);
    auto ffn = std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 6, .dropout = 0.3}, gen, dgen);
    // Re-seed before each evaluation so every forward draws the same mask.
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 7)}, [=](const Inputs& in) {
      dgen->manual_seed(11);
      return ffn->forward(in[0]);
    });
  });
}

// Every attention: scaled dot-product, single-head and causal self-attention, multi-head, additive, multiplicative.
void attention_module_cases(const CaseAdder& check) {
  check("ScaledDotProductAttention", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).output; },
                    Inputs{leaf({2, 3, 4}, seed + 8), leaf({2, 5, 4}, seed + 9), leaf({2, 5, 3}, seed + 10)}};
  });
  check("ScaledDotProductAttentionWeights", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).weights; },
                    Inputs{leaf({2, 3, 4}, seed + 11), leaf({2, 5, 4}, seed + 12), leaf({2, 5, 3}, seed + 13)}};
  });
  check("ScaledDotProductAttentionCausalMask", [](std::uint64_t seed) {
    Tensor mask = causal_mask(4);
    return Prepared{[mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 2, 4, 3}, seed + 14), leaf({2, 2, 4, 3}, seed + 15), leaf({2, 2, 4, 3}, seed + 16)}};
  });
  check("ScaledDotProductAttentionKeyPadding", [](std::uint64_t seed) {
    Tensor mask = padding_mask(5, 3).squeeze(1);  // [B, 1, Lk]
    return Prepared{[mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 3, 4}, seed + 17), leaf({2, 5, 4}, seed + 18), leaf({2, 5, 2}, seed + 19)}};
  });
  check("SelfAttention", [](std::uint64_t seed) {
    Generator gen(seed + 20);
    auto attn = std::make_shared<SelfAttention>(SelfAttentionOptions{.d_model = 4, .d_k = 3, .d_v = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 20)},
                       [=](const Inputs& in) { return attn->forward(in[0]).output; });
  });
  check("SelfAttentionMasked", [](std::uint64_t seed) {
    Generator gen(seed + 21);
    auto attn = std::make_shared<SelfAttention>(SelfAttentionOptions{.d_model = 4, .d_k = 3, .d_v = 3}, gen);
    Tensor mask = causal_mask(3);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 21)},
                       [=](const Inputs& in) { return attn->forward(in[0], mask).output; });
  });
  check("CausalSelfAttention", [](std::uint64_t seed) {
    Generator gen(seed + 22);
    auto attn = std::make_shared<CausalSelfAttention>(CausalSelfAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 22)},
                       [=](const Inputs& in) { return attn->forward(in[0]).output; });
  });
  check("GPTAttention", [](std::uint64_t seed) {
    Generator gen(seed + 53);
    auto attn = std::make_shared<GPTAttention>(GPTConfig{.n_head = 2, .n_embd = 4}, gen);  // nn.Linear's init
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 53)},
                       [=](const Inputs& in) { return attn->forward(in[0]).output; });
  });
  check("MultiHeadAttentionSelf", [](std::uint64_t seed) {
    Generator gen(seed + 23);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    return module_case(mha, Inputs{leaf({2, 3, 4}, seed + 23)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[0], in[0]).output; });
  });
  check("MultiHeadAttentionCausalSelf", [](std::uint64_t seed) {
    Generator gen(seed + 24);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    Tensor mask = causal_mask(3);
    return module_case(mha, Inputs{leaf({2, 3, 4}, seed + 24)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[0], in[0], mask).output; });
  });
  check("MultiHeadAttentionCrossWithPadding", [](std::uint64_t seed) {
    // Lq = 2 queries against Lk = 4 keys, the second batch's last key padded away.
    Generator gen(seed + 25);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    Tensor mask = padding_mask(4, 3);
    return module_case(mha, Inputs{leaf({2, 2, 4}, seed + 25), leaf({2, 4, 4}, seed + 26)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[1], in[1], mask).output; });
  });
  check("AdditiveAttention", [](std::uint64_t seed) {
    Generator gen(seed + 27);
    auto attn =
        std::make_shared<AdditiveAttention>(AdditiveAttentionOptions{.d_query = 3, .d_key = 4, .d_hidden = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 1, 3}, seed + 27), leaf({2, 4, 4}, seed + 28), leaf({2, 4, 2}, seed + 29)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2]).output; });
  });
  check("AdditiveAttentionMaskedSeveralQueries", [](std::uint64_t seed) {
    Generator gen(seed + 30);
    auto attn =
        std::make_shared<AdditiveAttention>(AdditiveAttentionOptions{.d_query = 3, .d_key = 3, .d_hidden = 2}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(attn, Inputs{leaf({2, 2, 3}, seed + 30), leaf({2, 4, 3}, seed + 31), leaf({2, 4, 2}, seed + 32)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2], mask).output; });
  });
  check("MultiplicativeAttention", [](std::uint64_t seed) {
    Generator gen(seed + 33);
    auto attn =
        std::make_shared<MultiplicativeAttention>(MultiplicativeAttentionOptions{.d_query = 3, .d_key = 4}, gen);
    return module_case(attn, Inputs{leaf({2, 1, 3}, seed + 33), leaf({2, 4, 4}, seed + 34), leaf({2, 4, 2}, seed + 35)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2]).output; });
  });
  check("MultiplicativeAttentionMaskedSeveralQueries", [](std::uint64_t seed) {
    Generator gen(seed + 36);
    auto attn =
        std::make_shared<MultiplicativeAttention>(MultiplicativeAttentionOptions{.d_query = 3, .d_key = 3}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(attn, Inputs{leaf({2, 3, 3}, seed + 36), leaf({2, 4, 3}, seed + 37), leaf({2, 4, 2}, seed + 38)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2], mask).output; });
  });
}

// Encoder and decoder layers, post-LN and pre-LN, with masks and every cross-attention kind.
void transformer_layer_cases(const CaseAdder& check) {
  check("TransformerEncoderLayer", [](std::uint64_t seed) {
    Generator gen(seed + 39);
    auto layer =
        std::make_shared<TransformerEncoderLayer>(TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 39)}, [=](const Inputs& in) { return layer->forward(in[0]); });
  });
  check("TransformerEncoderLayerPreLNWithPadding", [](std::uint64_t seed) {
    Generator gen(seed + 40);
    auto layer = std::make_shared<TransformerEncoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
    Tensor mask = padding_mask(3, 2);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 40)},
                       [=](const Inputs& in) { return layer->forward(in[0], mask); });
  });
  check("TransformerDecoderLayer", [](std::uint64_t seed) {
    Generator gen(seed + 41);
    auto layer =
        std::make_shared<TransformerDecoderLayer>(TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 41), leaf({2, 4, 4}, seed + 42)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1]); });
  });
  check("TransformerDecoderLayerPreLNWithMemoryPadding", [](std::uint64_t seed) {
    Generator gen(seed + 43);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 43), leaf({2, 4, 4}, seed + 44)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), mask); });
  });
  check("TransformerDecoderLayerAdditiveCross", [](std::uint64_t seed) {
    Generator gen(seed + 45);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Additive},
        gen);
    return module_case(layer, Inputs{leaf({2, 2, 4}, seed + 45), leaf({2, 3, 4}, seed + 46)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
  });
  check("TransformerDecoderLayerMultiplicativeCross", [](std::uint64_t seed) {
    Generator gen(seed + 47);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{
            .d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Multiplicative},
        gen);
    return module_case(layer, Inputs{leaf({2, 2, 4}, seed + 47), leaf({2, 3, 4}, seed + 48)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
  });
}

// A GPT small enough for a full Jacobian: V 5, C 4, 2 heads, T 3.
GPTConfig tiny_gpt(std::int64_t n_layer) {
  return GPTConfig{.block_size = 4, .vocab_size = 5, .n_layer = n_layer, .n_head = 2, .n_embd = 4};
}

// Parameters N(0, 0.5) instead of GPT-2's N(0, 0.02): at 0.02 the attention scores are nearly 0 and many Jacobian
// entries fall below the checks' absolute tolerance, where a wrong gradient would pass unseen.
template <typename M>
std::shared_ptr<M> spread_parameters(std::shared_ptr<M> module, std::uint64_t seed) {
  Generator gen(seed);
  NoGradGuard no_grad;
  for (const Tensor& p : module->parameters()) p.copy_(mul(Tensor::randn(p.shape(), gen, p.dtype()), 0.5));
  return module;
}

// The whole model, end to end through the loss, with each cross-attention kind; GPT, with a padded batch.
void whole_model_cases(const CaseAdder& check) {
  check("GPTBlock", [](std::uint64_t seed) {
    Generator gen(seed + 54);
    auto block = spread_parameters(std::make_shared<Block>(tiny_gpt(1), gen, nullptr), seed + 54);
    return module_case(block, Inputs{leaf({2, 3, 4}, seed + 54)}, [=](const Inputs& in) { return block->forward(in[0]); });
  });
  check("GPTPaddedBatch", [](std::uint64_t seed) {
    // Two blocks; the second row's last target is padding (-1), so it adds nothing to the loss.
    Generator gen(seed + 55);
    auto gpt = spread_parameters(std::make_shared<GPT>(tiny_gpt(2), gen), seed + 55);
    Tensor idx = Tensor::from_vector<std::int64_t>({0, 3, 1, 0, 2, 0}, {2, 3});
    Tensor targets = Tensor::from_vector<std::int64_t>({3, 1, 0, 2, 0, -1}, {2, 3});
    return module_case(gpt, Inputs{}, [=](const Inputs&) { return gpt->forward(idx, targets).loss; });
  });
  check("Seq2SeqTransformer", [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::ScaledDot, PositionalKind::Learned, seed + 50); });
  check("Seq2SeqTransformerAdditive", [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::Additive, PositionalKind::Learned, seed + 51); });
  check("Seq2SeqTransformerMultiplicative", [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::Multiplicative, PositionalKind::Sinusoidal, seed + 52); });
}

}  // namespace

std::vector<GradcheckCase> module_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "module"};
  for (auto add_group : {layer_cases, attention_module_cases, transformer_layer_cases, whole_model_cases}) add_group(check);
  return cases;
}

}  // namespace cppgrad::checks
