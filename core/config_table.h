#pragma once
// A configuration, declared once (nanoGPT's GPTConfig + configurator, without exec): one row per field says its
// name, the flag that sets it, where it lives in the config struct, its --help line, its bound, and whether a resumed
// run must match it. From the rows come the flag parsing, the --help list, the bounds check, the JSON (keyed by the
// name, which is the flag with '_' for '-' unless the row says otherwise; a key an older file lacks takes the field's
// default) and the resume check. A model's config has a table of its own (nn::GPTConfig's), and a run's table takes
// its rows in (nested): the flags of `train` include the model's, and the model's JSON is the model's.
//
//   const ConfigTable<GPTConfig> kModel = {
//       named("n_embd", field<GPTConfig>("d-model", "model", "width of the residual stream", at(&GPTConfig::n_embd),
//                                        in_range(1, kMaxWidth))),
//       named("vocab_size", field<GPTConfig>("", "model", "tokens", at(&GPTConfig::vocab_size), in_range(1, kMaxVocab))),
//       ...};  // "" : no flag (the tokenizer sets it)
//   const ConfigTable<TrainConfig> kRun(join({field<TrainConfig>("lr", "training", "learning rate", at(&TrainConfig::lr),
//                                                                 positive()), ...},
//                                            nested(kModel, &TrainConfig::model)));
//
// Field types: std::int64_t, std::uint64_t, double, std::string, enums (a `choice` row names each value), and any
// type with a parse and a text function (a `parsed` row: `--tokenizer bpe:FILE` is a struct, carried as its text).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/number_text.h"

namespace cppgrad {

// A field's value as flags and JSON carry it: whole numbers, seeds, reals, names (strings, and enums by name).
using ConfigValue = std::variant<std::int64_t, std::uint64_t, double, std::string>;

// The value as a flag's text ("64", "0.0005", "lines"): --help shows it as the default.
std::string config_text(const ConfigValue& value);

// The JSON of (key, value) pairs, one object; and back: for each (key, kind) the object's value under key converted
// to that kind (a ConfigValue index), nothing when the key is absent. std::invalid_argument naming the key for a
// value of another type or an integer out of range (a checkpoint may be hostile), or for text that is no object: a
// flat one (no array or object inside) of at most kMaxConfigKeys keys, checked before any of it is built
// (core/json_bounded.h). With `only_these`, a key not among `keys` is refused too. Refusals call the object `what`.
inline constexpr std::size_t kMaxConfigKeys = 128;
std::string config_json(const std::vector<std::pair<std::string, ConfigValue>>& fields);
std::vector<std::optional<ConfigValue>> read_config_json(const std::string& json,
                                                         const std::vector<std::pair<std::string, std::size_t>>& keys,
                                                         bool only_these = false, const std::string& what = "config");

// --- bounds: each throws std::invalid_argument naming the field (its label: "--d-model", or "vocab_size" for a row
// no flag sets) and the value it refuses
inline void check_in_range(const std::string& label, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) throw std::invalid_argument(fmt::format("{} must be in {}..{}, got {}", label, lo, hi, v));
}

template <typename T>
using Bound = std::function<void(const std::string& label, const T& value)>;

inline Bound<std::int64_t> in_range(std::int64_t lo, std::int64_t hi) {
  return [=](const std::string& label, std::int64_t v) { check_in_range(label, v, lo, hi); };
}

// lo..hi and a power of two (1, 2, 4, ...).
inline Bound<std::int64_t> power_of_two_in(std::int64_t lo, std::int64_t hi) {
  return [=](const std::string& label, std::int64_t v) {
    check_in_range(label, v, lo, hi);
    if ((v & (v - 1)) != 0)
      throw std::invalid_argument(fmt::format("{} must be a power of two (1, 2, 4, 8, ...), got {}", label, v));
  };
}

