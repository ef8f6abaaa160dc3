// data::Tokenizer, what cppgrad-gpt holds whatever --tokenizer says: the flag's text parsed once into a TokenizerName
// and back, characters and a BPE answering the same questions (size, encode, decode, one token's bytes), equality
// by the tokens, and a running-text corpus through a BPE (lines mode refused: its <b> is a character tokenizer's).
#include <fstream>
#include <string>

#include "data/corpus_rows.h"
#include "data/text_corpus.h"
#include "data/tokenizer.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::Tokenizer;
using data::TokenizerName;

TEST(TokenizerName, ParsesTheFlagsThreeFormsAndWritesThemBack) {
  EXPECT_EQ(TokenizerName::parse("char"), TokenizerName{});
  EXPECT_EQ(TokenizerName::parse("gpt2").kind, TokenizerName::Kind::gpt2);
  const TokenizerName file = TokenizerName::parse("bpe:/data/kjv.model");
  EXPECT_EQ(file.kind, TokenizerName::Kind::bpe_file);
  EXPECT_EQ(file.path, "/data/kjv.model");
  for (const char* text : {"char", "gpt2", "bpe:/data/kjv.model", "bpe:a:b"})
    EXPECT_EQ(TokenizerName::parse(text).text(), text);
  for (const char* bad : {"bogus", "", "bpe:", "BPE:x", "gpt-2", "chars"})
    EXPECT_THROW_MSG(TokenizerName::parse(bad), std::invalid_argument,
                     std::string("must be char, gpt2 or bpe:FILE (a .model file), got '") + bad + "'");
}

// A BPE whose merges join "é" (2 bytes) and then "é" with its neighbours: tokens of several bytes.
data::BpeTokenizer small_bpe() {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "café crème été. ";
  return data::BpeTokenizer::train(text, 256 + 12);
}

TEST(Tokenizer, CharactersAndABpeAnswerTheSameQuestions) {
  const Tokenizer chars(data::CharTokenizer::from_text(U"abé", /*with_boundary=*/true));
  EXPECT_EQ(chars.size(), 4);
  EXPECT_EQ(chars.encode("béa"), (std::vector<std::int64_t>{2, 3, 1}));
  EXPECT_EQ(chars.decode(std::vector<std::int64_t>{0, 3, 0}), "é");  // <b> stands for no bytes
  EXPECT_EQ(chars.token_bytes(3), "é");
  EXPECT_EQ(chars.token_bytes(0), "");
  EXPECT_THROW_MSG(chars.encode("z"), std::invalid_argument, "'z' (U+007A) at index 0 is not in the vocabulary");
  EXPECT_NE(chars.chars(), nullptr);
  EXPECT_EQ(chars.bpe(), nullptr);

  const Tokenizer bpe(small_bpe());
  EXPECT_EQ(bpe.chars(), nullptr);
  EXPECT_EQ(bpe.size(), 268);
  const std::string text = "café été \xff";  // any bytes: invalid UTF-8 too
  const std::vector<std::int64_t> ids = bpe.encode(text);
  EXPECT_LT(ids.size(), text.size());  // merged
  EXPECT_EQ(bpe.decode(ids), text);
  std::string joined;
  std::size_t longest = 0;
  for (const std::int64_t id : ids) joined += bpe.token_bytes(id), longest = std::max(longest, bpe.token_bytes(id).size());
  EXPECT_EQ(joined, text);
  EXPECT_GE(longest, 3u);  // "é" and a neighbour at least
  EXPECT_THAT(bpe.describe(), ::testing::HasSubstr("268 tokens: 12 merges"));
}

TEST(Tokenizer, EqualMeansTheSameTokensUnderTheSameIds) {
  EXPECT_EQ(Tokenizer(small_bpe()), Tokenizer(small_bpe()));
  EXPECT_FALSE(Tokenizer(small_bpe()) == Tokenizer(data::BpeTokenizer::train("abababab cdcdcd", 258)));
  EXPECT_FALSE(Tokenizer(small_bpe()) == Tokenizer(data::CharTokenizer::from_text(U"ab", false)));
  EXPECT_EQ(Tokenizer(data::CharTokenizer::from_text(U"ab", false)), Tokenizer(data::CharTokenizer::from_text(U"ba", false)));
  // The model text a checkpoint stores gives the same tokenizer back.
  EXPECT_EQ(Tokenizer(data::bpe_from_model_text(small_bpe().to_model_text(), "test")), Tokenizer(small_bpe()));
}

TEST(Tokenizer, AHostileModelTextIsRefusedNamingWhereItCameFrom) {
  EXPECT_THROW_MSG(data::bpe_from_model_text("minbpe v1\n\n0\n999999 3\n", "checkpoint x"), std::runtime_error,
                   "checkpoint x:");
  EXPECT_THROW_MSG(data::bpe_from_model_text(std::string(data::kMaxBpeModelBytes + 1, 'a'), "checkpoint x"),
                   std::runtime_error, "checkpoint x: 16777217 bytes of BPE model text, more than");
  EXPECT_THROW_MSG(data::load_bpe(TokenizerName::parse("bpe:/nonexistent/x.model")), std::runtime_error,
                   "/nonexistent/x.model");
}

TEST(TextCorpus, ABpeReadsARunningTextOfAnyBytesAndRefusesLines) {
  const Tokenizer bpe(small_bpe());
  std::string text;
  for (int i = 0; i < 40; ++i) text += "café crème été. ";
  const auto c = data::make_text_corpus(text, {.format = data::TextFormat::text, .context = 8, .val_fraction = 0.1}, bpe);
  const auto& s = std::get<data::RunningText>(c.splits);
  const std::vector<std::int64_t> all = bpe.encode(text);
  EXPECT_EQ(s.train.size() + s.val.size(), all.size());
  EXPECT_EQ(std::llround(static_cast<double>(all.size()) * 0.1), static_cast<long long>(s.val.size()));
  EXPECT_EQ(c.tokenizer, bpe);
  EXPECT_THROW_MSG(data::make_text_corpus("a\nb\n", {.format = data::TextFormat::lines}, bpe), std::invalid_argument,
                   "a BPE tokenizer reads a running text (--format text)");
}

}  // namespace
}  // namespace cppgrad
