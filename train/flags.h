#pragma once
// Flag values of a command-line program: lists, the numbers (parsed strictly, core/number_text.h), and what a
// program says of a --threads the machine cannot run at once. Header-only, so a program needs nothing else for it.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/number_text.h"  // parse_number, int_flag, uint_flag, double_flag

namespace cppgrad::train {

// "1,2,4" -> {"1", "2", "4"} (empty items dropped).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The line a program prints once (on stderr) when --threads asks for more threads than the machine has cores
// (`cores`: std::thread::hardware_concurrency(), 0 when it is not known); empty when there is nothing to say. The
// run goes on: the results depend on the thread count alone, and the threads take turns on the cores.
inline std::string threads_note(std::int64_t threads, unsigned cores) {
  if (cores == 0 || threads <= static_cast<std::int64_t>(cores)) return "";
  const std::string n = std::to_string(threads), c = std::to_string(cores);
  return "note: --threads " + n + " is more than this machine's " + c + " cores; running anyway, the threads taking " +
         "turns on the cores (the results of " + n + " threads anywhere, but likely slower than --threads " + c + ")";
}

}  // namespace cppgrad::train