// 0 (a default the program chooses before it runs, e.g. train::default_shards) or a power of two in lo..hi.
inline Bound<std::int64_t> zero_or_power_of_two_in(std::int64_t lo, std::int64_t hi) {
  const Bound<std::int64_t> power = power_of_two_in(lo, hi);
  return [=](const std::string& label, std::int64_t v) {
    if (v != 0) power(label, v);
  };
}

// [lo, hi] or [lo, hi) and finite.
inline Bound<double> in_interval(double lo, double hi, bool hi_open) {
  return [=](const std::string& label, double v) {
    if (!std::isfinite(v) || v < lo || (hi_open ? v >= hi : v > hi))
      throw std::invalid_argument(fmt::format("{} must be in [{:g}, {:g}{}, got {:g}", label, lo, hi, hi_open ? ")" : "]", v));
  };
}

inline Bound<double> positive() {
  return [](const std::string& label, double v) {
    if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument(fmt::format("{} must be a positive number, got {:g}", label, v));
  };
}

inline Bound<double> non_negative() {
  return [](const std::string& label, double v) {
    if (!(v >= 0) || !std::isfinite(v)) throw std::invalid_argument(fmt::format("{} must be a number >= 0, got {:g}", label, v));
  };
}

inline Bound<std::string> not_empty(std::string what) {
  return [=](const std::string& label, const std::string& v) {
    if (v.empty()) throw std::invalid_argument(label + " must name " + what);
  };
}

// One of these names (a string field; an enum field takes a `choice` row instead).
inline Bound<std::string> one_of(std::vector<std::string> names) {
  return [=](const std::string& label, const std::string& v) {
    if (std::find(names.begin(), names.end(), v) != names.end()) return;
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    throw std::invalid_argument(label + " must be " + list + ", got '" + v + "'");
  };
}

// --- where a field lives: at(&Config::steps), or at(&Config::model, &nn::GPTConfig::n_embd) inside a member
template <typename... Members>
auto at(Members... members) {
  return [=](auto& config) -> auto& { return (config .* ... .* members); };
}

// --- a row
enum class OnResume { must_match, may_change };

// What a field of a model's config is to the model's weights, for the rules that take a model from a file (a run's
// own rows keep the default, which nothing reads for them):
//   size          shapes the weights, and any value is still the same architecture (n_embd, n_layer): a finetune
//                 (--init) takes the file's; another model of the family (GPT-2's files) may have any
//   architecture  what the model computes (which norm, which attention): a finetune takes the file's, and a format
//                 made for one architecture (GPT-2's files) holds only its value. The default, so a field added
//                 later is pinned by --init and refused by export until someone says otherwise
//   training      how the model trains, not what it is (dropout, its masks' seed): a finetune may change it
enum class FieldRole { size, architecture, training };

template <typename Config>
struct ConfigRow {
  std::string name;   // the JSON key, and what the field is called: "n_embd", "batch_size"
  std::string flag;   // what sets it on a command line: "d-model", "batch-size"; empty: no flag (set from the data)
  std::string group;  // the heading --help lists it under: "data", "model", "training"
  std::string help;
  OnResume on_resume = OnResume::must_match;
  std::function<ConfigValue(const Config&)> get;
  // Sets the field; a name no choice has: std::invalid_argument "must be a, b or c, got 'x'" (no flag: the caller
  // says where the value came from).
  std::function<void(Config&, const ConfigValue&)> set;
  // The bound: std::invalid_argument naming `label` and the value.
  std::function<void(const Config&, const std::string& label)> check_value;
  // false: to_json leaves the key out while the field holds its default (written_unless_default).
  bool written_at_default = true;
  // false: the row is another table's, taken in by nested(); this config's JSON leaves it to that table's.
  bool stored = true;
  std::vector<std::string> choices = {};  // a choice row's names, in order (a test can build every one)
  FieldRole role = FieldRole::architecture;

