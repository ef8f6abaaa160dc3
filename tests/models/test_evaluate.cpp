// models/reverse/evaluate.h: a checkpoint loaded for use (its config, eval mode, the weights it saved) and a model
// scored on a fresh test set.
#include <stdexcept>

#include "models/reverse/evaluate.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

reverse::TrainConfig small_config() {
  reverse::TrainConfig c;
  c.train_size = 64, c.test_size = 16, c.model.d_model = 16, c.model.n_heads = 2, c.model.d_ff = 24, c.threads = 1, c.epochs = 1;
  return c;
}

TEST(Evaluate, AFreshEvaluationScoresEveryTestSequence) {
  const reverse::TrainConfig config = small_config();
  const data::ReversalConfig c = config.data_config();
  Generator gen(5);
  nn::Seq2SeqTransformer model(config.model_options(), gen);
  model.eval();
  const reverse::FreshEvaluation e = reverse::evaluate_fresh(model, c, 3);
  EXPECT_EQ(e.test.size(), data::make_test_set(c, 3).size());
  ASSERT_EQ(e.predictions.shape()[0], e.test.size());
  const reverse::Accuracy want = reverse::accuracy(e.predictions, e.test.target);
  EXPECT_EQ(e.accuracy.sequence, want.sequence);
  EXPECT_EQ(e.accuracy.token, want.token);
  // Another seed, another test set.
  EXPECT_NE(reverse::evaluate_fresh(model, c, 4).test.sequences, e.test.sequences);
}

TEST(Evaluate, LoadTrainedGivesTheSavedModelInEvalMode) {
  reverse::Trainer trainer(small_config());
  trainer.run_epoch();
  test::TempDir dir;
  const std::string path = (dir.path / "m.safetensors").string();
  trainer.save(path);
  std::int64_t asked = -1;
  reverse::Trainer loaded = reverse::load_trained(path, 2, [&](std::int64_t threads) { asked = threads; });
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(loaded.config().threads, 2);
  EXPECT_EQ(loaded.epochs_done(), 1);
  EXPECT_FALSE(loaded.model().is_training());
  const auto pa = trainer.model().parameters(), pb = loaded.model().parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>());
  EXPECT_THROW(reverse::load_trained(path, reverse::kMaxThreads + 1), std::invalid_argument);
  EXPECT_THROW(reverse::load_trained(path, -1), std::invalid_argument);
  EXPECT_THROW(reverse::load_trained((dir.path / "missing.safetensors").string(), 0), std::runtime_error);
}

}  // namespace
}  // namespace cppgrad
