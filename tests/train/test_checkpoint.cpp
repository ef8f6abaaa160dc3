// train/checkpoint.h: a model, an optimizer, a generator and the run's metadata saved and restored exactly; a file of
// another program, weights that are not finite and a checkpoint of another model refused, changing nothing.
#include "train/checkpoint.h"

#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "nn/linear.h"
#include "optim/adam.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

const train::CheckpointFormat kFormat{.program = "test-program", .format = "test-program-checkpoint-v1"};

// A model one Adam step in (so the optimizer holds moments), and the checkpoint path.
struct TrainedLinear {
  Generator gen{7};
  nn::Linear model{nn::LinearOptions{.in = 2, .out = 3}, gen};
  optim::Adam adam{model.named_parameters(), optim::AdamOptions{.lr = 0.1}};

  TrainedLinear() {
    adam.zero_grad();
    sum(model.forward(Tensor::ones({4, 2}))).backward();
    adam.step();
  }
};

train::CheckpointMeta meta_of(const Generator& gen) {
  return {.config = R"({"width":3})", .epoch = 1, .global_step = 1, .generators = {{"noise_rng", gen.state()}},
          .history = R"([{"epoch":1,"loss":0.5}])"};
}

std::vector<std::vector<double>> values(const nn::StateDict& state) {
  std::vector<std::vector<double>> v;
  for (const auto& [name, t] : state) v.push_back(t.to_double_vector());
  return v;
}

TEST(Checkpoint, SavedAndRestoredExactly) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));

  const SafetensorsFile f = train::read_checkpoint(path, kFormat);
  EXPECT_EQ(train::checkpoint_config(f, path), R"({"width":3})");
  const train::CheckpointState state = train::checkpoint_state(f, path, {"noise_rng"});
  EXPECT_EQ(state.meta.epoch, 1);
  EXPECT_EQ(state.meta.global_step, 1);
  EXPECT_EQ(state.meta.generators.at("noise_rng"), trained.gen.state());
  EXPECT_EQ(state.meta.history, R"([{"epoch":1,"loss":0.5}])");

  Generator other(99);
  nn::Linear fresh(nn::LinearOptions{.in = 2, .out = 3}, other);
  optim::Adam adam(fresh.named_parameters(), optim::AdamOptions{.lr = 0.1});
  train::restore_checkpoint(state, path, fresh, adam);
  EXPECT_EQ(values(fresh.state_dict()), values(trained.model.state_dict()));
  EXPECT_EQ(values(adam.state_dict()), values(trained.adam.state_dict()));
}

// A reader that samples or finetunes takes the weights and the metadata, and leaves AdamW's moments unread.
TEST(Checkpoint, WithoutTheOptimizerReadsEverythingButItsMoments) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  const SafetensorsFile all = train::read_checkpoint(path, kFormat);
  const SafetensorsFile light = train::read_checkpoint(path, kFormat, train::CheckpointTensors::without_optimizer);
  EXPECT_EQ(light.metadata, all.metadata);
  std::size_t moments = 0;
  for (const auto& [name, t] : all.tensors) {
    if (name.rfind("optim.", 0) == 0) {
      ++moments;
      EXPECT_EQ(light.tensors.count(name), 0u) << name;
    } else {
      EXPECT_EQ(light.tensors.at(name).to_double_vector(), t.to_double_vector()) << name;
    }
  }
  EXPECT_GT(moments, 0u);
  EXPECT_EQ(light.tensors.size() + moments, all.tensors.size());
}

TEST(Checkpoint, AnotherProgramsFileIsRefused) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  EXPECT_THROW_MSG(train::read_checkpoint(path, {.program = "other", .format = "other-v1"}), std::runtime_error,
                   "checkpoint " + path + ": not a other checkpoint (metadata 'format' is missing or not other-v1)");
}

TEST(Checkpoint, WeightsThatAreNotFiniteAreNotSavedAndTheLastGoodFileStays) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  const auto good = values(read_safetensors(path).tensors);
  trained.model.named_parameters()[0].second.fill_(std::nan(""));
  EXPECT_THROW_MSG(train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen)),
                   std::runtime_error, "holds NaN or Inf values");
  EXPECT_EQ(values(read_safetensors(path).tensors), good);
}

// Restores a saved checkpoint into `model` and `adam`, which must refuse it with a message that goes on with `what`,
// and checks that neither changed.
void expect_refused_changing_nothing(nn::Module& model, optim::Adam& adam, const std::string& what) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  const train::CheckpointState state = train::checkpoint_state(train::read_checkpoint(path, kFormat), path, {"noise_rng"});
  const auto model_before = values(model.state_dict()), adam_before = values(adam.state_dict());
  EXPECT_THROW_MSG(train::restore_checkpoint(state, path, model, adam), std::runtime_error,
                   "checkpoint " + path + ": " + what);
  EXPECT_EQ(values(model.state_dict()), model_before);
  EXPECT_EQ(values(adam.state_dict()), adam_before);
  const auto assign = [&](const nn::StateDict& weights) { model.assign_state_dict(weights); };
  EXPECT_THROW_MSG(train::restore_checkpoint_assigning(state, path, model, adam, assign), std::runtime_error,
                   "checkpoint " + path + ": " + what);
  EXPECT_EQ(values(model.state_dict()), model_before);
  EXPECT_EQ(values(adam.state_dict()), adam_before);
}

