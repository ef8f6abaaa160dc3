// Stop 8 (docs/learn.md): the training step. Read plain_step in train/gpt_step.cpp (forward, loss, backward, clip,
// AdamW), then optim/adam.h for what AdamW does with each gradient.
//
// Question: why zero the gradients first? backward() ADDS into .grad (stop 1: a value used twice gets both
// contributions), so last step's gradients would be added to this step's.
// Exercise: write the step, check it against the training layer's plain_step bit for bit, and check that it drives
// the loss of one batch down (a model can always memorise one batch: if it cannot, the step is wrong).
#include <cmath>
#include <vector>

#include "learn.h"
#include "train/gpt_step.h"

namespace cppgrad::learn {
namespace {

// plain_step's signature (train/gpt_step.h), so the two are called the same way.
double my_step(nn::GPT& model, const data::TokenBatch& batch, optim::Optimizer& optimizer, double clip_grad) {
  model.train();  // dropout on, if the config has any
  optimizer.zero_grad();
  const Tensor loss = model.forward(batch.idx, batch.targets).loss;  // [], the mean over the counted positions
  if constexpr (kPlantedWrong) (-loss).backward();                   // the mistake: the gradient of -loss climbs
  else loss.backward();
  if (!std::isfinite(loss.item())) return loss.item();  // diverged: no update
  if (clip_grad > 0) optim::clip_grad_norm(model.parameters(), clip_grad);
  optimizer.step();
  return loss.item();
}

TEST(Stop8, YourStepIsTheTrainingLayersPlainStepBitForBit) {
  const nn::GPTConfig config{.block_size = 8, .vocab_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16};
  Generator gen_a(0), gen_b(0), data(1);
  nn::GPT a(config, gen_a), b(config, gen_b);
  optim::Adam opt_a(a.named_parameters(), {.lr = 1e-2, .decoupled_weight_decay = true});
  optim::Adam opt_b(b.named_parameters(), {.lr = 1e-2, .decoupled_weight_decay = true});
  const data::TokenBatch batch{.idx = Tensor::randint(0, 8, {4, 8}, data), .targets = Tensor::randint(0, 8, {4, 8}, data),
                               .tokens = 32};
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(my_step(a, batch, opt_a, /*clip_grad=*/1.0), train::plain_step(b, batch, opt_b, /*clip_grad=*/1.0));
  EXPECT_EQ(a.parameters()[0].to_vector<float>(), b.parameters()[0].to_vector<float>());
}

TEST(Stop8, TheStepMemorisesOneBatch) {
  Generator gen(0);
  nn::GPT model({.block_size = 8, .vocab_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16}, gen);
  optim::Adam optimizer(model.named_parameters(), {.lr = 1e-2, .decoupled_weight_decay = true});
  const data::TokenBatch batch{.idx = Tensor::randint(0, 8, {4, 8}, gen), .targets = Tensor::randint(0, 8, {4, 8}, gen),
                               .tokens = 32};
  const double first = my_step(model, batch, optimizer, 1.0);
  double last = first;
  for (int i = 0; i < 40; ++i) last = my_step(model, batch, optimizer, 1.0);
  EXPECT_LT(last, 0.5 * first) << "40 steps on one batch: " << first << " -> " << last;
}

}  // namespace
}  // namespace cppgrad::learn
