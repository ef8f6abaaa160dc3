#pragma once
// The text `cppgrad-gpt eval` scores a checkpoint on: the validation split of the data it was trained on (its --data,
// read again and split as in training), or any file read whole through the checkpoint's tokenizer and framing (its
// lines, or its text in windows of the context), so two models compare on one text.
#include <optional>
#include <string>

#include "data/text_corpus.h"
#include "models/gpt/checkpoint.h"

namespace cppgrad::gpt {

struct EvalData {
  data::TextCorpus corpus;  // the file's tokens are all in its validation split
  std::string what;         // how eval's line names it: the file's path, or "the validation split of <data>"
};

// file: eval's --data, or nullopt for the checkpoint's validation split. Throws std::invalid_argument "--data
// <path>: <why>" when the file cannot be read, is not valid UTF-8, has a character outside a character vocabulary or
// is too short for the context, or "--data <path> through the checkpoint's tokenizer: <why>" when a stored BPE's split
// pattern gives up on it; read_corpus's errors for the checkpoint's own data.
EvalData eval_data(const LoadedModel& model, const std::optional<std::string>& file);

}  // namespace cppgrad::gpt