// Assigning takes the state's own memory (a resumed GPT-2 holds its weights and moments once) and the same values.
TEST(Checkpoint, RestoredByAssignmentHoldsTheStatesMemory) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  const train::CheckpointState state = train::checkpoint_state(train::read_checkpoint(path, kFormat), path, {"noise_rng"});
  Generator other(99);
  nn::Linear fresh(nn::LinearOptions{.in = 2, .out = 3}, other);
  optim::Adam adam(fresh.named_parameters(), optim::AdamOptions{.lr = 0.1});
  train::restore_checkpoint_assigning(state, path, fresh, adam,
                                      [&](const nn::StateDict& weights) { fresh.assign_state_dict(weights); });
  EXPECT_EQ(values(fresh.state_dict()), values(trained.model.state_dict()));
  EXPECT_EQ(values(adam.state_dict()), values(trained.adam.state_dict()));
  EXPECT_EQ(fresh.weight().data<float>(), state.model.at("weight").data<float>());
  EXPECT_EQ(adam.state_dict().at("weight.exp_avg").data<float>(), state.optimizer.at("weight.exp_avg").data<float>());

  // Two moments given one memory are not one memory in the optimizer: each is updated in place.
  nn::StateDict shared = state.optimizer;
  shared["weight.exp_avg_sq"] = shared.at("weight.exp_avg");
  adam.assign_state_dict(shared);
  EXPECT_NE(adam.state_dict().at("weight.exp_avg").data<float>(), adam.state_dict().at("weight.exp_avg_sq").data<float>());
}

TEST(Checkpoint, AStateTheOptimizerRefusesLeavesTheModelAsItWas) {
  // The weights fit the model, but the optimizer steps parameters of another shape: its load fails, and the model,
  // which would load fine, must not have been overwritten before it.
  Generator gen(3);
  nn::Linear model(nn::LinearOptions{.in = 2, .out = 3}, gen), wider(nn::LinearOptions{.in = 2, .out = 4}, gen);
  optim::Adam adam(wider.named_parameters(), optim::AdamOptions{.lr = 0.1});
  expect_refused_changing_nothing(model, adam, "");
}

TEST(Checkpoint, WeightsTheModelRefusesLeaveTheOptimizerAsItWas) {
  // The optimizer's state fits (it steps a model of the saved shape), but the model to restore is wider: the weights
  // are refused, and the optimizer, whose load would succeed, must not have been loaded before them.
  Generator gen(3);
  nn::Linear saved_shape(nn::LinearOptions{.in = 2, .out = 3}, gen), wider(nn::LinearOptions{.in = 2, .out = 4}, gen);
  optim::Adam adam(saved_shape.named_parameters(), optim::AdamOptions{.lr = 0.1});
  expect_refused_changing_nothing(wider, adam, "load_state_dict: entry 'weight' has shape");
}

TEST(Checkpoint, MetadataIsCheckedBeforeUse) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  TrainedLinear trained;
  train::save_checkpoint(path, kFormat, trained.model, trained.adam, meta_of(trained.gen));
  SafetensorsFile f = train::read_checkpoint(path, kFormat);
  EXPECT_THROW_MSG(train::checkpoint_state(f, path, {"other_rng"}), std::runtime_error,
                   "checkpoint " + path + ": metadata has no 'other_rng'");
  f.metadata["noise_rng"] = "[0,0,0,0]";
  EXPECT_THROW_MSG(train::checkpoint_state(f, path, {"noise_rng"}), std::runtime_error, "is all zeros");
  f.metadata["noise_rng"] = "[1,2,3]";
  EXPECT_THROW_MSG(train::checkpoint_state(f, path, {"noise_rng"}), std::runtime_error,
                   "metadata 'noise_rng' must be an array of 4 unsigned 64-bit words");
  f.metadata["noise_rng"] = "[1,2,3,4]";
  f.metadata["epoch"] = "-1";
  EXPECT_THROW_MSG(train::checkpoint_state(f, path, {"noise_rng"}), std::runtime_error,
                   "metadata 'epoch' must be a whole number >= 0, got '-1'");
  f.metadata["epoch"] = "1";
  f.tensors["stray"] = Tensor::ones({1});
  EXPECT_THROW_MSG(train::checkpoint_state(f, path, {"noise_rng"}), std::runtime_error, "unexpected tensor 'stray'");
}

}  // namespace
}  // namespace cppgrad
