#pragma once
// Text from a GPT, one token at a time (nanoGPT's generate()): run the model on the context, turn the last
// position's logits into a distribution (nn/sampling.h), draw the next token, append it, repeat.
//
// generate() keeps the keys and values of the tokens read so far (nn/kv_cache.h), so each new token costs one
// position's forward; generate_recompute() runs GPT::forward on the whole context for every token, as nanoGPT's
// generate() and llm.c's sampling loop do. It is the reference: a test holds the two equal token for token.
//
// The context: the model reads at most block_size tokens (its learned positions). A prompt longer than that is
// cropped to its last block_size tokens, and once prompt and output fill the context, each further token is
// predicted from the last block_size tokens at positions 0..block_size-1, as nanoGPT crops `idx[:, -block_size:]`.
// Every cached key then sits at a new position, so the cache is refilled from the cropped window for each such
// token: long texts go on, at recompute's cost per token past the context.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/generator.h"
#include "nn/gpt.h"
#include "nn/sampling.h"

namespace cppgrad::nn {

struct GenerateOptions {
  std::int64_t max_new_tokens = 0;                       // >= 0
  SamplingConfig sampling = {};
  std::optional<std::int64_t> stop_token = std::nullopt;  // ends the sample (not returned); lines mode: 0, <b>
};

// What --explain shows for each chosen token.
struct GenerateStep {
  std::int64_t token = 0;                // the chosen token (the stop token included)
  double prob = 0;                       // its probability after the filters
  std::vector<TokenChoice> raw_top;      // the 5 likeliest under softmax(logits): temperature 1, no filters
  std::vector<TokenChoice> filtered_top; // the 5 likeliest of next_token_probs(logits, options.sampling)
};
using StepCallback = std::function<void(const GenerateStep&)>;

// prompt: non-empty token ids in [0, vocab_size) -> the generated tokens, without the prompt and without the stop
// token: stops after max_new_tokens or when stop_token is drawn. One uniform draw from gen per token chosen (greedy
// included), so the same seed gives the same text from both functions. on_step, when set, is called for each token
// chosen, the stop token included. Inference: no graph is recorded; a model with dropout must be in eval() mode.
std::vector<std::int64_t> generate(const GPT& model, const std::vector<std::int64_t>& prompt,
                                   const GenerateOptions& options, Generator& gen,
                                   const StepCallback& on_step = nullptr);

// The same, recomputing GPT::forward over the whole (cropped) context for every token.
std::vector<std::int64_t> generate_recompute(const GPT& model, const std::vector<std::int64_t>& prompt,
                                             const GenerateOptions& options, Generator& gen,
                                             const StepCallback& on_step = nullptr);

}  // namespace cppgrad::nn