  std::string label() const { return flag.empty() ? name : "--" + flag; }  // how refusals name it
  void check(const Config& c) const { check_value(c, label()); }
};

// "d-model" -> "d_model": the name a row takes from its flag.
inline std::string name_of_flag(std::string flag) {
  std::replace(flag.begin(), flag.end(), '-', '_');
  return flag;
}

// A number or string field, with its bound (none: any value of its type).
template <typename Config, typename Ref, typename Field = std::remove_cvref_t<std::invoke_result_t<Ref, Config&>>>
ConfigRow<Config> field(std::string flag, std::string group, std::string help, Ref ref, Bound<Field> bound = nullptr,
                        OnResume on_resume = OnResume::must_match) {
  static_assert(std::is_constructible_v<ConfigValue, Field>, "a field is a whole number, a seed, a real or a string");
  ConfigRow<Config> row{name_of_flag(flag), std::move(flag), std::move(group), std::move(help), on_resume,
                        nullptr, nullptr, nullptr};
  row.get = [ref](const Config& c) { return ConfigValue(ref(c)); };
  row.set = [ref](Config& c, const ConfigValue& v) { ref(c) = std::get<Field>(v); };
  row.check_value = [ref, bound](const Config& c, const std::string& label) {
    if (bound) bound(label, ref(c));
  };
  return row;
}

// An enum field: each value and its name, in the order --help and refusals list them.
template <typename Enum>
using Choices = std::vector<std::pair<std::string, Enum>>;

template <typename Enum>
std::string choices_text(const Choices<Enum>& choices) {  // "adam, adamw or sgd"
  std::string s;
  for (std::size_t i = 0; i < choices.size(); ++i)
    s += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i].first;
  return s;
}

template <typename Enum>
const std::string& choice_name(const Choices<Enum>& choices, Enum value) {
  for (const auto& [name, v] : choices)
    if (v == value) return name;
  throw std::logic_error("choice_name: a value without a name");
}

template <typename Enum>
Enum parse_choice(const Choices<Enum>& choices, const std::string& name) {
  for (const auto& [n, v] : choices)
    if (n == name) return v;
  throw std::invalid_argument("must be " + choices_text(choices) + ", got '" + name + "'");
}

template <typename Config, typename Ref, typename Enum = std::remove_cvref_t<std::invoke_result_t<Ref, Config&>>>
ConfigRow<Config> choice(std::string flag, std::string group, std::string help, Ref ref, Choices<Enum> choices,
                         OnResume on_resume = OnResume::must_match) {
  static_assert(std::is_enum_v<Enum> || std::is_same_v<Enum, bool>, "a choice row holds an enum (or a bool, named)");
  ConfigRow<Config> row{name_of_flag(flag), std::move(flag), std::move(group), std::move(help), on_resume,
                        nullptr, nullptr, nullptr};
  for (const auto& [name, value] : choices) row.choices.push_back(name);
  row.get = [ref, choices](const Config& c) { return ConfigValue(choice_name(choices, ref(c))); };
  row.set = [ref, choices](Config& c, const ConfigValue& v) { ref(c) = parse_choice(choices, std::get<std::string>(v)); };
  row.check_value = [](const Config&, const std::string&) {};  // every value of the enum is one of the choices
  return row;
}

// A field of its own type, carried by flags and JSON as its text: parse(text) -> Field (std::invalid_argument "must
// be ..., got '<text>'" for a text it refuses), text(field) -> its text, the inverse.
template <typename Config, typename Ref, typename Field = std::remove_cvref_t<std::invoke_result_t<Ref, Config&>>>
ConfigRow<Config> parsed(std::string flag, std::string group, std::string help, Ref ref,
                         std::function<Field(const std::string&)> parse, std::function<std::string(const Field&)> text,
                         OnResume on_resume = OnResume::must_match) {
  ConfigRow<Config> row{name_of_flag(flag), std::move(flag), std::move(group), std::move(help), on_resume,
                        nullptr, nullptr, nullptr};
  row.get = [ref, text](const Config& c) { return ConfigValue(text(ref(c))); };
  row.set = [ref, parse](Config& c, const ConfigValue& v) { ref(c) = parse(std::get<std::string>(v)); };
  row.check_value = [](const Config&, const std::string&) {};  // every value parse gives is allowed
  return row;
}

