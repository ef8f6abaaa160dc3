#pragma once
// The seed tutorial's model, exactly as written, to show why its 100% is copying, not reversing.
//
//   encode:  x = src_embed(src) + src_pos;  x = enc_norm[i](x + enc_attn[i](x, x, x))  (no feed-forward)
//   forward: y = tgt_embed(dec) + tgt_pos;  y = dec_norm(y + cross_attn(y, memory, memory));  logits = fc_out(y)
//
// The tutorial trains with dec = the target itself (no shift, no causal mask): position i of the output can
// simply read position i of its input. Its "accuracy" feeds the target again. An honest evaluation gives the
// decoder nothing (zeros) and fills position i with its own prediction, left to right.
#include <memory>

#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/multi_head_attention.h"
#include "models/reverse/config.h"
#include "models/reverse/trainer.h"

namespace cppgrad::reverse {

class TutorialModel : public nn::Module {
 public:
  TutorialModel(const TrainConfig& c, Generator& gen);
  std::string type_name() const override { return "TutorialSeq2Seq"; }
  // src, dec: [B, L] int64 -> logits [B, L, vocab]
  Tensor forward(const Tensor& src, const Tensor& dec) const;

 private:
  std::shared_ptr<nn::Embedding> src_embed_, tgt_embed_, src_pos_, tgt_pos_;
  std::shared_ptr<nn::ModuleList<nn::MultiHeadAttention>> enc_attn_;
  std::shared_ptr<nn::ModuleList<nn::LayerNorm>> enc_norm_;
  std::shared_ptr<nn::MultiHeadAttention> cross_attn_;
  std::shared_ptr<nn::LayerNorm> dec_norm_;
  std::shared_ptr<nn::Linear> fc_out_;
};

struct TutorialEpoch {
  EpochMetrics metrics;               // train_token_acc is teacher-forced; test_* are the honest greedy ones
  double tutorial_test_seq_acc = 0;   // the tutorial's way: the target given to the decoder
  double tutorial_test_token_acc = 0;
};

class TutorialTrainer {
 public:
  explicit TutorialTrainer(const TrainConfig& config);
  TutorialEpoch run_epoch(const Trainer::StepCallback& on_step = nullptr);
  TutorialModel& model() { return *model_; }
  std::int64_t steps_per_epoch() const;
  const std::vector<EpochMetrics>& history() const { return history_; }

 private:
  TrainConfig config_;
  data::ReversalData data_;
  std::unique_ptr<TutorialModel> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<EpochMetrics> history_;
};

}  // namespace cppgrad::reverse
