// The data-parallel training step: workers on their own threads, each with a slice of the batch, must take the
// step one worker takes on the whole batch, and do it reproducibly.
#include <omp.h>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/parallel.h"
#include "models/reverse/trainer.h"
#include "test_paths.h"
#include "test_util.h"
#include "train/stop.h"

namespace cppgrad {
namespace {

reverse::TrainConfig small_config(std::int64_t threads) {
  reverse::TrainConfig c;
  c.train_size = 64;
  c.test_size = 32;
  c.model.d_model = 16;
  c.model.n_heads = 2;
  c.model.d_ff = 24;
  c.threads = threads;
  return c;
}

std::vector<std::int64_t> first_rows(std::int64_t n) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) rows[i] = i;
  return rows;
}

TEST(Trainer, OneAndTwoThreadsTakeBitIdenticalSteps) {
  // Plain SGD with lr 1 makes the step the gradient itself: w_after = w_before - grad.
  reverse::TrainConfig config = small_config(1);
  config.optimizer = reverse::OptimizerKind::sgd;
  config.momentum = 0;
  config.lr = 1.0;
  config.min_len = 3, config.max_len = 8;  // padding: the shards hold different numbers of target tokens
  config.model.dropout = 0.1;                    // each shard's masks from its own seed, whichever thread runs it
  reverse::Trainer one(config);
  config.threads = 2;
  reverse::Trainer two(config);
  ASSERT_EQ(one.workers(), 1);
  ASSERT_EQ(two.workers(), 2);
  const auto rows = first_rows(64);
  const auto a = one.train_step(rows), b = two.train_step(rows);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.teacher_forced.tokens, b.teacher_forced.tokens);
  EXPECT_EQ(a.teacher_forced.right_tokens, b.teacher_forced.right_tokens);
  const auto pa = one.model().named_parameters(), pb = two.model().named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].second.to_vector<float>(), pb[i].second.to_vector<float>()) << pa[i].first;

  reverse::TrainConfig no_dropout = small_config(1);
  no_dropout.optimizer = reverse::OptimizerKind::sgd, no_dropout.momentum = 0, no_dropout.lr = 1.0, no_dropout.min_len = 3, no_dropout.max_len = 8;
  reverse::Trainer sharded(no_dropout);
  no_dropout.shards = 1;  // the plain step: the whole batch on the model, summed in another order
  reverse::Trainer whole(no_dropout);
  const auto c = sharded.train_step(rows), d = whole.train_step(rows);
  EXPECT_NEAR(c.loss, d.loss, 1e-6 * d.loss);
  EXPECT_EQ(c.teacher_forced.right_tokens, d.teacher_forced.right_tokens);
  const auto pc = sharded.model().named_parameters(), pd = whole.model().named_parameters();
  for (std::size_t i = 0; i < pc.size(); ++i) {
    const auto x = pc[i].second.to_vector<float>(), y = pd[i].second.to_vector<float>();
    for (std::size_t j = 0; j < x.size(); ++j) ASSERT_NEAR(x[j], y[j], 2e-6) << pc[i].first << "[" << j << "]";
  }
}

TEST(Trainer, ABrokenSplitIsCaught) {
  // The test above must be able to fail: one worker on half the rows takes a measurably different step.
  reverse::TrainConfig config = small_config(1);
  config.optimizer = reverse::OptimizerKind::sgd, config.momentum = 0, config.lr = 1.0;
  reverse::Trainer whole(config), half(config);
  whole.train_step(first_rows(64));
  half.train_step(first_rows(32));
  double worst = 0;
  const auto pa = whole.model().parameters(), pb = half.model().parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const auto x = pa[i].to_vector<float>(), y = pb[i].to_vector<float>();
    for (std::size_t j = 0; j < x.size(); ++j) worst = std::max(worst, static_cast<double>(std::abs(x[j] - y[j])));
  }
  EXPECT_GT(worst, 1e-3);
}

TEST(Trainer, TheSameSeedAndWorkerCountGiveBitIdenticalLosses) {
  reverse::TrainConfig config = small_config(2);
  config.model.dropout = 0.1;  // the replicas draw their dropout masks from the model's generator
  reverse::Trainer a(config), b(config);
  for (int step = 0; step < 3; ++step) {
    const auto rows = first_rows(64);
    EXPECT_EQ(a.train_step(rows).loss, b.train_step(rows).loss) << "step " << step;
  }
  const auto pa = a.model().parameters(), pb = b.model().parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>());
}

