#pragma once
// One sequence reversed by a trained model, and predictions as a person reads them: what `cppgrad-reverse predict`
// and `eval` print, and what a test or the page can check without the program.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/reversal.h"
#include "nn/seq2seq.h"

namespace cppgrad::reverse {

// {1, 3, 5} -> "[1, 3, 5]"
std::string tokens_text(const std::vector<std::int64_t>& tokens);

// Row `row` of predictions [B, T] up to (not including) its first PAD, or its first EOS with variable lengths.
std::vector<std::int64_t> readable_row(const Tensor& predictions, std::int64_t row, const data::ReversalConfig& config);

// The words of `cppgrad-reverse predict TOKENS...` ({"1", "3", "5"}) as a sequence this config reverses. Throws
// std::invalid_argument with a one-line reason when a word is not an integer, a token is outside the vocabulary
// 1..vocab-1, or the length is outside min_len..max_len.
std::vector<std::int64_t> parse_sequence(const std::vector<std::string>& words, const data::ReversalConfig& config);

// A source and the model's output, each as tokens_text, ending with '\n': for predict "[1, 2] -> [2, 1]  (correct)"
// or "... (expected [2, 1])"; for eval's examples "  [1, 2] -> [2, 1]  ok" or "...  WRONG, expected [2, 1]".
std::string prediction_line(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& output);
std::string example_line(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& output);

// One sequence through the model, decoded greedily (models/reverse/greedy.h).
struct Prediction {
  std::vector<std::int64_t> tokens;   // the source sequence
  data::Batch batch;                  // the sequence as a batch of one: src [1, S], src_mask [1, 1, 1, S] or undefined
  Tensor predictions;                 // [1, T] int64
  std::vector<std::int64_t> output;   // readable_row of predictions
};
// tokens: a sequence parse_sequence accepts.
Prediction predict_one(const nn::Seq2SeqTransformer& model, const std::vector<std::int64_t>& tokens,
                       const data::ReversalConfig& config);

}  // namespace cppgrad::reverse
