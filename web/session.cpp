#include "web/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "data/token_labels.h"
#include "core/json_bounded.h"
#include "core/safetensors.h"
#include "models/gpt/attention.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/config.h"
#include "models/gpt/prompt.h"
#include "models/gpt/sample_session.h"
#include "nn/generate.h"
#include "train/data_parallel.h"
#include "train/diverged.h"
#include "train/shell_quoted.h"

namespace cppgrad::web {

namespace {

std::string value_text(const ConfigValue& v) {
  return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

std::vector<TokenProb> labelled(const data::Tokenizer& tok, const std::vector<nn::TokenChoice>& choices) {
  std::vector<TokenProb> out;
  for (const auto& c : choices) out.push_back({data::token_label(tok, c.id), c.prob});
  return out;
}

std::string step_losses_json(const std::vector<StepLoss>& losses) {
  nlohmann::json values = nlohmann::json::array();
  for (const StepLoss& s : losses) values.push_back(s.loss);
  return nlohmann::json{{"first_step", losses.front().step}, {"losses", values}}.dump();
}

// kStepLossesKey of a checkpoint at `step`, or nothing if it has none. The file may be anyone's: the value must be
// the page's shape, with finite losses of contiguous steps ending at the checkpoint's step (the metadata's size is
// already bounded by the safetensors reader).
std::vector<StepLoss> read_step_losses(const std::string& path, const std::map<std::string, std::string>& metadata,
                                       std::int64_t step) {
  const auto found = metadata.find(kStepLossesKey);
  if (found == metadata.end()) return {};
  const auto refuse = [&](const std::string& what) {
    return std::runtime_error(fmt::format("checkpoint {}: metadata '{}' {}", path, kStepLossesKey, what));
  };
  nlohmann::json j;
  try {
    // {"first_step": N, "losses": [...]}: depth 2, and a loss per step at most.
    const std::size_t most = 3 + static_cast<std::size_t>(std::max<std::int64_t>(step, 0));
    j = parse_json_bounded(found->second, {.max_depth = 2, .max_values = most},
                           fmt::format("checkpoint {}: metadata '{}'", path, kStepLossesKey));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  if (!j.is_object() || !j.contains("first_step") || !j["first_step"].is_number_unsigned() || !j.contains("losses") ||
      !j["losses"].is_array())
    throw refuse("is not {\"first_step\": N, \"losses\": [numbers]}");
  const std::uint64_t first = j["first_step"].get<std::uint64_t>();
  const std::int64_t count = std::ssize(j["losses"]);
  if (first < 1 || count < 1 || first > static_cast<std::uint64_t>(step) ||
      static_cast<std::int64_t>(first) + count - 1 != step)
    throw refuse(fmt::format("must hold the losses of steps up to the checkpoint's step {}", step));
  std::vector<StepLoss> out;
  out.reserve(static_cast<std::size_t>(count));
  for (const auto& v : j["losses"]) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) throw refuse("holds a loss that is not a finite number");
    out.push_back({static_cast<std::int64_t>(first) + std::ssize(out), v.get<double>()});
  }
  return out;
}

}  // namespace

gpt::TrainConfig config_from_json(const std::string& json) {
  // Every row's key, the model's too, by its name or its flag's ("n_embd" or "d_model"). The table's reading, not
  // TrainConfig::from_json: a checkpoint's config without "shards" predates the flag and means 8, but a page's config
  // without it means train's default, as a command line without --shards does.
  gpt::TrainConfig c = gpt::config_table().from_json(json, ConfigTable<gpt::TrainConfig>::Keys::every_row);
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
    const ConfigValue v = row.get(config);
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
  auto session = std::unique_ptr<Session>(new Session(std::move(trainer)));
  // The page's key, which read_gpt_checkpoint passes over: the file read once more, for its metadata (the page's
  // checkpoints are small; it takes none over 1 GB).
  session->losses_ = read_step_losses(path, read_safetensors(path).metadata, session->trainer_->step());
  return session;
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
  refuse_if_diverged();
  TrainChunk chunk;
  try {
    trainer_->run_until(
        trainer_->step() + count,
        [&](std::int64_t step, double loss, double) {
          chunk.steps.push_back({step, loss});
          losses_.push_back({step, loss});
        },
        [&](const gpt::Evaluation& e) { chunk.evals.push_back(e); }, nullptr);
  } catch (const train::TrainingDiverged& e) {
    // The program's message names its flags (--lr, --clip-grad, --detect-anomaly); the page has a box for the rate
    // and a Reset button, and its run cannot go on from weights that give no finite loss.
    diverged_ = fmt::format("training diverged at step {} (the loss is no longer a finite number)", e.step);
    throw std::runtime_error(diverged_ + ". Try a smaller learning rate, then press Reset");
  }
  chunk.done = trainer_->step() >= trainer_->config().steps;
  return chunk;
}

void Session::refuse_if_diverged() const {
  if (!diverged_.empty()) throw std::runtime_error(diverged_ + ": press Reset to start a new run");
}

AttentionView Session::attention(const std::string& word) {
  refuse_if_diverged();
  const data::Tokenizer& tok = trainer_->corpus().tokenizer;
  const std::vector<std::int64_t> ids = gpt::ids_to_read(tok, word, trainer_->corpus().context, "the word");
  const std::vector<Tensor> maps = gpt::attention_over(trainer_->model(), ids);  // per layer [heads, T, T]
  AttentionView out;
  for (const std::int64_t id : ids) out.tokens.push_back(data::token_label(tok, id));
  out.layers = std::ssize(maps), out.heads = trainer_->model().config().n_head, out.T = std::ssize(ids);
  out.maps.reserve(static_cast<std::size_t>(out.layers * out.heads * out.T * out.T));
  for (const Tensor& m : maps)
    for (const float v : m.contiguous().to_vector<float>()) out.maps.push_back(v);
  // Weights that overflow (a run about to diverge, or a checkpoint of one) give maps of NaN: no picture, a reason.
  if (!std::all_of(out.maps.begin(), out.maps.end(), [](float v) { return std::isfinite(v); }))
    throw std::runtime_error("the attention weights are not finite numbers: the model's weights overflow (a run that "
                             "diverges). Press Reset to start a new run");
  return out;
}

std::vector<Sample> Session::samples(const SampleRequest& r) {
  refuse_if_diverged();
  if (r.num < 1 || r.num > kMaxSamples)
    throw std::invalid_argument(fmt::format("samples: num must be in 1..{}", kMaxSamples));
  nn::check_sampling(r.sampling);
  const data::Tokenizer& tok = trainer_->corpus().tokenizer;
  // The model in evaluation mode while the session lasts (no dropout); the prompt refused as the program refuses it.
  const gpt::SampleSettings settings{.prompt = r.prompt, .max_new_tokens = std::nullopt, .sampling = r.sampling,
                                     .seed = r.seed};
  gpt::SampleSession session(trainer_->model(), tok, trainer_->corpus().context, settings, "the prompt");
  std::vector<Sample> out;
  for (std::int64_t i = 0; i < r.num; ++i) {
    Sample s;
    const auto on_step = [&](const nn::GenerateStep& g) {
      s.steps.push_back(
          {data::token_label(tok, g.token), g.prob, labelled(tok, g.raw_top), labelled(tok, g.filtered_top)});
    };
    try {
      s.text = session.next(on_step);
    } catch (const std::invalid_argument& e) {
      // nn::next_token_probs refuses logits that are not finite, naming its own function; the page says what
      // that means for the run.
      if (std::string_view(e.what()).find("logit") == std::string_view::npos) throw;
      throw std::runtime_error("the model's logits are not finite numbers: its weights overflow (a run that "
                               "diverges). Press Reset to start a new run");
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Session::save(const std::string& path) const {
  refuse_if_diverged();
  trainer_->save(path);
  if (losses_.empty()) return;
  // The page's key beside Trainer::save's: the small file read back and written again whole (atomically).
  SafetensorsFile file = read_safetensors(path);
  file.metadata[kStepLossesKey] = step_losses_json(losses_);
  write_safetensors(path, file.tensors, file.metadata);
}

}  // namespace cppgrad::web
