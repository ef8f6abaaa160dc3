#pragma once
// A sampling session: a trained model's samples from one prompt and seed, drawn one after another. The one place
// cppgrad-gpt's samples come from — `sample` (with --explain's per-token tables), the samples at the end of `train`,
// and the browser page's samples (web/session.h) — so the same model, prompt, settings and seed give the same text
// everywhere.
//
// The session holds the generator (seeded once: sample i depends on the samples drawn before it), the ids the samples
// continue (gpt/prompt.h's sample_start: a line starts with <b>), and the model in evaluation mode (no dropout) for
// its lifetime. Each sample is nn::generate's (a KV cache, one position per token) until the framing's stop token (a
// line's <b>) or max_new_tokens.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/generator.h"
#include "data/tokenizer.h"
#include "models/gpt/framing.h"
#include "models/gpt/trainer.h"
#include "nn/generate.h"
#include "nn/gpt.h"
#include "nn/sampling.h"

namespace cppgrad::gpt {

struct SampleSettings {
  std::string prompt;  // the text every sample continues ("": a line's start, or a newline in a running text)
  // Tokens a sample may add; nullopt: the framing's default (a line: the rest of the context; a running text: a
  // context's worth, cropped as it goes).
  std::optional<std::int64_t> max_new_tokens;
  nn::SamplingConfig sampling;  // checked by the caller (nn::check_sampling)
  std::uint64_t seed = 0;
};

class SampleSession {
 public:
  // context: the model's block size. Throws std::invalid_argument naming `what` ("--prompt") when the prompt has a
  // character outside the vocabulary or leaves a line no room (gpt::sample_start). The model stays in evaluation
  // mode until the session ends.
  SampleSession(nn::GPT& model, const data::Tokenizer& tokenizer, std::int64_t context, const SampleSettings& settings,
                const std::string& what);

  // The next sample: the prompt and what followed, as text. on_step, when set, sees each token as it is chosen
  // (the stop token included) with --explain's tables.
  std::string next(const nn::StepCallback& on_step = nullptr);

  // What follows a sample when samples are printed one after another: a newline (a line) or a blank line.
  const char* after_sample() const;

 private:
  nn::GPT& model_;
  nn::EvalModeGuard eval_;
  const data::Tokenizer& tokenizer_;
  Framing framing_;
  std::string prompt_;
  std::vector<std::int64_t> start_;  // the ids every sample continues
  nn::GenerateOptions options_;
  Generator gen_;
};

// The samples a run prints at its end: `count` from no prompt, the run's seed, sampling's defaults, each at most
// the context less one token.
std::vector<std::string> run_samples(Trainer& trainer, std::int64_t count);

}  // namespace cppgrad::gpt
