#include "train/reversal_step.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/atomic_file.h"
#include "core/autograd.h"
#include "core/graph_dot.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "optim/clip.h"

namespace cppgrad::train {

namespace {

// The graph of `loss`, its parameters named by `model`'s (a replica's, when a shard ran the pass), written to `path`.
void write_graph(const Tensor& loss, const nn::Seq2SeqTransformer& model, const std::string& path) {
  std::map<const TensorImpl*, std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names[p.impl_ptr().get()] = name;
  std::ostringstream dot;
  write_graph_dot(loss, dot, names);
  write_file_atomically(path, dot.str());
}

// The optimizer's half of a step: the gradients' norm (clipping them with clip_grad > 0), then the update.
double norm_and_update(const std::vector<Tensor>& params, optim::Optimizer& optimizer, double clip_grad) {
  // clip_grad_norm returns the norm before clipping (as PyTorch's): one pass over the gradients, not two.
  const double norm = clip_grad > 0 ? optim::clip_grad_norm(params, clip_grad) : optim::grad_norm(params);
  optimizer.step();
  return norm;
}

}  // namespace

ReversalSums reversal_pass(nn::Seq2SeqTransformer& model, const data::Batch& batch, std::optional<double> share,
                           std::string* trace_graph) {
  Tensor logits = model.forward(batch.src, batch.dec_in, batch.src_mask);             // [B, T, V]
  Tensor loss = cross_entropy(logits, batch.target, /*ignore_index=*/data::kPad);  // mean over the target tokens
  const Tensor seed = share ? Tensor::scalar(*share, loss.dtype()) : Tensor();      // d(share * loss) / d loss
  if (trace_graph && !trace_graph->empty()) {
    run_backward(loss, seed, /*retain_graph=*/true, /*record_grad_norms=*/true);  // keep the graph to draw it
    write_graph(loss, model, *trace_graph);
    trace_graph->clear();
  } else {
    loss.backward(seed);
  }
  return {.loss = loss.item(), .teacher_forced = data::count_correct(argmax(logits.detach(), -1), batch.target)};
}

// ------------------------------------------------------------------------------------------- the plain step
ReversalStep plain_step(nn::Seq2SeqTransformer& model, const data::Batch& batch, optim::Optimizer& optimizer,
                        double clip_grad, std::string* trace_graph) {
  optimizer.zero_grad();                                                         // the last step's are spent
  const ReversalSums r = reversal_pass(model, batch, std::nullopt, trace_graph);  // forward, loss, backward
  const double norm = norm_and_update(model.parameters(), optimizer, clip_grad);  // clip, optimizer step
  return {.loss = r.loss, .teacher_forced = r.teacher_forced, .grad_norm = norm};
}

// ------------------------------------------------------------------------------------------- the sharded step
ReversalStep sharded_step(DataParallel<nn::Seq2SeqTransformer>& parallel, const data::ReversalSet& set,
                          const std::vector<std::int64_t>& rows, bool with_mask, optim::Optimizer& optimizer,
                          double clip_grad, std::string* trace_graph) {
  // A shard's loss is the mean over its target tokens, so it is weighted by its share of the batch's tokens: the
  // summed gradients are then those of the batch's mean loss.
  const Tensor& y = set.target;  // [N, T], contiguous
  const std::int64_t T = y.shape()[1];
  const auto target_tokens = [&](const std::vector<std::int64_t>& slice) {
    std::int64_t tokens = 0;
    for (const std::int64_t r : slice)
      tokens += std::count_if(y.data<std::int64_t>() + r * T, y.data<std::int64_t>() + (r + 1) * T,
                              [](std::int64_t v) { return v != data::kPad; });
    return tokens;
  };
  optimizer.zero_grad();
  // Dropout: one draw per step from the model's generator, each shard's masks from it and the shard's index.
  const bool dropout = parallel.model().options().dropout > 0;
  const std::uint64_t step_seed = dropout ? parallel.model().dropout_generator().next_u64() : 0;
  const ReversalSums sums = parallel.step(rows, target_tokens, [&](nn::Seq2SeqTransformer& m, const Shard& shard) {
    if (dropout) m.dropout_generator().manual_seed(shard_seed(step_seed, shard.index));
    ReversalSums r = reversal_pass(m, data::gather_batch(set, shard.rows, with_mask), shard.share,
                                   shard.index == 0 ? trace_graph : nullptr);
    r.loss *= shard.share;
    return r;
  });
  const double norm = norm_and_update(parallel.parameters(), optimizer, clip_grad);
  return {.loss = sums.loss, .teacher_forced = sums.teacher_forced, .grad_norm = norm};
}

}  // namespace cppgrad::train
