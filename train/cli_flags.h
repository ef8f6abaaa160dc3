#pragma once
// A program's config table (core/config_table.h) on its command line: every row a flag under its group, with the
// default beside its help, and the flags the user typed copied into a config. Header-only, as train/cli.h.
#include <cxxopts.hpp>
#include <fmt/format.h>
#include <set>
#include <stdexcept>
#include <string>

#include "train/checkpoint.h"
#include "train/cli.h"
#include "core/config_table.h"

namespace cppgrad::train {

// Every row of `table` but those in `skip` (a command that reads them its own way, as sweep reads lists).
template <typename Config>
void add_config_flags(cxxopts::Options& o, const ConfigTable<Config>& table, const std::set<std::string>& skip = {}) {
  const Config defaults;
  for (const auto& row : table.rows())
    if (!skip.count(row.flag))
      o.add_options(row.group)(row.flag, row.help,
                               cxxopts::value<std::string>()->default_value(config_text(row.get(defaults))));
}

// The flags the user typed, into `c` (the others keep its values: the defaults, or a resumed checkpoint's); a value
// refused by its type or its choices is a usage error naming the flag. The bounds are checked after, by validate.
template <typename Config>
void apply_config_flags(const cxxopts::ParseResult& r, const ConfigTable<Config>& table, Config& c,
                        const std::set<std::string>& skip = {}) {
  for (const auto& row : table.rows()) {
    if (skip.count(row.flag) || !r.count(row.flag)) continue;
    try {
      table.set_flag(c, row.flag, r[row.flag].template as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
}

// The flags of `table`'s rows the user typed ("heads", "context", ...): what a shape fixed elsewhere (a preset, a
// checkpoint) must agree with.
template <typename Config>
std::set<std::string> typed_config_flags(const cxxopts::ParseResult& r, const ConfigTable<Config>& table) {
  std::set<std::string> typed;
  for (const auto& row : table.rows())
    if (r.count(row.flag)) typed.insert(row.flag);
  return typed;
}

// A `train` command's config: the defaults, or with --resume the checkpoint's (read as `format`), then the flags the
// user typed, then every bound checked. A resumed run must keep every row that is OnResume::must_match: a flag that
// changes one is a usage error naming it.
template <typename Config>
Config config_from_flags(const cxxopts::ParseResult& r, const ConfigTable<Config>& table, const CheckpointFormat& format) {
  const std::string resume = flag_path(r, "resume");
  const Config stored =
      resume.empty() ? Config{} : table.from_json(checkpoint_config(read_checkpoint(resume, format), resume));
  Config c = stored;
  apply_config_flags(r, table, c);
  table.check(c);
  if (resume.empty()) return c;  // a fresh run takes any value its bounds allow
  for (const auto& row : table.rows())
    if (row.on_resume == OnResume::must_match && row.get(c) != row.get(stored))
      throw UsageError(fmt::format("--resume {}: the checkpoint was trained with --{} {}, not {}", resume, row.flag,
                                   config_text(row.get(stored)), config_text(row.get(c))));
  return c;
}

}  // namespace cppgrad::train
