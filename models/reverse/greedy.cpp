#include "models/reverse/greedy.h"

#include <algorithm>

#include "core/autograd.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/parallel.h"

namespace cppgrad::reverse {

namespace {

// The greedy loop shared by both decoders: next_logits(t, tokens_so_far) gives the logits [B, V] of position t.
template <typename NextLogits>
Tensor greedy_loop(std::int64_t B, const data::ReversalConfig& config, NextLogits next_logits) {
  const std::int64_t T = config.target_len();
  Tensor predictions = Tensor::zeros({B, T}, DType::Int64);  // PAD
  Tensor token = Tensor::full({B}, static_cast<double>(config.bos()), DType::Int64);  // [B] = BOS
  std::vector<bool> stopped(static_cast<std::size_t>(B), false);
  auto* pred = predictions.mutable_data<std::int64_t>();
  for (std::int64_t t = 0; t < T; ++t) {
    token = argmax(next_logits(t, token), -1);  // [B]
    const auto* nx = token.data<std::int64_t>();
    bool all_stopped = true;
    for (std::int64_t b = 0; b < B; ++b) {
      if (stopped[b]) continue;
      pred[b * T + t] = nx[b];
      if (config.variable_length() && nx[b] == config.eos()) stopped[b] = true;
      all_stopped = all_stopped && stopped[b];
    }
    if (config.variable_length() && all_stopped) break;
  }
  return predictions;
}

}  // namespace

Tensor greedy_decode(const nn::Seq2SeqTransformer& model, const Tensor& src, const Tensor& src_mask,
                     const data::ReversalConfig& config) {
  NoGradGuard no_grad;
  nn::Seq2SeqTransformer::DecodeState state =
      model.start_decoding(model.encode(src, src_mask), src_mask, config.target_len());
  return greedy_loop(src.shape()[0], config,
                     [&](std::int64_t, const Tensor& token) { return model.decode_step(state, token); });
}

Tensor greedy_decode_full(const nn::Seq2SeqTransformer& model, const Tensor& src, const Tensor& src_mask,
                          const data::ReversalConfig& config) {
  NoGradGuard no_grad;
  const Tensor memory = model.encode(src, src_mask);  // [B, S, D]
  Tensor dec;                                          // [B, t+1]: BOS and the predictions so far
  return greedy_loop(src.shape()[0], config, [&](std::int64_t t, const Tensor& token) {
    dec = t == 0 ? token.unsqueeze(1) : cat({dec, token.unsqueeze(1)}, 1);
    return model.decode(dec, memory, src_mask).select(1, t);  // [B, V]
  });
}

Accuracy accuracy(const Tensor& predictions, const Tensor& target) { return accuracy(count_correct(predictions, target)); }

Accuracy accuracy(const AccuracyCounts& c) {
  return {c.rows ? static_cast<double>(c.right_rows) / c.rows : 0.0,
          c.tokens ? static_cast<double>(c.right_tokens) / c.tokens : 0.0};
}

Accuracy greedy_accuracy(const nn::Seq2SeqTransformer& model, const data::ReversalSet& set,
                         const data::ReversalConfig& config, std::int64_t chunk) {
  return greedy_accuracy(std::vector<const nn::Seq2SeqTransformer*>{&model}, set, config, chunk);
}

Accuracy greedy_accuracy(const std::vector<const nn::Seq2SeqTransformer*>& models, const data::ReversalSet& set,
                         const data::ReversalConfig& config, std::int64_t chunk) {
  const std::int64_t N = set.size();
  const int n = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(std::ssize(models), N)));
  std::vector<AccuracyCounts> counts(static_cast<std::size_t>(n));
  // Model w decodes rows [N*w/n, N*(w+1)/n), in chunks.
  run_in_parallel(n, [&](int w) {
    const std::int64_t end = N * (w + 1) / n;
    for (std::int64_t i = N * w / n; i < end; i += chunk) {
      std::vector<std::int64_t> rows;
      for (std::int64_t r = i; r < std::min(end, i + chunk); ++r) rows.push_back(r);
      const data::Batch b = data::gather_batch(set, rows, config.variable_length());
      counts[w] += count_correct(greedy_decode(*models[w], b.src, b.src_mask, config), b.target);
    }
  });
  AccuracyCounts total;
  for (const AccuracyCounts& c : counts) total += c;
  return accuracy(total);
}

}  // namespace cppgrad::reverse
