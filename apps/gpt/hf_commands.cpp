#include "apps/gpt/hf_commands.h"

#include <fmt/format.h>

#include <cxxopts.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/safetensors.h"
#include "data/utf8.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/hf_config.h"
#include "models/gpt/lora_merge.h"
#include "models/gpt/preset.h"
#include "apps/gpt/tokenize.h"
#include "models/gpt/trainer.h"
#include "nn/gpt_hf.h"
#include "train/cli.h"

namespace cppgrad::gpt {

using train::flag_path;
using train::flag_value;
using train::required_flag;
using train::UsageError;

namespace {

// --hf names a file that exists, told before anything looks beside it for a config.json (a directory, the folder
// save_pretrained writes, would otherwise be "no config.json sits beside the file").
void check_hf_file(const std::string& hf) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(hf, ec);
  if (std::filesystem::is_directory(status)) {
    const std::string inside = (std::filesystem::path(hf) / "model.safetensors").string();
    throw UsageError(std::filesystem::exists(inside, ec)
                         ? fmt::format("--hf {}: is a directory; give the model file in it: --hf {}", hf, inside)
                         : fmt::format("--hf {}: is a directory, not a model.safetensors file", hf));
  }
  if (!std::filesystem::exists(status)) throw UsageError(fmt::format("--hf {}: no such file", hf));
}

// The config.json save_pretrained writes beside the model file: where import looks for the heads.
std::string config_json_beside(const std::string& hf) {
  return (std::filesystem::path(hf).parent_path() / "config.json").string();
}

// The file --tokenizer bpe:FILE reads ("" for another tokenizer, or a name import refuses later).
std::string tokenizer_file(const cxxopts::ParseResult& r) {
  if (!r.count("tokenizer")) return "";
  try {
    const data::TokenizerName name = data::TokenizerName::parse(r["tokenizer"].as<std::string>());
    return name.kind == data::TokenizerName::Kind::bpe_file ? name.path : "";
  } catch (const std::invalid_argument&) {
    return "";
  }
}

// The heads of an import: --preset's, --heads, or the config.json beside the file (nullopt: the preset's).
struct Heads {
  std::optional<std::string> preset;
  std::int64_t n_head = 0;
  std::optional<std::string> config_json;  // the file they came from, whose other keys are checked after
  std::optional<HFConfig> hf;
};

Heads import_heads(const cxxopts::ParseResult& r, const std::string& hf) {
  if (r.count("preset") && r.count("heads"))
    throw UsageError("give --preset or --heads, not both (a preset names the heads)");
  Heads h;
  if (r.count("preset")) {
    const std::string name = r["preset"].as<std::string>();
    h.n_head = preset_config(name).model.n_head;  // std::invalid_argument listing the names: a usage error
    h.preset = name;
    return h;
  }
  if (r.count("heads")) {
    h.n_head = flag_value<std::int64_t>(r, "heads");
    if (h.n_head < 1 || h.n_head > nn::kMaxHeads) throw UsageError(fmt::format("--heads must be in 1..{}", nn::kMaxHeads));
    return h;
  }
  const std::string beside = config_json_beside(hf);
  std::error_code ec;
  if (!std::filesystem::exists(beside, ec))
    throw UsageError(fmt::format("{}: give --preset NAME or --heads N (the shapes do not tell the heads, and no "
                                 "config.json sits beside the file)", hf));
  h.hf = read_hf_config(beside);
  h.n_head = h.hf->n_head;
  h.config_json = beside;
  return h;
}

// A config.json's sizes against the file's shapes: another model's config beside the file is refused.
void check_against_config_json(const HFConfig& hf, const nn::GPTConfig& m, const std::string& json,
                               const std::string& file) {
  const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> keys[] = {
      {"n_layer", {hf.n_layer, m.n_layer}}, {"n_embd", {hf.n_embd, m.n_embd}},
      {"n_positions", {hf.n_positions, m.block_size}}, {"vocab_size", {hf.vocab_size, m.vocab_size}}};
  for (const auto& [key, values] : keys)
    if (values.first != values.second)
      throw std::runtime_error(fmt::format("{}: {} is {}, but {} holds {}", json, key, values.first, file, values.second));
}

// The tokenizer an imported model reads through: --tokenizer, or GPT-2's for GPT-2's vocabulary; its size must be
// the model's vocabulary.
data::Tokenizer import_tokenizer(const cxxopts::ParseResult& r, TrainConfig& c, std::int64_t vocab,
                                 const std::string& hf) {
  std::string name = r.count("tokenizer") ? r["tokenizer"].as<std::string>() : "";
  if (name.empty()) {
    if (vocab != kGpt2Vocab)
      throw UsageError(fmt::format("{} has a vocabulary of {}, not GPT-2's {}: give --tokenizer bpe:FILE (a BPE "
                                   "of {} tokens) or --tokenizer char --data FILE (a text of {} distinct characters)",
                                   hf, vocab, kGpt2Vocab, vocab, vocab));
    name = "gpt2";
  }
  try {
    c.tokenizer = data::TokenizerName::parse(name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--tokenizer ") + e.what());
  }
  data::Tokenizer tokenizer;
  if (c.tokenizer.kind == data::TokenizerName::Kind::chars) {
    if (!r.count("data")) throw UsageError("--tokenizer char needs --data FILE: its characters are the vocabulary");
    // A running text's characters, in code-point order from id 0 (data/text_corpus.h: no <b>), as train and eval
    // derive them from the same file; a refusal names --data as it was typed.
    const std::string data_path = flag_path(r, "data");
    std::string text;
    try {
      text = data::read_text_file(data_path);
    } catch (const std::runtime_error& e) {  // "<path>: <why>"
      throw UsageError(fmt::format("--data {}", e.what()));
    }
    try {
      tokenizer = data::CharTokenizer::from_text(data::decode_utf8(text), /*with_boundary=*/false);
    } catch (const std::invalid_argument& e) {  // invalid UTF-8
      throw UsageError(fmt::format("--data {}: {}", data_path, e.what()));
    }
  } else {
    tokenizer = data::Tokenizer(load_tokenizer(name));
    if (c.tokenizer.kind == data::TokenizerName::Kind::bpe_file) c.tokenizer.path = absolute_path(c.tokenizer.path);
  }
  if (tokenizer.size() != vocab)
    throw UsageError(fmt::format("{} has a vocabulary of {}, and --tokenizer {} has {} tokens ({})", hf, vocab,
                                 name, tokenizer.size(), tokenizer.describe()));
  return tokenizer;
}

// The file's vocabulary from its header alone (wte.weight's rows, with or without the `transformer.` prefix), so a
// --tokenizer that does not fit is refused before a weight is read; nullopt when the header has no such matrix (the
// import then says what is missing).
std::optional<std::int64_t> header_vocab(const std::string& hf) {
  const SafetensorsReader file(hf);
  for (const char* name : {"transformer.wte.weight", "wte.weight"})
    if (const SafetensorsEntry* e = file.find(name); e && e->shape.size() == 2) return e->shape[0];
  return std::nullopt;
}

std::string shape_text(const nn::GPTConfig& m) {
  return fmt::format("{} layers, {} heads, {} wide, context {}, vocabulary {}", m.n_layer, m.n_head, m.n_embd,
                     m.block_size, m.vocab_size);
}

}  // namespace

int cmd_import(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt import", "A GPT-2 in Hugging Face's layout (model.safetensors: GPT2LMHeadModel's or "
                                           "GPT2Model's names) to a cppgrad-gpt checkpoint.");
  o.add_options()("hf", "the Hugging Face model.safetensors", cxxopts::value<std::string>())
      ("out", "the checkpoint to write (atomically)", cxxopts::value<std::string>())
      ("preset", "one of GPT-2's sizes, which gives the heads: " + presets_help(), cxxopts::value<std::string>())
      ("heads", "attention heads (the shapes cannot tell them; default: config.json beside the file)",
       cxxopts::value<std::string>())
      ("tokenizer", "gpt2 (the default for a vocabulary of 50257) | bpe:FILE | char (the characters of --data)",
       cxxopts::value<std::string>())
      ("data", "a text: the vocabulary of --tokenizer char, and what eval scores without --data",
       cxxopts::value<std::string>())
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string hf = required_flag(r, "import", "hf", "FILE (a Hugging Face model.safetensors)");
  const std::string out = required_flag(r, "import", "out", "CKPT (the checkpoint to write)");
  // The inputs are never overwritten: the model file, the config.json beside it (its heads), --data (the vocabulary of
  // --tokenizer char) and --tokenizer bpe:FILE.
  train::check_outputs_or_usage_error({{"--out", out}}, "",
                                      {{"--hf", hf}, {"the config.json beside --hf", config_json_beside(hf)},
                                       {"--data", flag_path(r, "data")}, {"--tokenizer", tokenizer_file(r)}});
  check_hf_file(hf);
  const Heads heads = import_heads(r, hf);
  TrainConfig c;
  c.format = data::TextFormat::text;  // GPT-2 reads a running text (lines mode's <b> is a character model's)
  if (r.count("data")) c.data = absolute_path(flag_path(r, "data"));
  // A --tokenizer given is held to the header's vocabulary before any weight is read (a 2-million-row wte with
  // another tokenizer once cost 500 MB before its refusal); without one, GPT-2's is assumed after the import.
  std::optional<data::Tokenizer> tokenizer;
  if (r.count("tokenizer"))
    if (const std::optional<std::int64_t> vocab = header_vocab(hf)) tokenizer = import_tokenizer(r, c, *vocab, hf);
  const std::unique_ptr<nn::GPT> model =
      heads.preset ? nn::import_gpt2_hf(hf, *heads.preset) : nn::import_gpt2_hf(hf, heads.n_head);
  const nn::GPTConfig m = model->config();
  if (heads.hf) check_against_config_json(*heads.hf, m, *heads.config_json, hf);

