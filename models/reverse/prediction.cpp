#include "models/reverse/prediction.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/reverse/greedy.h"
#include "train/flags.h"

namespace cppgrad::reverse {

std::string tokens_text(const std::vector<std::int64_t>& tokens) {
  std::string s = "[";
  for (std::size_t i = 0; i < tokens.size(); ++i) s += (i ? ", " : "") + std::to_string(tokens[i]);
  return s + "]";
}

std::vector<std::int64_t> readable_row(const Tensor& predictions, std::int64_t row, const data::ReversalConfig& config) {
  std::vector<std::int64_t> out;
  for (std::int64_t t = 0; t < predictions.shape()[1]; ++t) {
    const auto v = static_cast<std::int64_t>(predictions.at({row, t}));
    if (v == data::kPad || (config.variable_length() && v == config.eos())) break;
    out.push_back(v);
  }
  return out;
}

std::vector<std::int64_t> parse_sequence(const std::vector<std::string>& words, const data::ReversalConfig& config) {
  std::vector<std::int64_t> tokens;
  for (const std::string& s : words) {
    const auto v = parse_int(s);
    if (!v) throw std::invalid_argument("predict: '" + s + "' is not a token (an integer) or a known flag");
    tokens.push_back(*v);
  }
  for (std::int64_t t : tokens)
    if (t < 1 || t >= config.vocab)
      throw std::invalid_argument(fmt::format("token {} is outside this model's vocabulary 1..{}", t, config.vocab - 1));
  const std::int64_t L = static_cast<std::int64_t>(tokens.size());
  if (L < config.min_len || L > config.max_len)
    throw std::invalid_argument(fmt::format("this model reverses sequences of length {}, got {}",
                                            config.variable_length()
                                                ? fmt::format("{}..{}", config.min_len, config.max_len)
                                                : std::to_string(config.max_len),
                                            L));
  return tokens;
}

std::string prediction_line(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& output) {
  const std::vector<std::int64_t> want(source.rbegin(), source.rend());
  return fmt::format("{} -> {}  {}\n", tokens_text(source), tokens_text(output),
                     output == want ? "(correct)" : "(expected " + tokens_text(want) + ")");
}

std::string example_line(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& output) {
  const std::vector<std::int64_t> want(source.rbegin(), source.rend());
  return fmt::format("  {} -> {}  {}\n", tokens_text(source), tokens_text(output),
                     output == want ? "ok" : "WRONG, expected " + tokens_text(want));
}

Prediction predict_one(const nn::Seq2SeqTransformer& model, const std::vector<std::int64_t>& tokens,
                       const data::ReversalConfig& config) {
  Prediction p;
  p.tokens = tokens;
  p.batch = data::gather_batch(data::make_set(config, {tokens}), {0}, config.variable_length());
  p.predictions = greedy_decode(model, p.batch.src, p.batch.src_mask, config);
  p.output = readable_row(p.predictions, 0, config);
  return p;
}

}  // namespace cppgrad::reverse
