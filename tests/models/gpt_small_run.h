#pragma once
// A small GPT run for the tests of models/gpt/: a file of 200 short lines of a..g in a temporary directory, and a
// config that trains a model of one layer on them in a few milliseconds a step.
#include <cstdint>
#include <fstream>
#include <string>

#include "models/gpt/config.h"
#include "test_paths.h"

namespace cppgrad::test {

struct GptSmallRun {
  TempDir dir;
  std::string data = (dir.path / "words.txt").string();
  GptSmallRun() {
    std::ofstream out(data);
    for (int i = 0; i < 200; ++i) out << std::string(1 + i % 5, static_cast<char>('a' + i % 7)) << "\n";
  }
  // `steps` steps, an evaluation every 3; format text reads the file as a running text in windows of 8.
  gpt::TrainConfig config(std::int64_t steps, data::TextFormat format = data::TextFormat::lines) const {
    gpt::TrainConfig c;
    c.data = data, c.steps = steps, c.eval_every = 3, c.batch_size = 4, c.threads = 1, c.format = format;
    if (format == data::TextFormat::text) c.context = 8;
    c.model.n_embd = 8, c.model.n_head = 2, c.model.n_layer = 1;
    return c;
  }
  std::string path(const std::string& name) const { return (dir.path / name).string(); }
};

}  // namespace cppgrad::test
