// models/reverse/train_checks.h: what a train run refuses of its settings together, before it starts.
#include <stdexcept>

#include "models/reverse/train_checks.h"
#include "models/reverse/trainer.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

std::string refusal(const reverse::TrainConfig& c, const std::string& save, const std::string& resume, int processes,
                    bool read_resume = true) {
  try {
    reverse::check_train_run(c, save, resume, processes, read_resume);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(TrainChecks, ProcessesNeedTheShardedTransformer) {
  reverse::TrainConfig c = reverse::TrainConfig{}.with_shards();
  EXPECT_EQ(refusal(c, "", "", 0), "accepted");
  EXPECT_EQ(refusal(c, "", "", 2), "accepted");  // the default batch has shards
  c.shards = 1;
  EXPECT_EQ(refusal(c, "", "", 2), "2 processes need the transformer's sharded step: --arch transformer and --shards "
                                   "a multiple of the processes, got --arch transformer --shards 1");
  EXPECT_EQ(refusal(c, "", "", 0), "accepted");
}

TEST(TrainChecks, TheTutorialHasNoCheckpoint) {
  reverse::TrainConfig c = reverse::TrainConfig{}.with_shards();
  c.arch = reverse::Arch::tutorial;
  EXPECT_EQ(refusal(c, "", "", 0), "accepted");
  EXPECT_EQ(refusal(c, "m.safetensors", "", 0), "--save and --resume are not available with --arch tutorial");
  EXPECT_EQ(refusal(c, "", "", 2).find("2 processes need"), 0u);
}

TEST(TrainChecks, AResumedRunMustHaveEpochsLeft) {
  reverse::TrainConfig c;
  c.train_size = 32, c.test_size = 8, c.model.d_model = 8, c.model.n_heads = 2, c.model.d_ff = 8, c.threads = 1, c.epochs = 1;
  reverse::Trainer trainer(c);
  trainer.run_epoch();
  test::TempDir dir;
  const std::string path = (dir.path / "m.safetensors").string();
  trainer.save(path);
  EXPECT_EQ(refusal(c, "", path, 0), "--resume " + path + ": the checkpoint has trained 1 epochs already and --epochs "
                                     "is 1: nothing to do (give --epochs above 1 to train further)");
  EXPECT_EQ(refusal(c, "", path, 0, /*read_resume=*/false), "accepted");  // not rank 0: it does not read the file
  c.epochs = 2;
  EXPECT_EQ(refusal(c, "", path, 0), "accepted");
}

}  // namespace
}  // namespace cppgrad
