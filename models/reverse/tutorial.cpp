#include "models/reverse/tutorial.h"

#include <chrono>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "optim/adam.h"

namespace cppgrad::reverse {

TutorialModel::TutorialModel(const TrainConfig& c, Generator& gen) {
  const std::int64_t D = c.model.d_model;
  src_embed_ = register_module("src_embed", std::make_shared<nn::Embedding>(c.vocab, D, gen));
  tgt_embed_ = register_module("tgt_embed", std::make_shared<nn::Embedding>(c.vocab, D, gen));
  src_pos_ = register_module("src_pos", std::make_shared<nn::Embedding>(c.model.max_len, D, gen));
  tgt_pos_ = register_module("tgt_pos", std::make_shared<nn::Embedding>(c.model.max_len, D, gen));
  enc_attn_ = register_module("enc_attn", std::make_shared<nn::ModuleList<nn::MultiHeadAttention>>());
  enc_norm_ = register_module("enc_norm", std::make_shared<nn::ModuleList<nn::LayerNorm>>());
  for (std::int64_t i = 0; i < c.model.n_encoder_layers; ++i) {
    enc_attn_->push_back(std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{D, c.model.n_heads}, gen));
    enc_norm_->push_back(std::make_shared<nn::LayerNorm>(D));
  }
  cross_attn_ = register_module("cross_attn", std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{D, c.model.n_heads}, gen));
  dec_norm_ = register_module("dec_norm", std::make_shared<nn::LayerNorm>(D));
  fc_out_ = register_module("fc_out", std::make_shared<nn::Linear>(nn::LinearOptions{.in = D, .out = c.vocab}, gen));
}

Tensor TutorialModel::forward(const Tensor& src, const Tensor& dec) const {
  const Tensor src_positions = Tensor::arange(0, src.shape()[1]), dec_positions = Tensor::arange(0, dec.shape()[1]);
  Tensor x = add(src_embed_->forward(src), src_pos_->forward(src_positions));  // [B, S, D]
  for (std::size_t i = 0; i < enc_attn_->size(); ++i)
    x = (*enc_norm_)[i].forward(add(x, (*enc_attn_)[i].forward(x, x, x).output));
  Tensor y = add(tgt_embed_->forward(dec), tgt_pos_->forward(dec_positions));  // [B, L, D]
  y = dec_norm_->forward(add(y, cross_attn_->forward(y, x, x).output));
  return fc_out_->forward(y);  // [B, L, vocab]
}

TutorialTrainer::TutorialTrainer(const TrainConfig& config) : config_(config) {
  config_.validate();
  if (config_.data_config().variable_length())
    throw std::invalid_argument("--arch tutorial reproduces the tutorial's fixed-length task: use --seq-len, not --min/max-len");
  data_ = data::make_reversal_data(config_.data_config());
  Generator init(config_.seed);
  model_ = std::make_unique<TutorialModel>(config_, init);
  optimizer_ = std::make_unique<optim::Adam>(model_->named_parameters(), optim::AdamOptions{.lr = config_.lr});
}

std::int64_t TutorialTrainer::steps_per_epoch() const {
  return (config_.train_size + config_.batch_size - 1) / config_.batch_size;
}

TutorialEpoch TutorialTrainer::run_epoch(const Trainer::StepCallback& on_step) {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t epoch = static_cast<std::int64_t>(history_.size()) + 1;
  const auto batches = data::batch_rows(data::epoch_order(data_.train.size(), config_.seed, epoch), config_.batch_size);
  model_->train();
  double loss_sum = 0;
  std::int64_t hits = 0, tokens = 0, done = 0;
  for (const auto& rows : batches) {
    const data::Batch b = data::gather_batch(data_.train, rows, false);
    optimizer_->zero_grad();
    Tensor logits = model_->forward(b.src, b.target);  // THE LEAK: the decoder is given the target itself
    Tensor loss = cross_entropy(logits, b.target);
    loss.backward();
    optimizer_->step();
    loss_sum += loss.item();
    const AccuracyCounts c = count_correct(argmax(logits.detach(), -1), b.target);
    hits += c.right_tokens, tokens += c.tokens;
    if (on_step) on_step(++done, static_cast<std::int64_t>(batches.size()), loss.item());
  }
  TutorialEpoch e;
  EpochMetrics& m = e.metrics;
  m.epoch = epoch;
  m.loss = loss_sum / static_cast<double>(batches.size());
  m.train_token_acc = static_cast<double>(hits) / static_cast<double>(tokens);
  m.lr = optimizer_->lr();
  model_->eval();
  NoGradGuard no_grad;
  const Tensor& src = data_.test.src;
  const Tensor& tgt = data_.test.target;
  const Accuracy tutorial = accuracy(argmax(model_->forward(src, tgt), -1), tgt);  // the tutorial's way
  e.tutorial_test_seq_acc = tutorial.sequence, e.tutorial_test_token_acc = tutorial.token;
  // Honest: start from zeros and fill position i with the model's own prediction, left to right.
  Tensor dec = Tensor::zeros(tgt.shape(), DType::Int64);
  for (std::int64_t i = 0; i < tgt.shape()[1]; ++i) {
    const Tensor pred = argmax(model_->forward(src, dec), -1);  // [N, L]
    dec.slice(1, i, i + 1).copy_(pred.slice(1, i, i + 1));
  }
  const Accuracy honest = accuracy(dec, tgt);
  m.test_seq_acc = honest.sequence, m.test_token_acc = honest.token;
  m.epoch_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  history_.push_back(m);
  return e;
}

}  // namespace cppgrad::reverse
