// What a `cppgrad-gpt train` run starts from: its config with the shape of --preset or --init pinned and its paths
// made absolute, --init's checkpoint (a Hugging Face file refused saying how to convert it), the trainer resumed or
// finetuned, and the refusals of a run that cannot start.
#include <filesystem>

#include "core/safetensors.h"
#include "gpt_small_run.h"
#include "models/gpt/run_config.h"
#include "models/gpt/run_start.h"
#include "models/gpt/train_checks.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GptRunConfig, PinsThePresetsShapeAndMakesPathsAbsolute) {
  gpt::TrainConfig flagged;
  flagged.data = "words.txt", flagged.lr = 1e-4, flagged.batch_size = 2;
  const gpt::TrainConfig c = gpt::run_config(flagged, {.given = {"data", "lr"}, .preset = "gpt2", .init = nullptr,
                                                       .init_path = "", .resumed = false, .data_given = true});
  EXPECT_EQ(c.model.n_layer, 12);
  EXPECT_EQ(c.context, 1024);
  EXPECT_EQ(c.tokenizer.text(), "gpt2");
  EXPECT_EQ(c.lr, 1e-4);
  EXPECT_EQ(c.data, (std::filesystem::current_path() / "words.txt").string());
  EXPECT_EQ(c.shards, c.with_shards().shards);
  flagged.model.n_head = 4;
  EXPECT_THROW_MSG(gpt::run_config(flagged, {.given = {"heads"}, .preset = "gpt2", .init = nullptr, .init_path = "",
                                             .resumed = false, .data_given = false}),
                   std::invalid_argument, "--heads 4 disagrees with --preset gpt2");
  // A resumed run keeps its checkpoint's data path as it is unless --data is typed; bounds are checked.
  gpt::TrainConfig resumed;
  resumed.data = "words.txt";
  EXPECT_EQ(gpt::run_config(resumed, {.given = {}, .preset = std::nullopt, .init = nullptr, .init_path = "",
                                      .resumed = true, .data_given = false}).data, "words.txt");
  resumed.lr = -1;
  EXPECT_THROW(gpt::run_config(resumed, {}), std::invalid_argument);
}

TEST(GptRunConfig, TakesInitsShapeWithItsBlockSizeAndAPresetMustAgreeWithIt) {
  test::GptSmallRun run;
  const std::string saved = run.path("m.safetensors");
  gpt::Trainer(run.config(1)).save(saved);
  const gpt::GptCheckpoint init = gpt::read_init_checkpoint(saved);
  gpt::TrainConfig flagged;
  flagged.data = run.data;
  const gpt::TrainConfig c = gpt::run_config(flagged, {.given = {"data"}, .preset = std::nullopt, .init = &init,
                                                       .init_path = saved, .resumed = false, .data_given = true});
  EXPECT_EQ(c.model.n_embd, 8);
  EXPECT_EQ(c.model.n_layer, 1);
  EXPECT_EQ(c.context, 6);  // its block size: the run stored --context 0 (the longest line + 1)
  EXPECT_THROW_MSG(gpt::run_config(flagged, {.given = {}, .preset = "gpt2", .init = &init, .init_path = saved,
                                             .resumed = false, .data_given = false}),
                   std::invalid_argument, "disagrees with --init " + saved);
}

TEST(GptRunStart, ReadsInitOrSaysHowToConvertAHuggingFaceFile) {
  test::GptSmallRun run;
  const std::string hf = run.path("model.safetensors");
  write_safetensors(hf, {{"wte.weight", Tensor::zeros({2, 2})}}, {});
  EXPECT_THROW_MSG(gpt::read_init_checkpoint(hf), std::runtime_error,
                   "--init " + hf + ": not a cppgrad-gpt checkpoint (a Hugging Face model.safetensors becomes one "
                   "with: cppgrad-gpt import --hf " + hf + " --out CKPT)");
  EXPECT_THROW_MSG(gpt::read_init_checkpoint(run.path("none")), std::runtime_error, run.path("none"));
}

