// cppgrad-gpt's evaluation runs a split in chunks of rows (models/gpt/trainer.h: eval_chunk_rows): about 16k tokens a
// chunk, fewer where the vocabulary is large, so that a chunk's logits stay within 2^24 floats whatever the tokenizer.
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "gpt_small_run.h"
#include "models/gpt/trainer.h"

namespace cppgrad {
namespace {

TEST(GptEvalChunks, SixteenThousandTokensUnlessTheLogitsWouldPassTheBound) {
  // A character vocabulary: 16384 tokens a chunk, as before (the bound does not bite, so the losses keep their bits).
  EXPECT_EQ(gpt::eval_chunk_rows(64, 70), 256);
  EXPECT_EQ(gpt::eval_chunk_rows(24, 70), 682);
  // A 1,024-token BPE at context 64: 16384 x 1024 logits is exactly 2^24, still 256 rows.
  EXPECT_EQ(gpt::eval_chunk_rows(64, 1024), 256);
  // GPT-2's vocabulary: 5 rows of 64 (16.1M logits, 64 MB) instead of 256 (3.3 GB); at context 1024, one row.
  EXPECT_EQ(gpt::eval_chunk_rows(64, 50257), 5);
  EXPECT_LE(gpt::eval_chunk_rows(64, 50257) * 64 * 50257, std::int64_t{1} << 24);
  EXPECT_EQ(gpt::eval_chunk_rows(1024, 50257), 1);
  EXPECT_EQ(gpt::eval_chunk_rows(100000, 70), 1);  // never none
}

TEST(GptEvalChunks, AnEvaluationReportsEachChunkAndTheLossSoFarEndsAtItsResult) {
  // A running text long enough for a validation split of several chunks: 8-token windows, 2048 a chunk.
  test::GptSmallRun run;
  {
    std::ofstream out(run.data);
    for (int i = 0; i < 40'000; ++i) out << std::string(1 + i % 6, static_cast<char>('a' + i % 7)) << "\n";
  }
  gpt::Trainer t(run.config(1, data::TextFormat::text));
  struct Report {
    std::int64_t done, total;
    double loss;
  };
  std::vector<Report> reports;
  const gpt::Evaluation e = t.evaluate([&](std::int64_t done, std::int64_t total, double loss) {
    reports.push_back({done, total, loss});
  });
  ASSERT_GE(reports.size(), 2u) << "the split should span chunks";
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].done, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(reports[i].total, static_cast<std::int64_t>(reports.size()));
    EXPECT_GT(reports[i].loss, 0.0);
  }
  EXPECT_EQ(reports.back().loss, e.val_loss) << "the last mean so far is the evaluation's loss, the same bits";
  EXPECT_NE(reports.front().loss, e.val_loss) << "the first is the first chunk's alone";
}

// --eval-tokens: each evaluation reads the validation split's first rows, as many as hold the tokens asked for; by
// default as many as 2^39 multiply-adds allow, which leaves a small model's split whole.
TEST(GptEvalChunks, TheEvaluationReadsTheFirstRowsItIsBoundTo) {
  EXPECT_EQ(gpt::eval_row_bound(1000, 206'080, 24), 42);                  // 1000 tokens: 42 rows of 24
  EXPECT_EQ(gpt::eval_row_bound(0, 124'439'808, 64), 70);                 // GPT-2 124M: 4,417 tokens, 70 rows of 64
  EXPECT_EQ(gpt::eval_row_bound(0, 206'080, 24), 111'154);                // the words GPT: all of its 10,433 rows
  EXPECT_EQ(gpt::eval_row_bound(0, std::int64_t{1} << 50, 1024), 1);     // never none
  test::GptSmallRun run;
  {
    std::ofstream out(run.data);
    for (int i = 0; i < 40'000; ++i) out << std::string(1 + i % 6, static_cast<char>('a' + i % 7)) << "\n";
  }
  gpt::TrainConfig c = run.config(1, data::TextFormat::text);
  c.eval_tokens = 100;  // 13 windows of 8
  gpt::Trainer bounded(c);
  ASSERT_EQ(bounded.eval_rows(), 13);
  ASSERT_GT(bounded.validation_rows(), 13);
  const double whole = gpt::split_loss(bounded.model(), bounded.corpus(), true).loss;
  const double first = gpt::split_loss(bounded.model(), bounded.corpus(), true, nullptr, 13).loss;
  EXPECT_EQ(bounded.evaluate().val_loss, first);
  EXPECT_NE(first, whole);
  c.eval_tokens = 0;
  EXPECT_EQ(gpt::Trainer(c).eval_rows(), bounded.validation_rows()) << "a small model reads its whole split";
}

}  // namespace
}  // namespace cppgrad
