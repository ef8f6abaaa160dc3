#include "web/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "cli/tokens.h"
#include "gpt/attention.h"
#include "gpt/checkpoint.h"
#include "gpt/config.h"
#include "gpt/framing.h"
#include "gpt/prompt.h"
#include "nn/generate.h"
#include "train/data_parallel.h"
#include "train/shell_quoted.h"

namespace cppgrad::web {

namespace {

// nanoGPT's names for the model's sizes, read as the table's keys.
const std::vector<std::pair<std::string, std::string>> kKeyAliases = {
    {"n_layer", "layers"}, {"n_head", "heads"}, {"n_embd", "d_model"}};

std::string value_text(const train::ConfigValue& v) {
  return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

std::vector<TokenProb> labelled(const data::Tokenizer& tok, const std::vector<nn::TokenChoice>& choices) {
  std::vector<TokenProb> out;
  for (const auto& c : choices) out.push_back({cli::token_label(tok, c.id), c.prob});
  return out;
}

}  // namespace

gpt::TrainConfig config_from_json(const std::string& json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("config: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("config: not a JSON object");
  for (const auto& [alias, key] : kKeyAliases) {
    if (!j.contains(alias)) continue;
    if (j.contains(key)) throw std::invalid_argument("config: give '" + key + "' or '" + alias + "', not both");
    j[key] = j[alias];
    j.erase(alias);
  }
  std::string known;
  for (const auto& row : gpt::config_table().rows()) known += (known.empty() ? "" : ", ") + row.key();
  const auto& rows = gpt::config_table().rows();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = it.key();  // a plain name: clang 14 cannot capture a structured binding
    if (std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.key() == key; }))
      throw std::invalid_argument("config: unknown key '" + key + "' (the keys: " + known + ")");
  }
  // The table's reading, not TrainConfig::from_json: a checkpoint's config without "shards" predates the flag and
  // means 8, but a page's config without it means train's default, as a command line without --shards does.
  gpt::TrainConfig c = gpt::config_table().from_json(j.dump());
  c = c.with_shards();
  c.validate();
  return c;
}

std::string train_command(const gpt::TrainConfig& given) {
  const gpt::TrainConfig config = given.with_shards(), defaults;
  gpt::TrainConfig default_shards;
  default_shards.batch_size = config.batch_size;
  default_shards = default_shards.with_shards();
  std::string cmd = "cppgrad-gpt train";
  for (const auto& row : gpt::config_table().rows()) {
    const train::ConfigValue v = row.get(config);
    if (v == row.get(row.flag == "shards" ? default_shards : defaults)) continue;
    std::string text = value_text(v);
    if (row.flag == "data" && text.starts_with(kDroppedDir)) text = text.substr(std::string_view(kDroppedDir).size());
    cmd += " --" + row.flag + " " + train::shell_quoted(text);
  }
  return cmd;
}

// ------------------------------------------------------------------------------------------- the session
Session::Session(const std::string& config_json)
    : trainer_(std::make_unique<gpt::Trainer>(config_from_json(config_json))) {}

Session::Session(std::unique_ptr<gpt::Trainer> trainer) : trainer_(std::move(trainer)) {}

std::unique_ptr<Session> Session::from_checkpoint(const std::string& path) {
  gpt::GptCheckpoint c = gpt::read_gpt_checkpoint(path);  // "checkpoint <path>: ..." if it is none
  gpt::TrainConfig& config = c.config;
  // A checkpoint trained natively names its text by a path of that machine; the page has a dropped text by its name.
  const std::string dropped = kDroppedDir + std::filesystem::path(config.data).filename().string();
  const bool moved = !std::filesystem::exists(config.data) && std::filesystem::exists(dropped);
  if (moved) config.data = dropped;
  if (!std::filesystem::exists(config.data))
    throw std::runtime_error(fmt::format("checkpoint {}: it was trained on {}, which the page does not have (drop that "
                                         "text first)", path, config.data));
  // A BPE model reads its text through the BPE the checkpoint carries (--tokenizer bpe:FILE names a file of the
  // machine that trained it, which the page has not).
  auto trainer = std::make_unique<gpt::Trainer>(config, nullptr, c.tokenizer.bpe() ? &c.tokenizer : nullptr);
  moved ? trainer->load_with_this_data(path) : trainer->load(path);
  return std::unique_ptr<Session>(new Session(std::move(trainer)));
}