// The row, its key left out of the JSON while its field holds the default. A field added later then leaves the
// checkpoints of the runs that do not use it exactly as earlier versions wrote them, and reading is unchanged: an
// absent key takes the default.
template <typename Config>
ConfigRow<Config> written_unless_default(ConfigRow<Config> row) {
  row.written_at_default = false;
  return row;
}

// The row under a name of its own, where the flag users know is spelled otherwise (--d-model sets n_embd, nanoGPT's
// name), or where no flag sets it (field("", ...)).
template <typename Config>
ConfigRow<Config> named(std::string name, ConfigRow<Config> row) {
  row.name = std::move(name);
  return row;
}

// The row with its role in the model (FieldRole; architecture when not given).
template <typename Config>
ConfigRow<Config> with_role(FieldRole role, ConfigRow<Config> row) {
  row.role = role;
  return row;
}

template <typename Config>
class ConfigTable;

// The rows of a member's own table that a flag sets, as rows of the config that holds the member (TrainConfig::model's
// rows in `train`'s table): their flags, help and resume checks are the outer table's, their JSON the member's own
// (stored = false).
template <typename Outer, typename Inner>
std::vector<ConfigRow<Outer>> nested(const ConfigTable<Inner>& inner, Inner Outer::*member) {
  std::vector<ConfigRow<Outer>> rows;
  for (const ConfigRow<Inner>& r : inner.rows()) {
    if (r.flag.empty()) continue;
    ConfigRow<Outer> row{r.name, r.flag, r.group, r.help, r.on_resume, nullptr, nullptr, nullptr};
    row.get = [get = r.get, member](const Outer& c) { return get(c.*member); };
    row.set = [set = r.set, member](Outer& c, const ConfigValue& v) { set(c.*member, v); };
    row.check_value = [check = r.check_value, member](const Outer& c, const std::string& label) { check(c.*member, label); };
    row.written_at_default = r.written_at_default;
    row.stored = false;
    row.choices = r.choices;
    row.role = r.role;
    rows.push_back(std::move(row));
  }
  return rows;
}

// The rows of several lists, in order: a table built of its own rows and a nested table's.
template <typename Config>
std::vector<ConfigRow<Config>> join(std::initializer_list<std::vector<ConfigRow<Config>>> lists) {
  std::vector<ConfigRow<Config>> rows;
  for (const auto& list : lists) rows.insert(rows.end(), list.begin(), list.end());
  return rows;
}

// --- the table
template <typename Config>
class ConfigTable {
 public:
  ConfigTable(std::initializer_list<ConfigRow<Config>> rows) : rows_(rows) { check_unique(); }
  explicit ConfigTable(std::vector<ConfigRow<Config>> rows) : rows_(std::move(rows)) { check_unique(); }
  const std::vector<ConfigRow<Config>>& rows() const { return rows_; }

  const ConfigRow<Config>& row(const std::string& flag) const {
    for (const auto& r : rows_)
      if (r.flag == flag) return r;
    throw std::logic_error("ConfigTable: no row for --" + flag);
  }

  // A flag's text into its field, parsed strictly by the field's type (core/number_text.h); std::invalid_argument
  // naming the flag and the text. The bound is checked later, by check(), once every flag is in.
  void set_flag(Config& c, const std::string& flag, const std::string& text) const {
    const ConfigRow<Config>& r = row(flag);
    ConfigValue v;
    switch (r.get(c).index()) {
      case 0: v = int_flag(flag, text); break;
      case 1: v = uint_flag(flag, text); break;
      case 2: v = double_flag(flag, text); break;
      default: v = text; break;
    }
    try {
      r.set(c, v);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--" + flag + " " + e.what());
    }
  }

