// train/run_file.h: a step-based run's parts saved and resumed in one call each, exactly; a refused file changes none
// of them; the history's plot has a curve per measured field.
#include "train/run_file.h"

#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "nn/linear.h"
#include "optim/adam.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

struct Config {
  std::int64_t steps = 10;
};
const ConfigTable<Config> kTable = {
    field<Config>("steps", "training", "steps", at(&Config::steps), in_range(1, 100))};
const train::RunFile<Config> kFile{{.program = "toy", .format = "toy-checkpoint-v1"}, kTable,
                                   {{"step", /*count=*/true}, {"loss"}, {"accuracy"}}};

// A run of a Linear model with Adam, a generator that draws its inputs, its step and history.
struct ToyRun {
  explicit ToyRun(std::uint64_t seed) : init(seed), inputs(seed + 1) {}
  Generator init;
  nn::Linear model{nn::LinearOptions{.in = 2, .out = 3}, init};
  optim::Adam adam{model.named_parameters(), optim::AdamOptions{.lr = 0.1}};
  Generator inputs;
  std::int64_t step = 0;
  std::vector<std::vector<double>> history;
  train::RunParts parts() { return {model, adam, step, history, {{"inputs_rng", &inputs}}}; }

  void train_step() {
    adam.zero_grad();
    Tensor loss = sum(pow(model.forward(Tensor::randn({4, 2}, inputs)), 2.0));
    loss.backward();
    adam.step();
    ++step;
    history.push_back({static_cast<double>(step), loss.item(), 0.25 * static_cast<double>(step)});
  }
  std::vector<std::vector<float>> weights() const {
    std::vector<std::vector<float>> w;
    for (const auto& [name, p] : model.named_parameters()) w.push_back(p.to_vector<float>());
    return w;
  }
};

TEST(RunFile, AResumedRunGoesOnExactlyAsAnUnbrokenOne) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  ToyRun unbroken(1), first(1);
  for (int i = 0; i < 4; ++i) unbroken.train_step();
  for (int i = 0; i < 2; ++i) first.train_step();
  kFile.save(path, Config{}, first.parts());

  ToyRun resumed(99);  // other weights and generators: all of them must come from the file
  kFile.resume(path, resumed.parts());
  EXPECT_EQ(resumed.step, 2);
  EXPECT_EQ(resumed.history, first.history);
  for (int i = 0; i < 2; ++i) resumed.train_step();
  EXPECT_EQ(resumed.weights(), unbroken.weights());
  EXPECT_EQ(resumed.history, unbroken.history);
  EXPECT_EQ(resumed.inputs.state(), unbroken.inputs.state());
}

TEST(RunFile, AResumeThatFailsChangesNothing) {
  test::TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  ToyRun saved(1);
  saved.train_step();
  kFile.save(path, Config{}, saved.parts());

  // A file whose history lacks a field this program's table names: refused before any part changes.
  const train::RunFile<Config> other{kFile.format, kTable, {{"step", true}, {"loss"}, {"perplexity"}}};
  ToyRun run(5);
  run.train_step();
  const auto weights = run.weights();
  const auto history = run.history;
  const auto inputs = run.inputs.state();
  EXPECT_THROW_MSG(other.resume(path, run.parts()), std::runtime_error,
                   "checkpoint " + path + ": history entry 1: 'perplexity' must be a finite number");
  EXPECT_EQ(run.weights(), weights);
  EXPECT_EQ(run.history, history);
  EXPECT_EQ(run.inputs.state(), inputs);
  EXPECT_EQ(run.step, 1);
}

TEST(RunFile, ThePlotHasACurvePerMeasuredFieldAgainstTheStep) {
  const std::string svg = train::history_svg(kFile.history, {{100, 2.5, 0.1}, {200, 2.0, 0.4}}, "toy");
  EXPECT_NE(svg.find("loss"), std::string::npos);
  EXPECT_NE(svg.find("accuracy"), std::string::npos);
  EXPECT_NE(svg.find(">step<"), std::string::npos);  // the x axis is the count field
  EXPECT_EQ(svg.find(">evaluation<"), std::string::npos);
}

}  // namespace
}  // namespace cppgrad
