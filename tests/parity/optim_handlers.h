#pragma once
// Parity handlers for the optimizers, gradient clipping and the end-to-end reversal model (forward, loss,
// every gradient, then three Adam steps on the same batch).
#include "nn/seq2seq.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/sgd.h"
#include "parity/nn_handlers.h"
#include "parity/parity_case.h"

namespace cppgrad::parity {

// param.initial, then per step s the gradient grad.step{s} and the expected param.after_step{s}.
inline void run_optimizer_steps(Case& c, optim::Optimizer& opt, const Tensor& p) {
  const std::int64_t steps = c.meta_int("steps");
  for (std::int64_t s = 0; s < steps; ++s) {
    p.set_grad(c.consume("grad.step" + std::to_string(s)));
    opt.step();
    c.check("param.after_step" + std::to_string(s), p);
  }
}

inline Tensor optimizer_param(Case& c) {
  Tensor p = c.consume("param.initial").detach().clone();
  p.set_requires_grad(true);
  return p;
}

inline Outputs sgd_momentum_handler(Case& c) {
  Tensor p = optimizer_param(c);
  optim::SGD opt({{"p", p}}, {.lr = c.meta_double("lr"), .momentum = c.meta_double("momentum"),
                              .weight_decay = c.meta_double("weight_decay")});
  run_optimizer_steps(c, opt, p);
  return {};
}

inline Outputs adam_handler(Case& c, bool decoupled) {
  Tensor p = optimizer_param(c);
  optim::Adam opt({{"p", p}}, {.lr = c.meta_double("lr"), .beta1 = c.meta_double("beta1"),
                               .beta2 = c.meta_double("beta2"), .eps = c.meta_double("eps"),
                               .weight_decay = decoupled ? c.meta_double("weight_decay") : 0.0,
                               .decoupled_weight_decay = decoupled});
  run_optimizer_steps(c, opt, p);
  return {};
}

// grad.before{i} -> clipped grad.after{i}, and the total norm before clipping.
inline Outputs clip_grad_norm_handler(Case& c) {
  if (c.meta("norm_type") != "2") throw std::runtime_error("clip_grad_norm: only norm_type 2 is supported");
  std::vector<Tensor> params;
  for (int i = 0; c.has("grad.before" + std::to_string(i)); ++i) {
    Tensor g = c.consume("grad.before" + std::to_string(i));
    Tensor p = Tensor::zeros(g.shape(), g.dtype());
    p.set_requires_grad(true);
    p.set_grad(g.clone());
    params.push_back(p);
  }
  const double total = optim::clip_grad_norm(params, c.meta_double("max_norm"));
  for (std::size_t i = 0; i < params.size(); ++i) c.check("grad.after" + std::to_string(i), params[i].grad());
  return {{"total_norm", Tensor::scalar(total, c.dtype())}};
}

inline nn::Seq2SeqOptions seq2seq_options(const Case& c) {
  const std::int64_t vocab = c.meta_int("vocab");
  if (c.meta_int("bos") != vocab) throw std::runtime_error("seq2seq_reversal: expected bos == vocab");
  return {.src_vocab = vocab, .tgt_vocab = vocab + 1, .out_vocab = vocab, .d_model = c.meta_int("d_model"),
          .n_heads = c.meta_int("n_heads"), .n_encoder_layers = c.meta_int("n_encoder_layers"),
          .n_decoder_layers = c.meta_int("n_decoder_layers"), .d_ff = c.meta_int("d_ff"),
          .max_len = c.meta_int("max_len"), .eps = c.meta_double("eps")};
}

// src, dec_in = [BOS] + tgt[:-1], tgt: (B, L) -> logits (B, L, V), loss = mean cross-entropy over all tokens.
// Then, on a second copy of the model, 3 Adam steps on the same batch must give after_adam.<param>.
inline Outputs seq2seq_reversal_handler(Case& c) {
  nn::Seq2SeqTransformer model(seq2seq_options(c), init_generator());
  load_module(c, model);
  Tensor src = c.input("src"), dec_in = c.input("dec_in"), tgt = c.input("tgt");
  Tensor logits = model.forward(src, dec_in);
  Tensor loss = cross_entropy(logits, tgt);

  nn::Seq2SeqTransformer trained(seq2seq_options(c), init_generator());
  trained.to(c.dtype());
  trained.load_state_dict(model.state_dict());
  // adam_eps is optional (PyTorch's default 1e-8 when absent).
  const double eps = c.has_meta("adam_eps") ? c.meta_double("adam_eps") : 1e-8;
  optim::Adam adam(trained.named_parameters(), {.lr = c.meta_double("adam_lr"), .eps = eps});
  for (std::int64_t s = 0; s < c.meta_int("adam_steps"); ++s) {
    adam.zero_grad();
    cross_entropy(trained.forward(src, dec_in), tgt).backward();
    adam.step();
  }
  for (const auto& [name, p] : trained.named_parameters()) c.check("after_adam." + name, p);
  return {{"logits", logits}, {"loss", loss}};
}

}  // namespace cppgrad::parity
