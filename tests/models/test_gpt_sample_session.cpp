// The sampling session every sampler of a GPT uses (cppgrad-gpt sample, train's samples, the page): its samples are
// nn::generate's from the prompt's ids with the session's one generator, so the same seed gives the same text; it
// holds the model in evaluation mode while it lasts; a prompt it cannot continue is refused naming it.
#include "data/token_labels.h"
#include "gpt_small_run.h"
#include "models/gpt/framing.h"
#include "models/gpt/prompt.h"
#include "models/gpt/sample_session.h"
#include "models/gpt/trainer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GptSampleSession, DrawsWhatGenerateDrawsFromOneGeneratorAndTheSeedDecides) {
  test::GptSmallRun run;
  gpt::Trainer t(run.config(3));
  t.run(nullptr, nullptr, nullptr);
  const data::Tokenizer& tok = t.corpus().tokenizer;
  const std::int64_t context = t.corpus().context;
  const gpt::SampleSettings settings{.prompt = "a", .max_new_tokens = std::nullopt,
                                     .sampling = {.temperature = 1.5, .top_k = 3, .top_p = 1}, .seed = 11};
  std::vector<std::string> drawn;
  {
    gpt::SampleSession session(t.model(), tok, context, settings, "--prompt");
    EXPECT_FALSE(t.model().is_training());  // no dropout while sampling
    EXPECT_STREQ(session.after_sample(), "\n");  // a model of lines
    for (int i = 0; i < 4; ++i) drawn.push_back(session.next());
  }
  EXPECT_TRUE(t.model().is_training());  // back as it was

  // The reference: the prompt's ids (<b> a), the rest of the line's room, the stop token <b>, one generator.
  nn::EvalModeGuard eval(t.model());
  const std::vector<std::int64_t> start = gpt::sample_start(tok, "a", context, "--prompt");
  const nn::GenerateOptions options{.max_new_tokens = context - 2, .sampling = settings.sampling,
                                    .stop_token = gpt::LinesFraming::kBoundary};
  Generator gen(11);
  for (const std::string& s : drawn) {
    EXPECT_EQ(s, "a" + data::token_text(tok, nn::generate(t.model(), start, options, gen)));
    EXPECT_EQ(s.find('\n'), std::string::npos);
  }
  gpt::SampleSession again(t.model(), tok, context, settings, "--prompt");
  for (const std::string& s : drawn) EXPECT_EQ(again.next(), s);
}

TEST(GptSampleSession, ExplainsEachTokenAndKeepsToMaxNewTokens) {
  test::GptSmallRun run;
  gpt::Trainer t(run.config(3, data::TextFormat::text));
  const gpt::SampleSettings settings{.prompt = "", .max_new_tokens = 5, .sampling = {}, .seed = 2};
  gpt::SampleSession session(t.model(), t.corpus().tokenizer, t.corpus().context, settings, "--prompt");
  EXPECT_STREQ(session.after_sample(), "\n\n");  // a running text
  std::vector<nn::GenerateStep> steps;
  const std::string s = session.next([&](const nn::GenerateStep& step) { steps.push_back(step); });
  ASSERT_EQ(steps.size(), 5u);  // no stop token in a running text: max_new_tokens of them
  EXPECT_EQ(std::ssize(t.corpus().tokenizer.encode(s)), 5);
  for (const auto& step : steps) {
    EXPECT_EQ(step.raw_top.size(), 5u);
    EXPECT_GT(step.prob, 0);
  }
}

TEST(GptSampleSession, RefusesAPromptNamingWhatTheCallerCallsIt) {
  test::GptSmallRun run;
  gpt::Trainer t(run.config(1));
  const auto session = [&](const std::string& prompt, const std::string& what) {
    gpt::SampleSession s(t.model(), t.corpus().tokenizer, t.corpus().context,
                         {.prompt = prompt, .max_new_tokens = std::nullopt, .sampling = {}, .seed = 0}, what);
  };
  EXPECT_THROW_MSG(session("aqa", "the prompt"), std::invalid_argument, "the prompt 'aqa': the character 'q'");
  EXPECT_THROW_MSG(session("aaaaa", "--prompt"), std::invalid_argument,
                   "--prompt has 5 characters; this model's lines hold at most 5");
}

TEST(GptRunSamples, AreASessionsFromNoPromptWithTheRunsSeedAndContextLessOne) {
  test::GptSmallRun run;
  gpt::Trainer t(run.config(3, data::TextFormat::text));
  t.run(nullptr, nullptr, nullptr);
  const std::vector<std::string> samples = gpt::run_samples(t, 3);
  ASSERT_EQ(samples.size(), 3u);
  gpt::SampleSession session(t.model(), t.corpus().tokenizer, t.corpus().context,
                             {.prompt = "", .max_new_tokens = t.corpus().context - 1, .sampling = {},
                              .seed = t.config().seed}, "--prompt");
  for (const std::string& s : samples) {
    EXPECT_EQ(session.next(), s);
    EXPECT_EQ(std::ssize(t.corpus().tokenizer.encode(s)), t.corpus().context - 1);
  }
}

}  // namespace
}  // namespace cppgrad
