#include "nn/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/autograd.h"

namespace cppgrad::nn {

namespace {

void check_generate(const GPT& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options,
                    const char* who) {
  check_sampling(options.sampling);
  const std::int64_t V = model.config().vocab_size;
  if (prompt.empty()) throw std::invalid_argument(fmt::format("{}: the prompt is empty: give at least one token", who));
  for (std::size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= V)
      throw std::invalid_argument(
          fmt::format("{}: prompt token {} (at {}) is outside the vocabulary [0, {})", who, prompt[i], i, V));
  if (options.max_new_tokens < 0)
    throw std::invalid_argument(fmt::format("{}: max_new_tokens must be >= 0, got {}", who, options.max_new_tokens));
  if (options.stop_token && (*options.stop_token < 0 || *options.stop_token >= V))
    throw std::invalid_argument(
        fmt::format("{}: stop_token {} is outside the vocabulary [0, {})", who, *options.stop_token, V));
  if (model.config().dropout > 0 && model.is_training())
    throw std::invalid_argument(fmt::format("{}: the model is in training mode with dropout {:g}: call eval() first",
                                            who, model.config().dropout));
}

// The last min(|seq|, block_size) tokens of seq -> [1, t] int64
Tensor context(const std::vector<std::int64_t>& seq, std::int64_t block_size) {
  const auto t = std::min(static_cast<std::int64_t>(seq.size()), block_size);
  return Tensor::from_vector(std::vector<std::int64_t>(seq.end() - t, seq.end()), {1, t});
}

// logits [1, t, V] -> the last position's, [V]
std::vector<double> last_row(const Tensor& logits) { return logits.select(0, 0).select(0, -1).to_double_vector(); }

std::int64_t choose(const std::vector<double>& logits, const SamplingConfig& sampling, Generator& gen,
                    const StepCallback& on_step) {
  const std::vector<double> probs = next_token_probs(logits, sampling);  // [V]
  const std::int64_t token = sample_token(probs, gen);
  if (on_step)
    on_step({token, probs[static_cast<std::size_t>(token)], top_choices(next_token_probs(logits, {}), 5),
             top_choices(probs, 5)});
  return token;
}

// The loop both functions share. next_logits(seq): the logits [V] of the token after seq (the prompt and the tokens
// chosen so far).
template <typename NextLogits>
std::vector<std::int64_t> run(const std::vector<std::int64_t>& prompt, const GenerateOptions& options, Generator& gen,
                              const StepCallback& on_step, NextLogits next_logits) {
  std::vector<std::int64_t> seq = prompt, out;
  while (static_cast<std::int64_t>(out.size()) < options.max_new_tokens) {
    const std::int64_t token = choose(next_logits(seq), options.sampling, gen, on_step);
    if (options.stop_token && token == *options.stop_token) break;
    seq.push_back(token);
    out.push_back(token);
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> generate(const GPT& model, const std::vector<std::int64_t>& prompt,
                                   const GenerateOptions& options, Generator& gen, const StepCallback& on_step) {
  check_generate(model, prompt, options, "generate");
  const std::int64_t block_size = model.config().block_size;
  KVCache cache = model.make_cache(1);
  return run(prompt, options, gen, on_step, [&](const std::vector<std::int64_t>& seq) {
    // The cache holds every token of seq but the newest, at their own positions: read that one. Otherwise (the
    // first call, or a full context to crop) start again from the window of the last block_size tokens.
    const bool extend = cache.length == static_cast<std::int64_t>(seq.size()) - 1 && cache.length < block_size;
    if (!extend) cache.clear();
    const Tensor idx = extend ? Tensor::from_vector(std::vector<std::int64_t>{seq.back()}, {1, 1})  // [1, 1]
                              : context(seq, block_size);                                           // [1, t]
    return last_row(model.forward_cached(idx, cache));
  });
}

std::vector<std::int64_t> generate_recompute(const GPT& model, const std::vector<std::int64_t>& prompt,
                                             const GenerateOptions& options, Generator& gen,
                                             const StepCallback& on_step) {
  check_generate(model, prompt, options, "generate_recompute");
  NoGradGuard no_grad;
  return run(prompt, options, gen, on_step, [&](const std::vector<std::int64_t>& seq) {
    return last_row(model.forward(context(seq, model.config().block_size)).logits);  // [1, t, V] -> [V]
  });
}

}  // namespace cppgrad::nn
