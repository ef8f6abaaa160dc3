#pragma once
// The reversal model's training step (nn/seq2seq.h's encoder-decoder on data/reversal.h's task), from a batch to the
// optimizer's update, in two forms, as train/gpt_step.h holds the GPT's:
//
//   plain_step    one model on the whole batch: zero_grad, forward, the teacher-forced loss, backward, the gradients'
//                 norm (clipped), optimizer step. The page a learner reads first (docs/learn.md, stop 6).
//   sharded_step  the same step with the batch cut into shards (train/data_parallel.h): each shard's forward and
//                 backward (reversal_pass) on a replica, weighted by its share of the batch's target tokens, the
//                 gradients summed over the fixed tree, then the norm and the optimizer step. Bit-identical on any
//                 number of threads or processes at the same shard count.
//
// cppgrad-reverse's trainer (models/reverse/trainer.cpp) takes an epoch's batches in order, sets the step's rate and
// calls plain_step at --shards 1, sharded_step otherwise.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "data/reversal.h"
#include "nn/seq2seq.h"
#include "optim/optimizer.h"
#include "train/data_parallel.h"

namespace cppgrad::train {

// What one forward and backward saw, summed over a step's shards like the gradients (train/shard_sums.h).
struct ReversalSums {
  double loss = 0;                      // the mean loss over the target tokens (a shard's: times its share)
  data::AccuracyCounts teacher_forced;  // the teacher-forced predictions' right and all tokens and rows
  auto fields() {
    return std::tie(loss, teacher_forced.tokens, teacher_forced.right_tokens, teacher_forced.rows,
                    teacher_forced.right_rows);
  }
};

// What one step saw: the batch's mean loss, its teacher-forced counts, and the gradients' global 2-norm before
// clipping (cppgrad-reverse's sparkline of an epoch).
struct ReversalStep {
  double loss = 0;
  data::AccuracyCounts teacher_forced;
  double grad_norm = 0;
};

// One model's forward and backward on a batch: logits [B, T, V], the cross-entropy over the target tokens (PAD
// ignored), backward of share * loss (none: the loss itself, a whole batch). trace_graph: a path (or none) where this
// pass writes its autograd graph as Graphviz DOT, with the gradient norm through every op; cleared once written.
ReversalSums reversal_pass(nn::Seq2SeqTransformer& model, const data::Batch& batch, std::optional<double> share,
                           std::string* trace_graph = nullptr);

// One optimisation step of `model` on `batch`. clip_grad > 0 clips the gradients' global 2-norm to it. The optimizer's
// lr is the caller's to set; a loss that is not finite is the caller's to stop on (train/diverged.h).
ReversalStep plain_step(nn::Seq2SeqTransformer& model, const data::Batch& batch, optim::Optimizer& optimizer,
                        double clip_grad, std::string* trace_graph = nullptr);

// plain_step on the shards of the batch of `rows` of `set` (with_mask: variable lengths, data::gather_batch):
// parallel.model() is the model, `optimizer` holds its parameters. A shard's loss terms are its target tokens. With
// dropout, each shard's masks come from one draw of the model's dropout generator per step and the shard's index
// (train::shard_seed), so they do not depend on the thread or process. The first shard's pass is the one traced.
ReversalStep sharded_step(DataParallel<nn::Seq2SeqTransformer>& parallel, const data::ReversalSet& set,
                          const std::vector<std::int64_t>& rows, bool with_mask, optim::Optimizer& optimizer,
                          double clip_grad, std::string* trace_graph = nullptr);

}  // namespace cppgrad::train