TEST(GptRunStart, ResumesFinetunesAndRefusesARunWithNothingLeft) {
  test::GptSmallRun run;
  const std::string saved = run.path("m.safetensors");
  {
    gpt::Trainer t(run.config(3));
    t.run(nullptr, nullptr, nullptr);
    t.save(saved);
  }
  const auto resumed = gpt::start_run(run.config(5), nullptr, {.resume = saved, .tokenizer_given = false,
                                                               .data_given = false, .init = std::nullopt,
                                                               .init_path = ""});
  EXPECT_EQ(resumed->step(), 3);
  EXPECT_THROW_MSG(gpt::start_run(run.config(3), nullptr, {.resume = saved, .tokenizer_given = false,
                                                           .data_given = false, .init = std::nullopt,
                                                           .init_path = ""}),
                   std::invalid_argument, "--resume " + saved + ": the checkpoint has trained 3 steps already and "
                   "--steps is 3: nothing to do (give --steps above 3 to train further)");
  const auto finetuned = gpt::start_run(run.config(2), nullptr, {.resume = "", .tokenizer_given = false,
                                                                 .data_given = true,
                                                                 .init = gpt::read_init_checkpoint(saved),
                                                                 .init_path = saved});
  EXPECT_EQ(finetuned->step(), 0);
  const gpt::LoadedModel m = gpt::load_model(saved);
  for (const auto& [name, t] : m.model->state_dict())
    EXPECT_EQ(t.to_double_vector(), finetuned->model().state_dict().at(name).to_double_vector()) << name;
}

// start_run draws none of the values --init or --resume replaces (nn/init.h's SkipInit), and the seed's LoRA adapters
// are still the ones it draws after them: each run equals the same run made with every value drawn.
TEST(GptRunStart, DrawsOnlyWhatNoFileGivesAndTheSameBits) {
  test::GptSmallRun run;
  const std::string saved = run.path("m.safetensors");
  gpt::Trainer(run.config(1)).save(saved);
  gpt::TrainConfig lora = run.config(2);
  lora.lora.rank = 2;
  const auto finetune = gpt::start_run(lora, nullptr, {.resume = "", .tokenizer_given = false, .data_given = true,
                                                       .init = gpt::read_init_checkpoint(saved), .init_path = saved});
  gpt::Trainer drawn(lora);
  drawn.init_from(gpt::read_init_checkpoint(saved), saved);
  const nn::StateDict want = drawn.model().state_dict();
  EXPECT_EQ(want.size(), finetune->model().state_dict().size());
  for (const auto& [name, t] : finetune->model().state_dict())
    EXPECT_EQ(t.to_double_vector(), want.at(name).to_double_vector()) << name;
  const std::string adapted = run.path("lora.safetensors");
  finetune->save(adapted);
  const auto resumed = gpt::start_run(lora, nullptr, {.resume = adapted, .tokenizer_given = false, .data_given = false,
                                                      .init = std::nullopt, .init_path = ""});
  for (const auto& [name, t] : resumed->model().state_dict())
    EXPECT_EQ(t.to_double_vector(), want.at(name).to_double_vector()) << name;
}

TEST(GptTrainChecks, RefuseResumeWithInitAndAMissingDefaultData) {
  EXPECT_THROW_MSG(gpt::check_resume_or_init(true, true), std::invalid_argument,
                   "--init starts a new run from a checkpoint's weights, --resume continues one: give one of them");
  EXPECT_NO_THROW(gpt::check_resume_or_init(true, false));
  EXPECT_NO_THROW(gpt::check_resume_or_init(false, true));
  gpt::TrainConfig c;
  if (std::filesystem::exists(gpt::kDefaultData))
    EXPECT_NO_THROW(gpt::check_default_data(c));
  else
    EXPECT_THROW_MSG(gpt::check_default_data(c), std::invalid_argument, "sudo apt-get install wamerican");
  c.data = "/no/such/words.txt";  // another file's absence is the reader's to say
  EXPECT_NO_THROW(gpt::check_default_data(c));
  EXPECT_NO_THROW(gpt::check_steps_left(c, c.steps, ""));  // a fresh run
  EXPECT_THROW(gpt::check_steps_left(c, c.steps, "m.safetensors"), std::invalid_argument);
}

}  // namespace
}  // namespace cppgrad
