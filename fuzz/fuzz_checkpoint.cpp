// libFuzzer harness: any bytes, written to a file and loaded as a cppgrad-reverse checkpoint, the way
// `cppgrad-reverse train --resume` and `eval --checkpoint` load one: its config is read and validated, then a
// trainer of the configuration the seed corpus was made with loads the model, the optimizer state, the RNG state
// and the metrics history. Refusals are std::runtime_error or std::invalid_argument naming the problem.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "reverse/trainer.h"

namespace {

// The configuration of fuzz/corpus/checkpoint/tiny.safetensors (see fuzz/README.md for the command that made it).
cppgrad::reverse::TrainConfig tiny_config() {
  cppgrad::reverse::TrainConfig c;
  c.vocab = 5, c.seq_len = 3, c.train_size = 32, c.test_size = 8, c.d_model = 4, c.heads = 1;
  c.encoder_layers = 1, c.decoder_layers = 1, c.d_ff = 4, c.epochs = 1, c.batch_size = 8, c.threads = 1;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cppgrad::reverse::Trainer trainer(tiny_config());
  static const std::string path = "/tmp/cppgrad_fuzz_checkpoint_" + std::to_string(::getpid()) + ".safetensors";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    (void)cppgrad::reverse::read_checkpoint_config(path);
    (void)cppgrad::reverse::read_checkpoint_epoch(path);
    trainer.load(path);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
