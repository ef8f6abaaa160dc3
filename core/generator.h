#pragma once
// An explicit, seedable random number generator (xoshiro256**, seeded through splitmix64). There is no
// global RNG: every random factory, initialiser and dropout takes one of these, so runs are reproducible and
// the state can be saved in a checkpoint.
#include <array>
#include <cstdint>
#include <span>

namespace cppgrad {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();                  // [0, 1), 53 random bits
  double normal();                   // N(0, 1), Box-Muller (one pair per call, the second value dropped)
  // out.size() calls of normal(), in order, each rounded to the element type, leaving the state where those calls
  // would: the same bits, several times faster. The uniforms are drawn in sequence here (cheap); the log and cos of
  // each pair, nearly all of the time (a GPT-2 124M model draws 160 million), run on the pool's threads.
  void fill_normal(std::span<float> out);
  void fill_normal(std::span<double> out);
  std::int64_t randint(std::int64_t low, std::int64_t high);  // [low, high), unbiased
  // Leave the state where n calls of uniform() (one 64-bit draw each) or of normal() (two) would, computing no value:
  // a model whose values a file will replace skips drawing them (nn/init.h's SkipInit), and whatever is drawn after
  // it is what it would have been.
  void skip_uniforms(std::uint64_t n);
  void skip_normals(std::uint64_t n);

  using State = std::array<std::uint64_t, 4>;
  State state() const { return s_; }
  void set_state(const State& s) { s_ = s; }

 private:
  State s_{};
};

}  // namespace cppgrad