SessionInfo Session::info() const {
  gpt::Trainer& t = *trainer_;
  return {.vocab = t.corpus().tokenizer.size(), .context = t.corpus().context, .params = t.model().num_parameters(),
          .bigram_val_loss = t.bigram_val_loss(), .steps_done = t.step(), .max_steps = t.config().steps,
          .tokens_per_step = t.tokens_per_step(), .command = train_command(t.config()),
          .config_json = t.config().to_json()};
}

TrainChunk Session::train(std::int64_t count) {
  if (count < 0) throw std::invalid_argument("train: a negative number of steps");
  TrainChunk chunk;
  trainer_->run_until(
      trainer_->step() + count,
      [&](std::int64_t step, double loss, double) { chunk.steps.push_back({step, loss}); },
      [&](const gpt::Evaluation& e) { chunk.evals.push_back(e); }, nullptr);
  chunk.done = trainer_->step() >= trainer_->config().steps;
  return chunk;
}

AttentionView Session::attention(const std::string& word) {
  const data::Tokenizer& tok = trainer_->corpus().tokenizer;
  const std::vector<std::int64_t> ids = gpt::ids_to_read(tok, word, trainer_->corpus().context, "the word");
  const std::vector<Tensor> maps = gpt::attention_over(trainer_->model(), ids);  // per layer [heads, T, T]
  AttentionView out;
  for (const std::int64_t id : ids) out.tokens.push_back(cli::token_label(tok, id));
  out.layers = std::ssize(maps), out.heads = trainer_->model().config().n_head, out.T = std::ssize(ids);
  out.maps.reserve(static_cast<std::size_t>(out.layers * out.heads * out.T * out.T));
  for (const Tensor& m : maps)
    for (const float v : m.contiguous().to_vector<float>()) out.maps.push_back(v);
  return out;
}

std::vector<Sample> Session::samples(const SampleRequest& r) {
  if (r.num < 1 || r.num > kMaxSamples)
    throw std::invalid_argument(fmt::format("samples: num must be in 1..{}", kMaxSamples));
  nn::check_sampling(r.sampling);
  const data::Tokenizer& tok = trainer_->corpus().tokenizer;
  const std::int64_t context = trainer_->corpus().context;
  nn::GPT& model = trainer_->model();
  model.eval();  // generation reads the model without dropout; the next step sets training mode again
  Generator gen(r.seed);
  std::vector<Sample> out;
  const std::vector<std::int64_t> start = gpt::sample_start(tok, r.prompt, context, "the prompt");
  std::visit([&](const auto& framing) {
    const nn::GenerateOptions options{.max_new_tokens = framing.default_room(context, std::ssize(start)),
                                      .sampling = r.sampling, .stop_token = framing.stop_token()};
    for (std::int64_t i = 0; i < r.num; ++i) {
      Sample s;
      const auto on_step = [&](const nn::GenerateStep& g) {
        s.steps.push_back(
            {cli::token_label(tok, g.token), g.prob, labelled(tok, g.raw_top), labelled(tok, g.filtered_top)});
      };
      s.text = r.prompt + cli::token_text(tok, nn::generate(model, start, options, gen, on_step));
      out.push_back(std::move(s));
    }
  }, gpt::framing_of(tok));
  return out;
}

void Session::save(const std::string& path) const { trainer_->save(path); }

}  // namespace cppgrad::web
