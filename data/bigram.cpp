#include "data/bigram.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <variant>

namespace cppgrad::data {

BigramModel::BigramModel(std::int64_t vocab) : vocab_(vocab) {
  // 2^31 keeps the pair key token * V + next inside 64 bits; a character vocab is at most 0x110000 + 1.
  if (vocab < 1 || vocab > (std::int64_t{1} << 31))
    throw std::invalid_argument(fmt::format("BigramModel: vocab must be in [1, 2^31], got {}", vocab));
  row_totals_.assign(static_cast<std::size_t>(vocab), 0);
}

void BigramModel::check_id(std::int64_t id, const char* op) const {
  if (id < 0 || id >= vocab_)
    throw std::invalid_argument(fmt::format("BigramModel::{}: token {} is outside the vocabulary [0, {})", op, id, vocab_));
}

void BigramModel::count(const std::vector<std::int64_t>& sequence) {
  for (const std::int64_t id : sequence) check_id(id, "count");  // all checked first: a refusal changes no count
  for (std::size_t i = 0; i + 1 < sequence.size(); ++i) {
    const std::int64_t token = sequence[i], next = sequence[i + 1];
    ++pairs_[static_cast<std::uint64_t>(token * vocab_ + next)];
    ++row_totals_[static_cast<std::size_t>(token)];
  }
}

double BigramModel::probability(std::int64_t token, std::int64_t next) const {
  check_id(token, "probability");
  check_id(next, "probability");
  const auto it = pairs_.find(static_cast<std::uint64_t>(token * vocab_ + next));
  const double n = it == pairs_.end() ? 0.0 : static_cast<double>(it->second);
  return (n + 1.0) / (static_cast<double>(row_totals_[static_cast<std::size_t>(token)]) + static_cast<double>(vocab_));
}

void BigramModel::add_nll(const std::vector<std::int64_t>& s, double& total, std::int64_t& pairs) const {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    total -= std::log(probability(s[i], s[i + 1]));
    ++pairs;
  }
}

double BigramModel::mean_nll(const std::vector<std::vector<std::int64_t>>& sequences) const {
  double total = 0.0;
  std::int64_t pairs = 0;
  for (const auto& s : sequences) add_nll(s, total, pairs);
  if (pairs == 0) throw std::invalid_argument("BigramModel::mean_nll: the sequences hold no (token, next) pair");
  return total / static_cast<double>(pairs);
}

double BigramModel::mean_nll_stream(const std::vector<std::int64_t>& sequence) const {
  double total = 0.0;
  std::int64_t pairs = 0;
  add_nll(sequence, total, pairs);
  if (pairs == 0) throw std::invalid_argument("BigramModel::mean_nll_stream: the sequence holds no (token, next) pair");
  return total / static_cast<double>(pairs);
}

std::vector<std::int64_t> with_boundaries(const std::vector<std::int64_t>& line) {
  std::vector<std::int64_t> out;
  out.reserve(line.size() + 2);
  out.push_back(0);
  out.insert(out.end(), line.begin(), line.end());
  out.push_back(0);
  return out;
}

double bigram_val_loss(std::int64_t vocab, const RunningText& splits) {
  BigramModel model(vocab);
  model.count(splits.train);
  return model.mean_nll_stream(splits.val);
}

double bigram_val_loss(std::int64_t vocab, const Lines& splits) {
  BigramModel model(vocab);
  for (const auto& line : splits.train) model.count(with_boundaries(line));
  std::vector<std::vector<std::int64_t>> val;
  val.reserve(splits.val.size());
  for (const auto& line : splits.val) val.push_back(with_boundaries(line));
  return model.mean_nll(val);
}

double bigram_val_loss(const TextCorpus& corpus) {
  return std::visit([&](const auto& s) { return bigram_val_loss(corpus.tokenizer.size(), s); }, corpus.splits);
}

}  // namespace cppgrad::data
