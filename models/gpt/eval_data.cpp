#include "models/gpt/eval_data.h"

#include <fmt/format.h>

#include <stdexcept>

#include "data/utf8.h"
#include "models/gpt/trainer.h"

namespace cppgrad::gpt {

EvalData eval_data(const LoadedModel& m, const std::optional<std::string>& file) {
  if (!file) return {read_corpus(m.config, m.context, m.tokenizer), "the validation split of " + m.config.data};
  std::string text;
  try {
    text = data::read_text_file(*file);
  } catch (const std::runtime_error& e) {  // "<path>: <why>"
    throw std::invalid_argument(fmt::format("--data {}", e.what()));
  }
  try {
    const data::TextCorpusConfig whole{.format = m.config.format, .context = m.context, .val_fraction = 0, .seed = 0};
    return {data::make_text_corpus(text, whole, m.tokenizer), *file};
  } catch (const std::invalid_argument& e) {  // invalid UTF-8, a character not in the vocabulary, too short
    throw std::invalid_argument(fmt::format("--data {}: {}", *file, e.what()));
  } catch (const std::runtime_error& e) {  // a stored BPE's split pattern gave up on the text
    throw std::invalid_argument(fmt::format("--data {} through the checkpoint's tokenizer: {}", *file, e.what()));
  }
}

}  // namespace cppgrad::gpt
