#pragma once
// What the two trainers' run configs share about --shards (models/gpt/config.cpp, models/reverse/config.cpp): a run
// config has `shards` (0: chosen from the batch) and `batch_size`, and a checkpoint's config from before the flag has
// no key for it.
#include <string>

#include "core/config_table.h"
#include "train/data_parallel.h"

namespace cppgrad::train {

// `c` with its shards chosen: --shards, or when it is 0 default_shards of the batch size.
template <typename Config>
Config with_shards(Config c) {
  if (c.shards == 0) c.shards = default_shards(c.batch_size);
  return c;
}

// The table's reading of a checkpoint's config (`keys`: its own rows, or every row, as a version-1 checkpoint's config
// held the model's too, under its flags' spellings). One from before --shards lacks the key: such a checkpoint resumed
// with 8 shards, the default then, and still does (the absent key would otherwise take the field's default, 0: the
// batch's shards).
template <typename Config>
Config run_config_from_json(const ConfigTable<Config>& table, const std::string& text,
                            typename ConfigTable<Config>::Keys keys = ConfigTable<Config>::Keys::stored) {
  Config c = table.from_json(text, keys);
  if (!read_config_json(text, {{"shards", 0}})[0]) c.shards = kShardsBeforeTheFlag;
  return c;
}

}  // namespace cppgrad::train
