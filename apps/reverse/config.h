#pragma once
// Everything a reversal run depends on. Checkpoints store it (as JSON in their metadata), so a resumed run can
// check it continues the same experiment.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/reversal.h"
#include "nn/seq2seq.h"

namespace cppgrad::reverse {

struct TrainConfig {
  // data (the seed tutorial's setting by default)
  std::int64_t vocab = 10;
  std::int64_t seq_len = 8;
  std::int64_t min_len = 0;  // 0: use seq_len (fixed length)
  std::int64_t max_len = 0;
  std::int64_t train_size = 5000;
  std::int64_t test_size = 500;
  // model
  std::int64_t d_model = 32;
  std::int64_t heads = 4;
  std::int64_t encoder_layers = 2;
  std::int64_t decoder_layers = 2;
  std::int64_t d_ff = 64;
  std::int64_t positions = 50;  // rows of the learned position tables
  double dropout = 0.0;
  std::string attention = "scaled_dot";  // scaled_dot | additive | multiplicative (the cross-attention)
  std::string arch = "transformer";      // transformer | tutorial
  // optimisation
  std::int64_t epochs = 30;
  std::int64_t batch_size = 64;
  double lr = 1e-3;
  std::string optimizer = "adam";  // adam | adamw | sgd
  double weight_decay = 0.0;
  double momentum = 0.9;           // sgd only
  std::string schedule = "constant";  // constant | step | cosine
  std::int64_t warmup_steps = 0;
  double clip_grad = 0.0;  // 0: no clipping
  std::uint64_t seed = 42;
  std::int64_t threads = 0;  // 0: OpenMP's default

  data::ReversalConfig data_config() const;
  nn::Seq2SeqOptions model_options() const;
  // Throws std::invalid_argument with a one-line reason for any value out of range.
  void validate() const;

  std::string to_json() const;
  static TrainConfig from_json(const std::string& json);  // throws std::invalid_argument on a malformed config
  // The keys that must agree for a checkpoint to be resumed (everything but epochs and threads).
  std::vector<std::string> mismatched_for_resume(const TrainConfig& other) const;
};

}  // namespace cppgrad::reverse
