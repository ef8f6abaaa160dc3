#pragma once
// The GPT's training step, from a batch of tokens to AdamW's update, in two forms:
//
//   plain_step    one model on the whole batch: zero_grad, forward, loss, backward, clip, optimizer step. The page a
//                 learner reads first.
//   sharded_step  the same step with the batch cut into shards (train/data_parallel.h): each shard's forward and
//                 backward (shard_pass) on a replica, the gradients summed over the fixed tree, then clip and
//                 optimizer step. Bit-identical on any number of threads or processes at the same shard count, and
//                 at one shard bit-identical to plain_step (tests/train/test_gpt_step.cpp holds both).
//
// cppgrad-gpt's trainer draws the rows, makes their batch (data/token_batch.h) and calls sharded_step.
#include <cstdint>
#include <tuple>

#include "data/token_batch.h"
#include "nn/gpt.h"
#include "optim/optimizer.h"
#include "train/data_parallel.h"

namespace cppgrad::train {

// What one shard of a language model's batch reports, summed over the shards like the gradients (train/shard_sums.h).
struct LmSums {
  double loss = 0;          // share * the shard's mean loss: summed over the shards, the batch's mean loss
  std::int64_t tokens = 0;  // the shard's counted targets (not padding): summed, the batch's
  auto fields() { return std::tie(loss, tokens); }
};

// One optimisation step of `model` on `batch` (idx, targets [B, T]): returns the batch's mean loss. clip_grad > 0
// clips the gradients' global 2-norm to it. A loss that is not finite skips the update (the weights stay the last
// good ones) and is returned for the caller to stop on (train/diverged.h). The optimizer's lr is the caller's to set.
double plain_step(nn::GPT& model, const data::TokenBatch& batch, optim::Optimizer& optimizer, double clip_grad);

// One shard's pass on a replica: forward on the shard's rows, and backward of share * (its mean loss), which leaves
// in the replica's gradients its part of the batch's mean loss's gradients. Returns {share * loss, tokens}.
LmSums shard_pass(nn::GPT& replica, const data::TokenBatch& shard, double share);

// plain_step on the batch's shards: parallel.model() is the model, `optimizer` holds its parameters. A shard's loss
// terms are its counted targets. With dropout, each shard's masks come from one draw of the model's dropout generator
// per step and the shard's index (train::shard_seed), so they do not depend on the thread or process.
double sharded_step(DataParallel<nn::GPT>& parallel, const data::TokenBatch& batch, optim::Optimizer& optimizer,
                    double clip_grad);

}  // namespace cppgrad::train
