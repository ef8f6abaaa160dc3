#include "models/reverse/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "train/plot/terminal.h"

namespace cppgrad::reverse {

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string run_description(const TrainConfig& config, int threads) {
  const data::ReversalConfig dcfg = config.data_config();
  return fmt::format("cppgrad-reverse: reverse {} sequences of tokens 1..{} ({} train, {} test, seed {}), {} threads",
                     dcfg.variable_length() ? fmt::format("{}..{}-token", dcfg.min_len, dcfg.max_len)
                                            : fmt::format("{}-token", dcfg.max_len),
                     dcfg.vocab - 1, config.train_size, config.test_size, config.seed, threads);
}

std::string resumed_line(const Trainer& trainer, const std::string& resume) {
  if (const std::int64_t step = trainer.epoch_progress().steps; step > 0)
    return fmt::format("resumed in epoch {} after step {} of {} from {}\n", trainer.epochs_done() + 1, step,
                       trainer.steps_per_epoch(), resume);
  if (trainer.epochs_done() > 0) return fmt::format("resumed after epoch {} from {}\n", trainer.epochs_done(), resume);
  return "";
}

std::string epoch_line(const EpochMetrics& m, std::int64_t epochs, const std::vector<double>& grad_norms) {
  return fmt::format(
      "epoch {:>3}/{}  loss {:.4f}  train tok {:>6}  test seq {:>6}  test tok {:>6}  lr {:.2e}  {:.2f}s  |g| {}\n",
      m.epoch, epochs, m.loss, percent(m.train_token_acc), percent(m.test_seq_acc), percent(m.test_token_acc), m.lr,
      m.epoch_s, train::sparkline(train::downsample(grad_norms, 20)));
}

std::string final_lines(const FinalSummary& final, double session_s, std::int64_t steps_run) {
  return fmt::format("done: {} epochs, greedy test accuracy {} (tokens {}), best {} at epoch {}; first >= 99% at epoch "
                     "{}\n",
                     final.epochs, percent(final.test_seq_acc), percent(final.test_token_acc),
                     percent(final.best_seq_acc), final.best_epoch,
                     final.epoch_99 > 0 ? std::to_string(final.epoch_99) : "never") +
         fmt::format("time: {:.1f}s training wall time over all epochs; this session {:.1f}s, {:.1f} steps/s\n",
                     final.train_wall_s, session_s, steps_run / std::max(session_s, 1e-9));
}

std::string tutorial_intro() {
  return "cppgrad-reverse --arch tutorial: the seed tutorial's model as written (decoder without self-attention,\n"
         "trained with the TARGET ITSELF as the decoder input). Two accuracies per epoch: the tutorial's (the\n"
         "target is given again at test time) and the honest greedy one (the decoder starts from nothing).\n";
}

std::string tutorial_epoch_line(const TutorialEpoch& e, std::int64_t epoch, std::int64_t epochs) {
  return fmt::format("epoch {:>3}/{}  loss {:.4f}  tutorial's test seq acc {:>6}  honest greedy test seq acc {:>6} (tok "
                     "{:>6})  {:.2f}s\n",
                     epoch, epochs, e.metrics.loss, percent(e.tutorial_test_seq_acc), percent(e.metrics.test_seq_acc),
                     percent(e.metrics.test_token_acc), e.metrics.epoch_s);
}

std::string tutorial_final_lines(const TutorialEpoch& last) {
  return fmt::format("tutorial's way (target given to the decoder): test sequence accuracy {}\n",
                     percent(last.tutorial_test_seq_acc)) +
         fmt::format("honest (greedy, target never given):          test sequence accuracy {} (tokens {})\n",
                     percent(last.metrics.test_seq_acc), percent(last.metrics.test_token_acc)) +
         "The gap is the leak: trained on its own answer, the model learned to copy its input, not to reverse.\n";
}

std::string eval_line(const std::string& checkpoint, std::int64_t epochs, std::int64_t sequences, std::uint64_t seed,
                      const Accuracy& accuracy) {
  return fmt::format("checkpoint {} (epoch {}): greedy accuracy on {} fresh test sequences (seed {}): sequences {}, "
                     "tokens {}\n",
                     checkpoint, epochs, sequences, seed, percent(accuracy.sequence), percent(accuracy.token));
}

std::string sweep_header() {
  return fmt::format("{:>5}  {:<15}  {:>7}  {:>10}  {:>9}  {:>10}  {:>8}\n", "heads", "attention", "params",
                     "final loss", "greedy", "epochs→99%", "time");
}

std::string sweep_row(const TrainConfig& config, const SettingResult& result) {
  const FinalSummary& s = result.summary;
  return fmt::format("{:>5}  {:<15}  {:>7}  {:>10.4f}  {:>9}  {:>10}  {:>7.1f}s\n", config.model.n_heads,
                     choice_name(nn::kCrossAttentionChoices, config.model.cross_attention), s.params, result.final_loss,
                     percent(s.test_seq_acc), s.epoch_99 > 0 ? std::to_string(s.epoch_99) : "-", s.train_wall_s);
}

}  // namespace cppgrad::reverse
