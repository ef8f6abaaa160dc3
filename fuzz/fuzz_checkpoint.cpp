// libFuzzer harness: any bytes, written to a file and loaded as a cppgrad-reverse checkpoint, the way
// `cppgrad-reverse train --resume` and `eval --checkpoint` load one: its config is read and validated, then a
// trainer of the configuration the seed corpus was made with loads the model, the optimizer state, the RNG state
// and the metrics history. Refusals are std::runtime_error or std::invalid_argument naming the problem, and a
// refused checkpoint must leave the trainer exactly as it was (model, optimizer state, step, epochs, dropout RNG):
// a bad --resume must not cost the run it was meant to continue.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/generator.h"
#include "fuzz_util.h"
#include "models/reverse/trainer.h"

namespace {

// The configuration of fuzz/corpus/checkpoint/tiny.safetensors (see fuzz/README.md for the command that made it).
cppgrad::reverse::TrainConfig tiny_config() {
  cppgrad::reverse::TrainConfig c;
  c.vocab = 5, c.seq_len = 3, c.train_size = 32, c.test_size = 8, c.model.d_model = 4, c.model.n_heads = 1;
  c.model.n_encoder_layers = 1, c.model.n_decoder_layers = 1, c.model.d_ff = 4, c.epochs = 1, c.batch_size = 8, c.threads = 1;
  return c;
}

// Everything Trainer::load may change, copied.
struct Snapshot {
  cppgrad::nn::StateDict model, optim;
  std::int64_t step, epochs, epoch_steps;
  cppgrad::Generator::State rng;

  explicit Snapshot(cppgrad::reverse::Trainer& t)
      : model(cppgrad::fuzz::snapshot(t.model().state_dict())),
        optim(cppgrad::fuzz::snapshot(t.optimizer().state_dict())),
        step(t.global_step()),
        epochs(t.epochs_done()),
        epoch_steps(t.epoch_progress().steps),
        rng(t.model().dropout_generator().state()) {}

  void expect_unchanged(cppgrad::reverse::Trainer& t, const std::string& refusal) const {
    const Snapshot now(t);
    const std::string why = " by a refused checkpoint (" + refusal + ")";
    if (!cppgrad::fuzz::same_bits(model, now.model)) cppgrad::fuzz::bug("the model was changed" + why);
    if (!cppgrad::fuzz::same_bits(optim, now.optim)) cppgrad::fuzz::bug("the optimizer state was changed" + why);
    if (step != now.step || epochs != now.epochs || epoch_steps != now.epoch_steps)
      cppgrad::fuzz::bug("the step or epoch count was changed" + why);
    if (rng != now.rng) cppgrad::fuzz::bug("the dropout RNG state was changed" + why);
  }
};

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
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  const Snapshot before(trainer);
  try {
    trainer.load(path);
  } catch (const std::runtime_error& e) {
    before.expect_unchanged(trainer, e.what());
  } catch (const std::invalid_argument& e) {
    before.expect_unchanged(trainer, e.what());
  }
  return 0;
}