  c.model.n_layer = m.n_layer, c.model.n_head = m.n_head, c.model.n_embd = m.n_embd, c.model.dropout = 0.0;
  c.context = m.block_size;
  if (!tokenizer) tokenizer = import_tokenizer(r, c, m.vocab_size, hf);
  c = c.with_shards();
  try {
    c.validate();
    c.check_parameters(m.vocab_size, m.block_size);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}: {}", hf, e.what()));
  }
  // Step 0 with a fresh AdamW and the generators a new run of this config starts from: --resume continues it as a
  // run that had just begun, --init finetunes it.
  model->dropout_generator().set_state(Generator(c.model_config(m.vocab_size, m.block_size).dropout_seed).state());
  save_gpt_checkpoint(out, *model, *make_optimizer(c, model->named_parameters()), c, *tokenizer, /*step=*/0, {},
                      {.batch_rng = Generator(c.seed + 2).state()});
  fmt::print("imported {}: GPT-2 of {} parameters ({}), tokenizer {} ({}); wrote {}\n", hf, model->num_parameters(),
             shape_text(m), c.tokenizer.text(), tokenizer->describe(), out);
  return 0;
}

int cmd_export(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt export", "A cppgrad-gpt checkpoint's model in Hugging Face's GPT-2 layout "
                                           "(GPT2LMHeadModel's model.safetensors).");
  o.add_options()("checkpoint", "a checkpoint written by train --save or import", cxxopts::value<std::string>())
      ("out", "the model.safetensors to write (atomically)", cxxopts::value<std::string>())
      ("config-json", "also write GPT-2's config.json beside --out, so transformers' from_pretrained reads the folder")
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string checkpoint = required_flag(r, "export", "checkpoint", "PATH (written by train --save or import)");
  const std::string out = required_flag(r, "export", "out", "FILE (the model.safetensors to write)");
  const std::string config_json = (std::filesystem::path(out).parent_path() / "config.json").string();
  std::vector<train::OutputFlag> outputs = {{"--out", out}};
  if (r.count("config-json")) outputs.push_back({"--config-json", config_json});
  train::check_outputs_or_usage_error(outputs, "", {{"--checkpoint", checkpoint}});
  const LoadedModel m = load_model(checkpoint);
  // A LoRA run's model leaves as the plain GPT-2 it stands for: its adapters merged into the weights.
  const std::unique_ptr<nn::GPT> merged = m.config.lora.rank > 0 ? merged_gpt(*m.model) : nullptr;
  nn::export_gpt2_hf(merged ? *merged : *m.model, out);
  if (r.count("config-json")) write_file_atomically(config_json, hf_config_json(m.model->config()));
  fmt::print("exported {} (step {}: {}) to {}{}\n", checkpoint, m.steps_done, shape_text(m.model->config()), out,
             r.count("config-json") ? " and " + config_json : "");
  return 0;
}

}  // namespace cppgrad::gpt
