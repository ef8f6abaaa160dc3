#pragma once
// A program's config table (train/config_table.h) on its command line: every row a flag under its group, with the
// default beside its help, and the flags the user typed copied into a config. Header-only, as program.h.
#include <cxxopts.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "cli/program.h"
#include "train/config_table.h"

namespace cppgrad::cli {

// Every row of `table` but those in `skip` (a command that reads them its own way, as sweep reads lists).
template <typename Config>
void add_config_flags(cxxopts::Options& o, const train::ConfigTable<Config>& table, const std::set<std::string>& skip = {}) {
  const Config defaults;
  for (const auto& row : table.rows())
    if (!skip.count(row.flag))
      o.add_options(row.group)(row.flag, row.help,
                               cxxopts::value<std::string>()->default_value(train::config_text(row.get(defaults))));
}

// The flags the user typed, into `c` (the others keep its values: the defaults, or a resumed checkpoint's); a value
// refused by its type or its choices is a usage error naming the flag. The bounds are checked after, by validate.
template <typename Config>
void apply_config_flags(const cxxopts::ParseResult& r, const train::ConfigTable<Config>& table, Config& c,
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

}  // namespace cppgrad::cli
