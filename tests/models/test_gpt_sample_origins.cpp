// A model of lines' samples against its data: memorised (a training line), a real line it never saw (a validation
// line) or new; what `cppgrad-gpt sample` prints after its samples, and nothing for a running text.
#include <filesystem>

#include "gpt_small_run.h"
#include "data/token_labels.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/sample_origins.h"
#include "models/gpt/trainer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GptSampleOrigins, CountsTrainingLinesValidationLinesAndNewOnes) {
  const data::TextCorpus corpus = data::make_text_corpus(
      "ab\nba\naa\nbb\n", {.format = data::TextFormat::lines, .context = 0, .val_fraction = 0.5, .seed = 1});
  const auto& lines = std::get<data::Lines>(corpus.splits);
  ASSERT_EQ(lines.train.size(), 2u);
  const std::string train_line = data::token_text(corpus.tokenizer, lines.train[0]);
  const std::string val_line = data::token_text(corpus.tokenizer, lines.val[0]);
  const gpt::SampleOrigins o =
      gpt::sample_origins(lines, corpus.tokenizer, {train_line, val_line, train_line, "abab", ""});
  EXPECT_EQ(o.samples, 5);
  EXPECT_EQ(o.in_train, 2);
  EXPECT_EQ(o.in_val, 1);
  EXPECT_EQ(o.fresh(), 2);
}

TEST(GptSampleOrigins, TheReportReadsTheDataAgainOrSaysWhyItCannot) {
  test::GptSmallRun run;
  const std::string saved = run.path("lines.safetensors");
  gpt::Trainer(run.config(1)).save(saved);
  const std::string text = run.path("text.safetensors");
  gpt::Trainer(run.config(1, data::TextFormat::text)).save(text);
  EXPECT_EQ(gpt::origins_report(gpt::load_model(saved), {"a", "bb", "zz"}),
            "3 samples: 2 are lines of the training split, 0 of the validation split (never trained on), 1 new\n");
  std::filesystem::remove(run.data);
  EXPECT_THAT(gpt::origins_report(gpt::load_model(saved), {"a"}),
              testing::AllOf(testing::StartsWith("(cannot tell which samples are in the data: "),
                             testing::HasSubstr(run.data), testing::EndsWith(")\n")));
  EXPECT_EQ(gpt::origins_report(gpt::load_model(text), {"a"}), "");  // a running text's continuations: nothing to say
}

}  // namespace
}  // namespace cppgrad
