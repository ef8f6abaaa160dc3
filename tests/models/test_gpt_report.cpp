// The lines cppgrad-gpt prints, from their numbers: tests/cli read them and a person compares them across runs, so
// their format is held here to the character.
#include "gpt_small_run.h"
#include "models/gpt/report.h"
#include "models/gpt/trainer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

// The usage text's line for `train` with no flags, read from TrainConfig's defaults (not written again beside them).
TEST(GptReport, TheDefaultRunIsReadFromTheConfigsDefaults) {
  EXPECT_EQ(gpt::default_run_text(), "the characters of /usr/share/dict/american-english, d_model 64, 4 layers, "
                                     "4 heads, batch 32, AdamW 0.0005, 2000 steps");
}

TEST(GptReport, EvaluationDoneAndEvalLines) {
  EXPECT_EQ(gpt::perplexity(0), "1.00");
  EXPECT_EQ(gpt::perplexity(std::log(9.026)), "9.03");
  const gpt::Evaluation e{.step = 100, .train_loss = 2.1, .val_loss = 2.2, .val_bpb = 3.1741, .lr = 5e-4,
                          .tokens_per_s = 1234.4, .elapsed_s = 9};
  EXPECT_EQ(gpt::evaluation_line(e, 2000), "step    100/2000  train 2.1000  val 2.2000 (perplexity 9.03, 3.174 "
                                           "bits/byte)  lr 5.00e-04  1234 tokens/s\n");
  const gpt::FinalSummary f{.val_loss = 2.2, .val_bpb = 3.1741, .bigram_val_loss = 2.5, .steps = 2000, .params = 10,
                            .train_wall_s = 12.345};
  EXPECT_EQ(gpt::done_line(f), "done: 2000 steps, validation loss 2.2000 nats/token (perplexity 9.03, 3.174 "
                               "bits/byte) against the bigram's 2.5000; 12.3s training\n");
  const gpt::SplitLoss l{.loss = 2.2, .tokens = 40, .bytes = 50};
  EXPECT_EQ(gpt::eval_line("m.safetensors", 6, l, "words.txt"),
            fmt::format("checkpoint m.safetensors (step 6): loss 2.2000 nats/token, perplexity 9.03, {:.4f} "
                        "bits/byte, over 40 tokens (50 bytes) of words.txt\n", l.bits_per_byte()));
  EXPECT_EQ(gpt::eval_json(l), fmt::format("{{\"event\": \"eval\", \"loss\": 2.2, \"perplexity\": {}, \"bpb\": {}, "
                                           "\"tokens\": 40, \"bytes\": 50}}\n", std::exp(2.2), l.bits_per_byte()));
}

TEST(GptReport, SamplesAreOneLineOfLinesOrBlankLineSeparatedText) {
  const data::TextCorpus lines = data::make_text_corpus(
      "ab\nba\n", {.format = data::TextFormat::lines, .context = 0, .val_fraction = 0.5, .seed = 0});
  EXPECT_EQ(gpt::samples_line(lines, {"ab", "b"}), "samples: ab b\n");
  const data::TextCorpus text = data::make_text_corpus(
      "ab\nba\nab\nba\n", {.format = data::TextFormat::text, .context = 2, .val_fraction = 0.5, .seed = 0});
  EXPECT_EQ(gpt::samples_line(text, {"ab\nb", "a"}), "samples:\nab\nb\n\na\n");
  EXPECT_EQ(gpt::samples_line(text, {}), "samples:\n");
}

TEST(GptReport, ExplainNamesTheTokenAndTheChoicesTheFiltersLeave) {
  const data::TextCorpus c = data::make_text_corpus(
      "ab\nba\n", {.format = data::TextFormat::lines, .context = 0, .val_fraction = 0.5, .seed = 0});
  const std::int64_t a = c.tokenizer.encode("a")[0], b = c.tokenizer.encode("b")[0];
  const nn::GenerateStep step{.token = a, .prob = 0.75, .raw_top = {{a, 0.5}, {b, 0.3}, {0, 0.2}},
                              .filtered_top = {{a, 0.75}, {b, 0.25}, {0, 0.0}}};
  EXPECT_EQ(gpt::explain_lines(c.tokenizer, step), "  -> a     model:      a 0.500      b 0.300    <b> 0.200\n"
                                                   "        after filters:      a 0.750      b 0.250\n");
}

TEST(GptReport, TheRunHeaderSaysTheDataTheModelAndTheBaseline) {
  test::GptSmallRun run;
  gpt::Trainer t(run.config(3));
  const std::string header = gpt::run_header(t);
  EXPECT_THAT(header, testing::StartsWith("cppgrad-gpt: " + run.data + " (lines): "));
  EXPECT_THAT(header, testing::HasSubstr("(seed 0); vocab 8 (<b> and the characters); context 6; 1 threads\n"));
  EXPECT_THAT(header, testing::HasSubstr(fmt::format("model: GPT, {} parameters (d_model 8, 1 layers, 2 heads); {} "
                                                     "tokens per step\n", t.model().num_parameters(),
                                                     t.tokens_per_step())));
  EXPECT_THAT(header, testing::HasSubstr("bigram baseline (counts, add-one smoothing): validation loss "));
  EXPECT_THAT(header, testing::Not(testing::HasSubstr("resumed")));
  t.run(nullptr, nullptr, nullptr);
  const gpt::FinalSummary f = gpt::final_summary(t);
  EXPECT_EQ(f.steps, 3);
  EXPECT_EQ(f.val_loss, t.history().back().val_loss);
  EXPECT_EQ(f.params, t.model().num_parameters());
  const std::string saved = run.path("m.safetensors");
  t.save(saved);
  gpt::TrainConfig more = run.config(5);
  gpt::Trainer resumed(more);
  resumed.load(saved);
  EXPECT_THAT(gpt::run_header(resumed), testing::EndsWith("resumed at step 3 of 5\n"));
}

}  // namespace
}  // namespace cppgrad