TEST(Trainer, EvaluationSplitAcrossWorkersMatchesOneWorker) {
  reverse::TrainConfig config = small_config(1);
  reverse::Trainer one(config);
  config.threads = 2;
  reverse::Trainer two(config);
  for (int step = 0; step < 5; ++step) one.train_step(first_rows(64)), two.train_step(first_rows(64));
  two.model().load_state_dict(one.model().state_dict());  // the same weights: the predictions must agree
  const reverse::Accuracy x = one.evaluate(), y = two.evaluate();
  EXPECT_EQ(x.sequence, y.sequence);
  EXPECT_EQ(x.token, y.token);
}

TEST(Trainer, AnEpochStoppedBetweenTwoStepsAndResumedEndsLikeAnUnbrokenOne) {
  reverse::TrainConfig config = small_config(2);
  config.model.dropout = 0.1;  // the dropout generator's state must come back too
  config.batch_size = 16;  // four steps an epoch
  reverse::Trainer unbroken(config), stopped(config);
  const reverse::EpochMetrics whole = unbroken.run_epoch();

  int asked = 0;  // stop before the third step
  EXPECT_THROW(stopped.run_epoch(nullptr, [&] { return ++asked == 3; }), train::TrainingStopped);
  EXPECT_EQ(stopped.epoch_progress().steps, 2);
  EXPECT_EQ(stopped.epochs_done(), 0);
  test::TempDir dir;
  const std::string path = (dir.path / "stopped.safetensors").string();
  stopped.save(path);

  reverse::Trainer resumed(config);
  resumed.load(path);
  EXPECT_EQ(resumed.epoch_progress().steps, 2);
  EXPECT_EQ(resumed.global_step(), 2);
  const reverse::EpochMetrics rest = resumed.run_epoch();
  EXPECT_EQ(rest.loss, whole.loss);
  EXPECT_EQ(rest.train_token_acc, whole.train_token_acc);
  EXPECT_EQ(rest.test_seq_acc, whole.test_seq_acc);
  EXPECT_EQ(resumed.global_step(), unbroken.global_step());
  EXPECT_EQ(resumed.epoch_progress().steps, 0);
  const auto pa = unbroken.model().parameters(), pb = resumed.model().parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>());
}

TEST(Parallel, RunsEveryPieceCarriesTheNoGradSwitchAndRethrows) {
  std::vector<int> seen(3, 0);
  std::vector<int> grad_on(3, -1);
  {
    NoGradGuard no_grad;
    run_in_parallel(3, [&](int i) {
      seen[i] = 1;
      grad_on[i] = grad_enabled();
    });
  }
  EXPECT_EQ(seen, std::vector<int>(3, 1));
  EXPECT_EQ(grad_on, std::vector<int>(3, 0));
  EXPECT_THROW_MSG(run_in_parallel(2, [](int i) {
                     if (i == 1) throw std::runtime_error("piece 1 failed");
                   }),
                   std::runtime_error, "piece 1 failed");
}

}  // namespace
}  // namespace cppgrad

namespace cppgrad {
namespace {

// 50 training steps of the default model (d_model 32, 4 heads, 2 + 2 layers, Adam), one batch of 64 after another.
std::vector<double> fifty_step_losses() {
  reverse::TrainConfig config;  // the trainer's defaults
  config.train_size = 64 * 50;
  config.test_size = 32;
  config.threads = 1;
  reverse::Trainer trainer(config);
  std::vector<double> losses;
  for (std::int64_t step = 0; step < 50; ++step) {
    std::vector<std::int64_t> rows(64);
    for (std::int64_t i = 0; i < 64; ++i) rows[static_cast<std::size_t>(i)] = step * 64 + i;
    losses.push_back(trainer.train_step(rows).loss);
  }
  return losses;
}

TEST(ReferenceMode, FiftyStepsOnTheDefinitionsFollowTheFastKernels) {
  // The same 50 steps with every fast kernel (float32 SIMD, fused ops) and with the readable definitions only
  // (reference mode): both learn, and the losses agree to float32 rounding carried through 50 Adam steps.
  const std::vector<double> fast = fifty_step_losses();
  std::vector<double> reference;
  {
    ReferenceModeGuard definitions_only;
    reference = fifty_step_losses();
  }
  ASSERT_LT(fast.back(), 0.8 * fast.front()) << "the model must learn, or the comparison says little";
  double worst = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::abs(fast[i] - reference[i]) / fast[i]);
  RecordProperty("worst_relative_loss_difference", ::testing::PrintToString(worst));
  EXPECT_LT(worst, 1e-4) << "largest relative difference of a step's loss";
  EXPECT_GT(worst, 0.0) << "the two runs must take different code paths (one of them is not the fast one)";
}

}  // namespace
}  // namespace cppgrad
