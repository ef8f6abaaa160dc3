#include "models/gpt/sample_session.h"

#include <variant>

#include "data/token_labels.h"
#include "models/gpt/prompt.h"

namespace cppgrad::gpt {

SampleSession::SampleSession(nn::GPT& model, const data::Tokenizer& tokenizer, std::int64_t context,
                             const SampleSettings& settings, const std::string& what)
    : model_(model), eval_(model), tokenizer_(tokenizer), framing_(framing_of(tokenizer)), prompt_(settings.prompt),
      start_(sample_start(tokenizer, settings.prompt, context, what)), gen_(settings.seed) {
  std::visit([&](const auto& f) {
    options_ = {.max_new_tokens = settings.max_new_tokens.value_or(f.default_room(context, std::ssize(start_))),
                .sampling = settings.sampling, .stop_token = f.stop_token()};
  }, framing_);
}

std::string SampleSession::next(const nn::StepCallback& on_step) {
  return prompt_ + data::token_text(tokenizer_, nn::generate(model_, start_, options_, gen_, on_step));
}

const char* SampleSession::after_sample() const {
  return std::visit([](const auto& f) { return f.after_sample(); }, framing_);
}

std::vector<std::string> run_samples(Trainer& t, std::int64_t count) {
  const std::int64_t context = t.corpus().context;
  SampleSession session(t.model(), t.corpus().tokenizer, context,
                        {.prompt = "", .max_new_tokens = context - 1, .sampling = {}, .seed = t.config().seed},
                        "the prompt");
  const LinearPrecisionGuard precision(t.config().dtype);  // drawn as the run trained
  std::vector<std::string> samples;
  for (std::int64_t i = 0; i < count; ++i) samples.push_back(session.next());
  return samples;
}

}  // namespace cppgrad::gpt
