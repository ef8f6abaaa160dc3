#pragma once
// Parity handler for the GPT (nn/gpt.h) against nanoGPT's model (tools/make_golden.py, gpt_cases): a padded batch
// of lines through the model, the loss over the counted targets, every gradient, three AdamW steps, and the state
// dict's names and shapes, which must be those nanoGPT's load_state_dict expects.
#include <nlohmann/json.hpp>

#include "core/ops/select.h"
#include "nn/gpt.h"
#include "nn/lora.h"
#include "optim/adam.h"
#include "parity/nn_handlers.h"
#include "train/flags.h"
#include "parity/parity_case.h"

namespace cppgrad::parity {

inline nn::GPTConfig gpt_config(const Case& c) {
  return {.block_size = c.meta_int("block_size"), .vocab_size = c.meta_int("vocab_size"),
          .n_layer = c.meta_int("n_layer"), .n_head = c.meta_int("n_head"), .n_embd = c.meta_int("n_embd")};
}

// state_dict: nanoGPT's state_dict() as [[name, shape], ...] in its order (lm_head.weight included); cppgrad's
// state_dict() must hold the same names with the same shapes, and named_parameters() the same order without the
// tied lm_head.weight (PyTorch's named_parameters() lists a tied parameter once).
inline void check_gpt_state_dict(Case& c, const nn::GPT& model) {
  const nlohmann::json expected = nlohmann::json::parse(c.meta("state_dict"));
  const nn::StateDict state = model.state_dict();
  if (state.size() != expected.size())
    c.fail("state_dict: cppgrad has " + std::to_string(state.size()) + " entries, nanoGPT " +
           std::to_string(expected.size()));
  std::vector<std::string> order;
  for (const auto& entry : expected) {
    const std::string name = entry[0].get<std::string>();
    const Shape shape(entry[1].get<std::vector<std::int64_t>>());
    auto it = state.find(name);
    if (it == state.end()) c.fail("state_dict: nanoGPT's '" + name + "' is missing");
    else if (it->second.shape() != shape)
      c.fail("state_dict: '" + name + "' is " + shape_str(it->second.shape()) + " in cppgrad, " + shape_str(shape) +
             " in nanoGPT");
    if (name != "lm_head.weight") order.push_back(name);
  }
  std::vector<std::string> named;
  for (const auto& [name, p] : model.named_parameters()) named.push_back(name);
  if (named != order) c.fail("named_parameters: not nanoGPT's names in nanoGPT's order");
}

// AdamW as the case's metadata sets it (adamw_lr, adamw_beta1, ...), over `params`.
inline optim::Adam case_adamw(const Case& c, const nn::NamedTensors& params) {
  return optim::Adam(params, {.lr = c.meta_double("adamw_lr"), .beta1 = c.meta_double("adamw_beta1"),
                              .beta2 = c.meta_double("adamw_beta2"), .eps = c.meta_double("adamw_eps"),
                              .weight_decay = c.meta_double("adamw_weight_decay"), .decoupled_weight_decay = true});
}

// idx, targets: [B, T] int64 (targets -1 on padding) -> logits [B, T, V], loss []. Then, on a second copy of the
// model, three AdamW steps on the same batch must give after_adamw.<param>.
inline Outputs gpt_handler(Case& c) {
  nn::GPT model(gpt_config(c), init_generator());
  load_module(c, model);
  check_gpt_state_dict(c, model);
  const Tensor idx = c.input("idx"), targets = c.input("targets");
  nn::GPTOutput out = model.forward(idx, targets);

  nn::GPT trained(gpt_config(c), init_generator());
  trained.to(c.dtype());
  trained.load_state_dict(model.state_dict());
  optim::Adam adamw = case_adamw(c, trained.named_parameters());
  for (std::int64_t s = 0; s < c.meta_int("adamw_steps"); ++s) {
    adamw.zero_grad();
    trained.forward(idx, targets).loss.backward();
    adamw.step();
  }
  for (const auto& [name, p] : trained.named_parameters()) c.check("after_adamw." + name, p);
  return {{"logits", out.logits}, {"loss", out.loss}};
}

// The gpt case's model with LoRA (tools/make_golden.py, lora_cases): every parameter stored, base and adapters; the
// runner compares the adapters' gradients (the file holds no other: the base is frozen). Then ten AdamW steps on the
// adapters alone: the loss before each step (adamw_losses) and the adapters after the last.
inline Outputs gpt_lora_handler(Case& c) {
  const std::vector<std::string> targets = train::split_list(c.meta("lora_targets"));
  const nn::LoRAOptions lora{.rank = c.meta_int("lora_rank"), .alpha = c.meta_double("lora_alpha")};
  nn::GPT model(gpt_config(c), init_generator());
  nn::add_lora(model, targets, lora, init_generator());
  load_module(c, model);
  const Tensor idx = c.input("idx"), targets_ids = c.input("targets");
  nn::GPTOutput out = model.forward(idx, targets_ids);

  nn::GPT trained(gpt_config(c), init_generator());
  nn::add_lora(trained, targets, lora, init_generator());
  trained.to(c.dtype());
  trained.load_state_dict(model.state_dict());
  optim::Adam adamw = case_adamw(c, trained.named_trainable_parameters());
  std::vector<Tensor> losses;
  for (std::int64_t s = 0; s < c.meta_int("adamw_steps"); ++s) {
    adamw.zero_grad();
    const Tensor loss = trained.forward(idx, targets_ids).loss;
    losses.push_back(loss.detach());
    loss.backward();
    adamw.step();
  }
  c.check("adamw_losses", stack(losses, 0));
  for (const auto& [name, p] : trained.named_trainable_parameters()) c.check("after_adamw." + name, p);
  return {{"logits", out.logits}, {"loss", out.loss}};
}

}  // namespace cppgrad::parity
