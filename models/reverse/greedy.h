#pragma once
// Honest evaluation: the decoder starts from BOS and is fed its own previous predictions, never the target.
#include "data/reversal.h"
#include "nn/seq2seq.h"

namespace cppgrad::reverse {

// src: [B, S] int64  src_mask: [B, 1, 1, S] or undefined -> predictions [B, T] int64 (T = target length).
// With variable lengths a row stops at its first EOS and is PAD-filled after it; decoding stops early once
// every row has stopped. Runs in eval mode without building a graph.
// Incremental: the encoder runs once and each step feeds only the newest token through the decoder's KV cache
// (nn/kv_cache.h, allocated once for the target length).
Tensor greedy_decode(const nn::Seq2SeqTransformer& model, const Tensor& src, const Tensor& src_mask,
                     const data::ReversalConfig& config);
// The readable reference: every step re-decodes the whole prefix. Same predictions (a test holds them equal).
Tensor greedy_decode_full(const nn::Seq2SeqTransformer& model, const Tensor& src, const Tensor& src_mask,
                          const data::ReversalConfig& config);

struct Accuracy {
  double sequence = 0;  // fraction of rows whose whole prediction equals the target
  double token = 0;     // fraction of target tokens (non-PAD, EOS included) predicted correctly
};

// The counts behind Accuracy, to add up over batches, and how a batch's are counted: the task's (data/reversal.h).
using data::AccuracyCounts;
using data::count_correct;

Accuracy accuracy(const Tensor& predictions, const Tensor& target);
Accuracy accuracy(const AccuracyCounts& counts);

// Greedy accuracy over a whole set, decoded in chunks of at most `chunk` rows.
Accuracy greedy_accuracy(const nn::Seq2SeqTransformer& model, const data::ReversalSet& set,
                         const data::ReversalConfig& config, std::int64_t chunk = 500);
// The same with several models holding the same parameters (a model and its replicas): the set is split into
// contiguous parts, one per model, decoded at the same time on one thread each.
Accuracy greedy_accuracy(const std::vector<const nn::Seq2SeqTransformer*>& models, const data::ReversalSet& set,
                         const data::ReversalConfig& config, std::int64_t chunk = 500);

}  // namespace cppgrad::reverse
