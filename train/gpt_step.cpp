#include "train/gpt_step.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "optim/clip.h"

namespace cppgrad::train {

// ------------------------------------------------------------------------------------------- the plain step
double plain_step(nn::GPT& model, const data::TokenBatch& batch, optim::Optimizer& optimizer, double clip_grad) {
  model.train();          // dropout on, if the config has any
  optimizer.zero_grad();  // the last step's gradients are spent

  // Forward. batch.idx [B, T]: the tokens the model reads; batch.targets [B, T]: the token that follows each one,
  // -1 on padding. loss []: the mean cross-entropy over the batch.tokens positions whose target is not -1, as
  // model.forward(idx, targets).loss, without keeping the logits [B, T, V] (GPT::loss).
  const Tensor loss_tensor = model.loss(batch.idx, batch.targets);
  const double loss = loss_tensor.item();

  // Backward: d loss / d w for every parameter w, into w.grad() (each the shape of its parameter).
  loss_tensor.backward();
  if (!std::isfinite(loss)) return loss;  // diverged: no update, so the weights stay the last good ones

  // Clip: when the global 2-norm of all the gradients exceeds clip_grad, scale them all down to it (one bad batch
  // cannot throw the weights far).
  if (clip_grad > 0) optim::clip_grad_norm(model.parameters(), clip_grad);

  // Update: AdamW moves every weight against its gradient, scaled by the moments it keeps per weight.
  optimizer.step();
  return loss;
}

// ------------------------------------------------------------------------------------------- the sharded step
namespace {

// The targets of rows [first, first + count) that the loss counts (not -1, padding).
std::int64_t counted_targets(const data::TokenBatch& batch, std::int64_t first, std::int64_t count) {
  const Tensor targets = batch.targets.contiguous();  // [B, T]
  const std::int64_t T = targets.shape()[1];
  const std::int64_t* row = targets.data<std::int64_t>() + first * T;
  return std::count_if(row, row + count * T, [](std::int64_t t) { return t != -1; });
}

// A shard's rows, contiguous indices into the batch (train::worker_slice of 0 .. B-1), as their own batch: idx,
// targets [b, T] and the targets they count.
data::TokenBatch rows_of(const data::TokenBatch& batch, const std::vector<std::int64_t>& rows) {
  const std::int64_t first = rows.front(), count = static_cast<std::int64_t>(rows.size());
  return {.idx = batch.idx.narrow(0, first, count).clone(),
          .targets = batch.targets.narrow(0, first, count).clone(),
          .tokens = counted_targets(batch, first, count)};
}

}  // namespace

LmSums shard_pass(nn::GPT& replica, const data::TokenBatch& shard, double share) {
  const Tensor loss = replica.loss(shard.idx, shard.targets);         // [] (mean over the shard's tokens)
  loss.backward(Tensor::scalar(share, loss.dtype()));                   // d (share * loss) / d w
  return {.loss = share * loss.item(), .tokens = shard.tokens};
}

double sharded_step(DataParallel<nn::GPT>& parallel, const data::TokenBatch& batch, optim::Optimizer& optimizer,
                    double clip_grad) {
  nn::GPT& model = parallel.model();
  model.train();
  optimizer.zero_grad();
  // Dropout: one draw per step from the model's generator (on every process), each shard's masks from it and the
  // shard's index.
  const bool dropout = nn::draws_dropout_masks(model);  // the GPT's own, or its LoRA adapters' (nn/lora.h)
  const std::uint64_t step_seed = dropout ? model.dropout_generator().next_u64() : 0;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(batch.idx.shape()[0]));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  const auto counted = [&](const std::vector<std::int64_t>& shard_rows) {  // a shard's loss terms
    return counted_targets(batch, shard_rows.front(), static_cast<std::int64_t>(shard_rows.size()));
  };
  const LmSums sums = parallel.step(rows, counted, [&](nn::GPT& replica, const Shard& shard) {
    if (dropout) replica.dropout_generator().manual_seed(shard_seed(step_seed, shard.index));
    return shard_pass(replica, rows_of(batch, shard.rows), shard.share);
  });
  if (!std::isfinite(sums.loss)) return sums.loss;  // diverged: no update, as plain_step
  if (clip_grad > 0) optim::clip_grad_norm(parallel.parameters(), clip_grad);
  optimizer.step();
  return sums.loss;
}

}  // namespace cppgrad::train
