// What eval and attention read of a checkpoint: the text eval scores (the validation split of the checkpoint's data,
// or a whole file through its tokenizer, refused naming --data), and the attention maps as panels and the last
// layer's mean over heads.
#include <fstream>

#include "gpt_small_run.h"
#include "models/gpt/attention_panels.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/eval_data.h"
#include "models/gpt/prompt.h"
#include "models/gpt/trainer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GptEvalData, TheValidationSplitOrAWholeFileRefusedNamingData) {
  test::GptSmallRun run;
  const std::string saved = run.path("m.safetensors");
  gpt::Trainer(run.config(1)).save(saved);
  const gpt::LoadedModel m = gpt::load_model(saved);
  const gpt::EvalData split = gpt::eval_data(m, std::nullopt);
  EXPECT_EQ(split.what, "the validation split of " + run.data);
  EXPECT_EQ(std::get<data::Lines>(split.corpus.splits).val.size(), 20u);  // a tenth of 200 lines

  const std::string file = run.path("other.txt");
  std::ofstream(file) << "ab\nba\ncab\n";
  const gpt::EvalData other = gpt::eval_data(m, file);
  EXPECT_EQ(other.what, file);
  EXPECT_EQ(std::get<data::Lines>(other.corpus.splits).val.size(), 3u);  // every line scored
  EXPECT_TRUE(std::get<data::Lines>(other.corpus.splits).train.empty());

  EXPECT_THROW_MSG(gpt::eval_data(m, run.path("none.txt")), std::invalid_argument, "--data " + run.path("none.txt"));
  std::ofstream(file) << "abz\n";
  EXPECT_THROW_MSG(gpt::eval_data(m, file), std::invalid_argument, "--data " + file + ": ");
}

TEST(GptAttentionPanels, EveryLayersHeadsAndTheLastLayersMean) {
  // Two layers of two heads over T = 2: the first layer's maps are ignored by the mean.
  Tensor first = Tensor::from_vector(std::vector<float>{1, 0, 1, 0, 1, 0, 1, 0}, {2, 2, 2});
  Tensor last = Tensor::from_vector(std::vector<float>{1, 0, 0.5, 0.5, 1, 0, 0, 1}, {2, 2, 2});
  const gpt::AttentionPanels p = gpt::panels_of({first, last}, 2);
  EXPECT_EQ(p.layers, 2u);
  ASSERT_EQ(p.panels.size(), 4u);
  EXPECT_EQ(p.panels[0].title, "layer 0 head 0");
  EXPECT_EQ(p.panels[3].title, "layer 1 head 1");
  EXPECT_EQ(p.panels[2].weights, (std::vector<std::vector<double>>{{1, 0}, {0.5, 0.5}}));
  EXPECT_EQ(p.mean_last, (std::vector<std::vector<double>>{{1, 0}, {0.25, 0.75}}));

  test::GptSmallRun run;
  gpt::Trainer t(run.config(1));
  const std::vector<std::int64_t> ids = gpt::ids_to_read(t.corpus().tokenizer, "abc", t.corpus().context, "--prompt");
  const gpt::AttentionPanels maps = gpt::attention_panels(t.model(), t.corpus().tokenizer, ids);
  EXPECT_EQ(maps.labels, (std::vector<std::string>{"<b>", "a", "b", "c"}));
  EXPECT_EQ(maps.panels.size(), 2u);  // one layer, two heads
  for (const auto& row : maps.mean_last) {
    double sum = 0;
    for (const double v : row) sum += v;
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  EXPECT_EQ(maps.mean_last[0][1], 0.0);  // causal: the first position reads only itself
}

}  // namespace
}  // namespace cppgrad
