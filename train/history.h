#pragma once
// The metrics history a checkpoint keeps (its metadata 'history'), written and read back: a JSON array of objects, one
// per evaluation or epoch, each field a finite number; and the same objects one per line, the metrics stream
// (train/lines_output.h). The program names the fields and builds its entries from the numbers; the file may be
// hostile, so every field is checked before anything is built from it.
#include <cstddef>
#include <string>
#include <vector>

namespace cppgrad::train {

struct HistoryField {
  std::string key;
  bool count = false;  // a whole number from 0 to 2^53 (exact in a double): a step
};

// Each entry's values, in the order of `fields`. std::invalid_argument for text that is no array ("metadata 'history'
// is not a JSON array"), more than `max_entries` entries (what the run's steps or epochs allow: the text is read as it
// goes, no JSON tree, and refused there), an entry that is no flat object, or the first field that is missing or not
// a finite number (>= 0 when `non_negative`): "history entry N: 'key' must be a finite number[ >= 0]" (N from 1), or
// for a count "... must be a whole number".
std::vector<std::vector<double>> parse_history(const std::string& json, const std::vector<HistoryField>& fields,
                                               bool non_negative, std::size_t max_entries);

// The entries (each a value per field, in the order of `fields`) as parse_history reads them: a count as a whole
// number, every other value so that it reads back to the same double. std::invalid_argument for an entry whose size
// is not the fields'.
std::string history_json(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& entries);
// The same objects as JSON Lines, one entry a line: the metrics stream's content (LinesOutput::write).
std::string history_jsonl(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& entries);

}  // namespace cppgrad::train
