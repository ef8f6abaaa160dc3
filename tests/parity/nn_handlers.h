#pragma once
// Parity handlers for the nn modules: each builds the module of the file's configuration, loads the stored
// parameters by their PyTorch names (no translation table: cppgrad's names are PyTorch's), runs forward and
// returns the outputs. Gradients are compared by the runner against the module's own parameter tensors.
#include "core/autograd.h"
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"
#include "parity/parity_case.h"

namespace cppgrad::parity {

// Converts the module to the run's dtype, fills every parameter from `param.<name>` and binds it, so its
// .grad() is compared with `grad.param.<name>`. A parameter missing from the file throws; a stored parameter
// the module lacks is caught by the runner's "never read" check.
inline void load_module(Case& c, nn::Module& module) {
  module.to(c.dtype());
  NoGradGuard no_grad;
  for (const auto& [name, p] : module.named_parameters()) {
    p.copy_(c.param_value(name));
    c.bind_param(name, p);
  }
}

// Modules need a generator for their (immediately overwritten) initial values.
inline Generator& init_generator() {
  static thread_local Generator gen(0);
  return gen;
}

// q: (.., Lq, dk)  k: (.., Lk, dk)  v: (.., Lk, dv)  mask: optional -> output (.., Lq, dv), weights (.., Lq, Lk)
inline Outputs sdpa_handler(Case& c) {
  const Tensor mask = c.has("input.mask") ? c.input("mask") : Tensor();
  nn::AttentionResult r = nn::scaled_dot_product_attention(c.input("query"), c.input("key"), c.input("value"), mask);
  return {{"output", r.output}, {"weights", r.weights}};
}

// input: (B, L, d_model) -> output (B, L, d_v), weights (B, L, L)
inline Outputs self_attention_handler(Case& c) {
  nn::SelfAttention m({c.meta_int("d_model"), c.meta_int("d_k"), c.meta_int("d_v")}, init_generator());
  load_module(c, m);
  nn::AttentionResult r = m.forward(c.input("input"));
  return {{"output", r.output}, {"weights", r.weights}};
}

// input: (B, L, d_model) -> output (B, L, d_model), weights (B, L, L): the golden case is single-head, so its
// weights have no head dim; cppgrad's are (B, H, L, L) with H = 1.
inline Outputs causal_self_attention_handler(Case& c) {
  nn::CausalSelfAttention m({.d_model = c.meta_int("d_model"), .n_heads = 1}, init_generator());
  load_module(c, m);
  nn::AttentionResult r = m.forward(c.input("input"));
  return {{"output", r.output}, {"weights", r.weights.squeeze(1)}};
}

// self (mask=causal): input (B, L, D); cross (mask=key_padding): query (B, Lq, D), key_value (B, Lk, D),
// mask (B, 1, 1, Lk) -> output (B, Lq, D), weights (B, H, Lq, Lk)
inline Outputs multi_head_attention_handler(Case& c) {
  nn::MultiHeadAttention m({.d_model = c.meta_int("d_model"), .n_heads = c.meta_int("n_heads")}, init_generator());
  load_module(c, m);
  nn::AttentionResult r;
  if (c.meta("mask") == "causal") {
    Tensor x = c.input("input");
    r = m.forward(x, x, x, nn::causal_mask(x.shape()[1]));
  } else if (c.meta("mask") == "key_padding") {
    Tensor kv = c.input("key_value");
    r = m.forward(c.input("query"), kv, kv, c.input("mask"));
  } else {
    throw std::runtime_error("multi_head_attention: unknown mask '" + c.meta("mask") + "'");
  }
  return {{"output", r.output}, {"weights", r.weights}};
}

// query: (B, 1, dq)  key: (B, S, dk)  value: (B, S, dv) -> output (B, dv), weights (B, S): the golden cases
// attend from one query, so the Lq = 1 dim of cppgrad's (B, Lq, ..) results is dropped.
inline Outputs additive_attention_handler(Case& c) {
  nn::AdditiveAttention m({c.meta_int("d_query"), c.meta_int("d_key"), c.meta_int("d_hidden")}, init_generator());
  load_module(c, m);
  nn::AttentionResult r = m.attend(c.input("query"), c.input("key"), c.input("value"));
  return {{"output", r.output.squeeze(1)}, {"weights", r.weights.squeeze(1)}};
}

inline Outputs multiplicative_attention_handler(Case& c) {
  nn::MultiplicativeAttention m({c.meta_int("d_query"), c.meta_int("d_key")}, init_generator());
  load_module(c, m);
  nn::AttentionResult r = m.attend(c.input("query"), c.input("key"), c.input("value"));
  return {{"output", r.output.squeeze(1)}, {"weights", r.weights.squeeze(1)}};
}

inline nn::TransformerLayerOptions layer_options(const Case& c) {
  return {.d_model = c.meta_int("d_model"), .n_heads = c.meta_int("n_heads"), .d_ff = c.meta_int("d_ff"),
          .eps = c.meta_double("eps")};
}

// input: (B, S, D) -> (B, S, D), post-LN
inline Outputs transformer_encoder_layer_handler(Case& c) {
  nn::TransformerEncoderLayer m(layer_options(c), init_generator());
  load_module(c, m);
  return {{"output", m.forward(c.input("input"))}};
}

// input: (B, T, D)  memory: (B, S, D) -> (B, T, D), causal self-attention, post-LN
inline Outputs transformer_decoder_layer_handler(Case& c) {
  if (c.meta("self_mask") != "causal")
    throw std::runtime_error("transformer_decoder_layer: unknown self_mask '" + c.meta("self_mask") + "'");
  nn::TransformerDecoderLayer m(layer_options(c), init_generator());
  load_module(c, m);
  return {{"output", m.forward(c.input("input"), c.input("memory"))}};
}

}  // namespace cppgrad::parity
