#pragma once
// Whether a model of lines invents or remembers: its samples against the lines it learned from. A sample that is a
// line of the training split was memorised; one of the validation split is a real line the model never saw; the rest
// are new. `cppgrad-gpt sample` prints the count after its samples; a running text's continuations are neither.
#include <cstdint>
#include <string>
#include <vector>

#include "data/text_corpus.h"
#include "models/gpt/checkpoint.h"

namespace cppgrad::gpt {

struct SampleOrigins {
  std::int64_t samples = 0;
  std::int64_t in_train = 0;  // lines of the training split
  std::int64_t in_val = 0;    // lines of the validation split and not of the training split
  std::int64_t fresh() const { return samples - in_train - in_val; }
};

// samples: texts as SampleSession::next gives them; lines: a corpus's splits, read through `tokenizer`.
SampleOrigins sample_origins(const data::Lines& lines, const data::Tokenizer& tokenizer,
                             const std::vector<std::string>& samples);

// What `sample` prints after a model's samples, ending with '\n': for a model of lines, its data (the checkpoint's
// --data, read again) and the counts, "12 samples: 3 are lines of the training split, 1 of the validation split
// (never trained on), 8 new", or "(cannot tell which samples are in the data: <why>)" when the file cannot be read
// as it was; "" for a running text.
std::string origins_report(const LoadedModel& model, const std::vector<std::string>& samples);

}  // namespace cppgrad::gpt
