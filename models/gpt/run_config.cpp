#include "models/gpt/run_config.h"

#include <vector>

#include "models/gpt/preset.h"

namespace cppgrad::gpt {

TrainConfig run_config(TrainConfig c, const RunSources& s) {
  if (s.preset) pin_shape(c, preset_config(*s.preset), s.given, "--preset " + *s.preset);
  if (s.init) {
    TrainConfig shape = s.init->config;
    shape.context = s.init->model.block_size;  // (a lines run may have stored --context 0: its longest line)
    std::set<std::string> given = s.given;
    if (s.preset) {  // the preset's must agree too
      const std::vector<std::string> preset_sets = shape_flags();
      given.insert(preset_sets.begin(), preset_sets.end());
    }
    pin_shape(c, shape, given, "--init " + s.init_path);
  }
  c = c.with_shards();  // a resumed run keeps its checkpoint's
  if (!s.resumed || s.data_given) c.data = absolute_path(c.data);
  if (c.tokenizer.kind == data::TokenizerName::Kind::bpe_file) c.tokenizer.path = absolute_path(c.tokenizer.path);
  c.validate();
  return c;
}

}  // namespace cppgrad::gpt