  void check(const Config& c) const {  // every row's bound, in the table's order
    for (const auto& r : rows_) r.check(c);
  }

  // The stored rows' (nested ones are their own table's JSON).
  std::string to_json(const Config& c) const {
    std::vector<std::pair<std::string, ConfigValue>> fields;
    const Config defaults;
    for (const auto& r : rows_)
      if (r.stored && (r.written_at_default || r.get(c) != r.get(defaults))) fields.emplace_back(r.name, r.get(c));
    return config_json(fields);
  }

  // Which keys from_json reads: the stored rows' names (a checkpoint's config, as to_json wrote it), or every row's, a
  // nested one's too, each by its name or by its flag's spelling ("n_embd" or "d_model": a config a person writes).
  enum class Keys { stored, every_row };

  // The defaults, with every key the JSON has (an older checkpoint's lacks the fields added since). A key of no row
  // is refused: every key an earlier version wrote is still a row, and a key this version does not know is a setting
  // it could not honour (a later version's field, written when it is not that field's default).
  // Refusals call the object `what` ("config", "model").
  Config from_json(const std::string& json, Keys which = Keys::stored, const std::string& what = "config") const {
    Config c;
    std::vector<std::pair<std::string, std::size_t>> keys;  // (key, kind), and the row each key sets
    std::vector<std::size_t> row_of;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const ConfigRow<Config>& r = rows_[i];
      if (!r.stored && which == Keys::stored) continue;
      keys.emplace_back(r.name, r.get(c).index()), row_of.push_back(i);
      if (which == Keys::every_row && !r.flag.empty() && name_of_flag(r.flag) != r.name)
        keys.emplace_back(name_of_flag(r.flag), r.get(c).index()), row_of.push_back(i);
    }
    const std::vector<std::optional<ConfigValue>> values = read_config_json(json, keys, /*only_these=*/true, what);
    std::vector<std::string> set_by(rows_.size());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (!values[k]) continue;
      const std::size_t i = row_of[k];
      if (!set_by[i].empty())
        throw std::invalid_argument(what + " gives both '" + set_by[i] + "' and '" + keys[k].first + "': give one");
      set_by[i] = keys[k].first;
      try {
        rows_[i].set(c, *values[k]);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(what + " '" + keys[k].first + "' " + e.what());
      }
    }
    return c;
  }

  // The fields a resumed run must match that differ (nested rows too), in alphabetical order, each as the user knows
  // it: its flag's spelling ("d_model"), or its name where no flag sets it.
  std::vector<std::string> mismatched(const Config& a, const Config& b) const {
    std::vector<std::string> keys;
    for (const auto& r : rows_)
      if (r.on_resume == OnResume::must_match && r.get(a) != r.get(b))
        keys.push_back(r.flag.empty() ? r.name : name_of_flag(r.flag));
    std::sort(keys.begin(), keys.end());
    return keys;
  }

 private:
  // Two rows of one name or one flag would read each other's JSON or flags (a nested table's row beside a run's): each
  // row's name, and its flag's spelling as from_json(every_row) reads it, belong to it alone.
  void check_unique() const {
    const auto keys = [](const ConfigRow<Config>& r) {
      std::vector<std::string> k = {r.name};
      if (!r.flag.empty()) k.push_back(name_of_flag(r.flag));
      return k;
    };
    for (std::size_t i = 0; i < rows_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        for (const std::string& a : keys(rows_[i]))
          for (const std::string& b : keys(rows_[j]))
            if (a == b) throw std::logic_error("ConfigTable: two rows go by '" + a + "'");
  }

  std::vector<ConfigRow<Config>> rows_;
};

}  // namespace cppgrad
