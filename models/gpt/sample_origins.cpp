#include "models/gpt/sample_origins.h"

#include <fmt/format.h>

#include <set>
#include <variant>

#include "core/message_text.h"
#include "data/token_labels.h"
#include "models/gpt/framing.h"
#include "models/gpt/trainer.h"

namespace cppgrad::gpt {

namespace {

std::string origins_line(const data::Lines& lines, const LoadedModel& m, const std::vector<std::string>& samples) {
  const SampleOrigins o = sample_origins(lines, m.tokenizer, samples);
  return fmt::format("{} samples: {} are lines of the training split, {} of the validation split (never trained on), "
                     "{} new\n", o.samples, o.in_train, o.in_val, o.fresh());
}

std::string origins_line(const data::RunningText&, const LoadedModel&, const std::vector<std::string>&) { return ""; }

// A lines model's samples are judged against its data (the file re-read); a running text's are not.
std::string judged(const LinesFraming&, const LoadedModel& m, const std::vector<std::string>& samples) {
  try {
    const data::TextCorpus corpus = read_corpus(m.config, m.context, m.tokenizer);
    return std::visit([&](const auto& s) { return origins_line(s, m, samples); }, corpus.splits);
  } catch (const std::exception& e) {
    // (the message names the file)
    return fmt::format("(cannot tell which samples are in the data: {})\n", message_line(e.what()));
  }
}

std::string judged(const TextFraming&, const LoadedModel&, const std::vector<std::string>&) { return ""; }

}  // namespace

SampleOrigins sample_origins(const data::Lines& lines, const data::Tokenizer& tokenizer,
                             const std::vector<std::string>& samples) {
  std::set<std::string> train_set, val_set;
  for (const auto& l : lines.train) train_set.insert(data::token_text(tokenizer, l));
  for (const auto& l : lines.val) val_set.insert(data::token_text(tokenizer, l));
  SampleOrigins o{.samples = std::ssize(samples)};
  for (const auto& w : samples) {
    o.in_train += train_set.count(w) > 0;
    o.in_val += !train_set.count(w) && val_set.count(w);
  }
  return o;
}

std::string origins_report(const LoadedModel& model, const std::vector<std::string>& samples) {
  return std::visit([&](const auto& f) { return judged(f, model, samples); }, framing_of(model.tokenizer));
}

}  // namespace cppgrad::gpt
