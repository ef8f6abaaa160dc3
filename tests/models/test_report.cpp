// models/reverse/report.h: the lines cppgrad-reverse prints, from their numbers.
#include "models/reverse/report.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(ReverseReport, PercentHasOneDecimal) {
  EXPECT_EQ(reverse::percent(0.5), "50.0%");
  EXPECT_EQ(reverse::percent(1), "100.0%");
  EXPECT_EQ(reverse::percent(0.12345), "12.3%");
}

TEST(ReverseReport, TheRunDescriptionSaysTheLengths) {
  reverse::TrainConfig c;
  EXPECT_EQ(reverse::run_description(c, 2),
            "cppgrad-reverse: reverse 8-token sequences of tokens 1..9 (5000 train, 500 test, seed 42), 2 threads");
  c.min_len = 3, c.max_len = 6;
  EXPECT_NE(reverse::run_description(c, 1).find("reverse 3..6-token sequences"), std::string::npos);
}

TEST(ReverseReport, EpochAndFinalLines) {
  reverse::EpochMetrics m{.epoch = 3, .loss = 0.25, .train_token_acc = 0.5, .test_seq_acc = 0.25, .test_token_acc = 0.75,
                          .lr = 1e-3, .epoch_s = 1.5};
  EXPECT_EQ(reverse::epoch_line(m, 30, {1, 2}),
            "epoch   3/30  loss 0.2500  train tok  50.0%  test seq  25.0%  test tok  75.0%  lr 1.00e-03  1.50s  |g| ▁█\n");
  reverse::FinalSummary f{.test_seq_acc = 0.9, .test_token_acc = 0.95, .best_seq_acc = 0.92, .best_epoch = 4,
                          .epoch_99 = 0, .train_wall_s = 12.0, .epochs = 5, .params = 100};
  EXPECT_EQ(reverse::final_lines(f, 4.0, 10),
            "done: 5 epochs, greedy test accuracy 90.0% (tokens 95.0%), best 92.0% at epoch 4; first >= 99% at epoch "
            "never\n"
            "time: 12.0s training wall time over all epochs; this session 4.0s, 2.5 steps/s\n");
  f.epoch_99 = 2;
  EXPECT_NE(reverse::final_lines(f, 4.0, 10).find("first >= 99% at epoch 2\n"), std::string::npos);
}

TEST(ReverseReport, ASweepRowHasADashForNeverReaching99Percent) {
  reverse::TrainConfig c;
  c.model.n_heads = 8;
  reverse::SettingResult r;
  r.summary.params = 1234, r.summary.test_seq_acc = 0.5, r.summary.train_wall_s = 3.5, r.final_loss = 0.125;
  EXPECT_EQ(reverse::sweep_row(c, r), "    8  scaled_dot          1234      0.1250      50.0%           -      3.5s\n");
  r.summary.epoch_99 = 11;
  EXPECT_NE(reverse::sweep_row(c, r).find("  11  "), std::string::npos);
  EXPECT_EQ(reverse::sweep_header().rfind("heads  attention", 0), 0u);
}

TEST(ReverseReport, ResumedLineIsEmptyForAFreshRun) {
  reverse::TrainConfig c;
  c.train_size = 32, c.test_size = 8, c.model.d_model = 8, c.model.n_heads = 2, c.model.d_ff = 8, c.threads = 1;
  const reverse::Trainer fresh(c);
  EXPECT_EQ(reverse::resumed_line(fresh, "m.safetensors"), "");
}

}  // namespace
}  // namespace cppgrad
