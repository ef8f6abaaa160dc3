// Stop 8 (docs/learn.md): the training step. Read the GPT's plain step in the training layer (forward, loss,
// backward, clip, AdamW), then optim/adam.h for what AdamW does with each gradient.
//
// Question: why zero the gradients first? backward() ADDS into .grad (stop 1: a value used twice gets both
// contributions), so last step's gradients would be added to this step's.
// Exercise: write the step, and check that it drives the loss of one batch down (a model can always memorise one
// batch: if it cannot, the step is wrong).
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

double my_step(const nn::GPT& model, const Tensor& idx, const Tensor& targets, optim::Optimizer& optimizer) {
  optimizer.zero_grad();
  const Tensor loss = model.forward(idx, targets).loss;  // [], the mean over B * T positions
  if constexpr (kPlantedWrong) (-loss).backward();       // the mistake: the gradient of -loss climbs the loss
  else loss.backward();
  optim::clip_grad_norm(model.parameters(), 1.0);
  optimizer.step();
  return loss.item();
}

TEST(Stop8, TheStepMemorisesOneBatch) {
  Generator gen(0);
  const nn::GPT model({.block_size = 8, .vocab_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16}, gen);
  optim::Adam optimizer(model.named_parameters(), {.lr = 1e-2, .decoupled_weight_decay = true});
  const Tensor idx = Tensor::randint(0, 8, {4, 8}, gen), targets = Tensor::randint(0, 8, {4, 8}, gen);
  const double first = my_step(model, idx, targets, optimizer);
  double last = first;
  for (int i = 0; i < 40; ++i) last = my_step(model, idx, targets, optimizer);
  EXPECT_LT(last, 0.5 * first) << "40 steps on one batch: " << first << " -> " << last;
}

}  // namespace
}  // namespace cppgrad::learn
