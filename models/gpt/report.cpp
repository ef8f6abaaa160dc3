#include "models/gpt/report.h"

#include <fmt/format.h>

#include <cmath>
#include <variant>

#include "data/corpus_rows.h"
#include "data/token_labels.h"
#include "models/gpt/framing.h"

namespace cppgrad::gpt {

namespace {

// The five likeliest next tokens of an --explain line, with their probabilities.
std::string choices_text(const data::Tokenizer& tok, const std::vector<nn::TokenChoice>& choices) {
  std::string s;
  for (const auto& c : choices)
    if (c.prob > 0) s += fmt::format("  {:>5} {:.3f}", data::token_label(tok, c.id), c.prob);  // fewer may survive
  return s;
}

std::string samples_text(const data::Lines&, const std::vector<std::string>& samples) {
  std::string s;
  for (const std::string& t : samples) s += " " + t;
  return s;
}

std::string samples_text(const data::RunningText&, const std::vector<std::string>& samples) {
  std::string s;
  for (std::size_t i = 0; i < samples.size(); ++i) s += (i == 0 ? "\n" : "\n\n") + samples[i];
  return s;
}

// ", norm rms" for each architecture row (core/config_table.h's FieldRole) not at GPT-2's value: a model option added
// to nn::GPTConfig shows in the header with no line written for it.
std::string architecture_note(const nn::GPTConfig& m) {
  std::string s;
  for (const auto* row : nn::architecture_changes(m)) s += fmt::format(", {} {}", row->name, config_text(row->get(m)));
  return s;
}

}  // namespace

std::string perplexity(double loss) { return fmt::format("{:.2f}", std::exp(loss)); }

std::string default_run_text() {
  const TrainConfig c;
  const bool chars = c.tokenizer.kind == data::TokenizerName::Kind::chars;
  return fmt::format("the {} of {}, d_model {}, {} layers, {} heads, batch {}, AdamW {:g}, {} steps",
                     chars ? "characters" : "tokens", c.data, c.model.n_embd, c.model.n_layer, c.model.n_head,
                     c.batch_size, c.lr, c.steps);
}

std::string run_header(Trainer& t) {
  const data::TextCorpus& c = t.corpus();
  const std::string splits = std::visit([&](const auto& s) {
    return fmt::format("{} {} train, {} validation", data::split_size(s, data::Split::train),
                       c.tokenizer.chars() ? data::split_unit(s) : "tokens",
                       data::split_size(s, data::Split::validation));
  }, c.splits);
  const std::string vocab = c.tokenizer.chars()
                                ? std::to_string(c.tokenizer.size())
                                : fmt::format("{} ({})", c.tokenizer.size(), t.config().tokenizer.text());
  std::string s = fmt::format(
      "cppgrad-gpt: {} ({}): {} (seed {}); vocab {}{}; context {}; {} threads\n", t.config().data,
      choice_name(kFormats, t.config().format), splits, t.config().seed, vocab,
      std::visit([](const auto& f) { return f.vocab_note(); }, framing_of(c.tokenizer)), c.context, t.workers());
  s += fmt::format("model: GPT, {} parameters (d_model {}, {} layers, {} heads{}); {} tokens per step\n",
                   t.model().num_parameters(), t.config().model.n_embd, t.config().model.n_layer,
                   t.config().model.n_head, architecture_note(t.config().model), t.tokens_per_step());
  if (t.config().lora.rank > 0) {  // what learns: the adapters alone
    std::int64_t trained = 0;
    for (const auto& [name, p] : t.model().named_trainable_parameters()) trained += p.numel();
    s += fmt::format("LoRA: rank {} (alpha {:g}) on {} matrices ({}): {} parameters learn, the rest of {} is frozen\n",
                     t.config().lora.rank, t.config().lora.alpha, nn::lora_layers(t.model()).size(),
                     t.config().lora_targets, trained,
                     t.lora_base() ? t.lora_base()->path : std::string("the model"));
  }
  s += fmt::format("bigram baseline (counts, add-one smoothing): validation loss {:.4f} nats/token (perplexity {})\n",
                   t.bigram_val_loss(), perplexity(t.bigram_val_loss()));
  if (t.eval_rows() < t.validation_rows())
    s += fmt::format("evaluations read the validation split's first {} of {} rows (--eval-tokens)\n", t.eval_rows(),
                     t.validation_rows());
  if (t.config().dtype != LinearPrecision::Float32)
    s += fmt::format("the linear layers' products in {} (--dtype)\n", choice_name(kDtypes, t.config().dtype));
  if (t.step() > 0) s += fmt::format("resumed at step {} of {}\n", t.step(), t.config().steps);
  return s;
}

std::string evaluation_line(const Evaluation& e, std::int64_t steps) {
  return fmt::format("step {:>6}/{}  train {:.4f}  val {:.4f} (perplexity {}, {:.3f} bits/byte)  lr {:.2e}  {:.0f} "
                     "tokens/s\n", e.step, steps, e.train_loss, e.val_loss, perplexity(e.val_loss), e.val_bpb, e.lr,
                     e.tokens_per_s);
}

FinalSummary final_summary(Trainer& t) {
  return {.val_loss = t.history().back().val_loss, .val_bpb = t.history().back().val_bpb,
          .bigram_val_loss = t.bigram_val_loss(), .steps = t.step(), .params = t.model().num_parameters(),
          .train_wall_s = t.history().back().elapsed_s};
}

std::string done_line(const FinalSummary& final) {
  return fmt::format("done: {} steps, validation loss {:.4f} nats/token (perplexity {}, {:.3f} bits/byte) against the "
                     "bigram's {:.4f}; {:.1f}s training\n", final.steps, final.val_loss, perplexity(final.val_loss),
                     final.val_bpb, final.bigram_val_loss, final.train_wall_s);
}

std::string samples_line(const data::TextCorpus& corpus, const std::vector<std::string>& samples) {
  return "samples:" + std::visit([&](const auto& s) { return samples_text(s, samples); }, corpus.splits) + "\n";
}

std::string explain_lines(const data::Tokenizer& tokenizer, const nn::GenerateStep& step) {
  return fmt::format("  -> {:<5} model:{}\n        after filters:{}\n", data::token_label(tokenizer, step.token),
                     choices_text(tokenizer, step.raw_top), choices_text(tokenizer, step.filtered_top));
}

std::string eval_line(const std::string& checkpoint, std::int64_t steps_done, const SplitLoss& l,
                      const std::string& what) {
  return fmt::format("checkpoint {} (step {}): loss {:.4f} nats/token, perplexity {}, {:.4f} bits/byte, over {} tokens "
                     "({} bytes) of {}\n", checkpoint, steps_done, l.loss, perplexity(l.loss), l.bits_per_byte(),
                     l.tokens, l.bytes, what);
}

std::string eval_json(const SplitLoss& l) {
  return fmt::format("{{\"event\": \"eval\", \"loss\": {}, \"perplexity\": {}, \"bpb\": {}, \"tokens\": {}, "
                     "\"bytes\": {}}}\n", l.loss, std::exp(l.loss), l.bits_per_byte(), l.tokens, l.bytes);
}

}  // namespace cppgrad::gpt
