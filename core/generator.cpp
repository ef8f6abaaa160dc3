#include "core/generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kernels/parallel_for.h"

namespace cppgrad {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Box-Muller's first value from two uniforms, u1 in (0, 1] (so the log is finite) and u2 in [0, 1).
double box_muller(double u1, double u2) { return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2); }

// xoshiro256**'s state update, next_u64 without its output: xors, a shift and a rotation of the four words.
void advance(Generator::State& s) {
  const std::uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
}

// Skipping n draws without making them. Each operation of the update is linear over the 256 bits of the state
// (GF(2): xor is addition), so one draw is a 256 x 256 bit matrix M and n draws are M^n. The powers M^(2^k) are found
// once by squaring (64 matrices, 512 KiB, about 10 ms); skipping n draws applies those of n's set bits to the state.
struct BitMatrix {
  std::array<Generator::State, 256> column;  // column j: where the state with only bit j set goes
};

Generator::State multiply(const BitMatrix& m, const Generator::State& s) {
  Generator::State out{};
  for (int j = 0; j < 256; ++j)
    if ((s[j / 64] >> (j % 64)) & 1)
      for (int w = 0; w < 4; ++w) out[w] ^= m.column[j][w];
  return out;
}

const std::array<BitMatrix, 64>& draw_powers() {  // [k]: M^(2^k)
  static const std::unique_ptr<std::array<BitMatrix, 64>> powers = [] {
    auto p = std::make_unique<std::array<BitMatrix, 64>>();
    for (int j = 0; j < 256; ++j) {
      Generator::State e{};
      e[j / 64] = std::uint64_t{1} << (j % 64);
      advance(e);
      (*p)[0].column[j] = e;
    }
    for (int k = 1; k < 64; ++k)
      for (int j = 0; j < 256; ++j) (*p)[k].column[j] = multiply((*p)[k - 1], (*p)[k - 1].column[j]);
    return p;
  }();
  return *powers;
}

// Below this many draws, stepping is cheaper than the powers' first making (a draw costs about a nanosecond).
constexpr std::uint64_t kSkipByStepsBelow = std::uint64_t{1} << 20;

template <typename T>
void fill_normal_in_chunks(Generator& gen, std::span<T> out) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;  // two buffers of 512 KiB
  std::vector<double> u1(std::min(kChunk, out.size())), u2(u1.size());
  for (std::size_t start = 0; start < out.size(); start += kChunk) {
    const std::size_t n = std::min(kChunk, out.size() - start);
    for (std::size_t i = 0; i < n; ++i) u1[i] = 1.0 - gen.uniform(), u2[i] = gen.uniform();  // normal()'s order
    kernels::parallel_for(static_cast<std::int64_t>(n), n >= 4096, [&](std::int64_t i) {
      out[start + static_cast<std::size_t>(i)] = static_cast<T>(box_muller(u1[i], u2[i]));
    });
  }
}
}  // namespace

void Generator::manual_seed(std::uint64_t seed) {
  for (auto& w : s_) w = splitmix64(seed);
}

std::uint64_t Generator::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  advance(s_);
  return result;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::normal() {
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return box_muller(u1, u2);
}

void Generator::skip_uniforms(std::uint64_t n) {
  if (n < kSkipByStepsBelow) {
    for (std::uint64_t i = 0; i < n; ++i) advance(s_);
    return;
  }
  const std::array<BitMatrix, 64>& powers = draw_powers();
  for (int k = 0; k < 64; ++k)
    if ((n >> k) & 1) s_ = multiply(powers[static_cast<std::size_t>(k)], s_);
}

void Generator::skip_normals(std::uint64_t n) { skip_uniforms(2 * n); }  // normal()'s two uniforms

void Generator::fill_normal(std::span<float> out) { fill_normal_in_chunks(*this, out); }
void Generator::fill_normal(std::span<double> out) { fill_normal_in_chunks(*this, out); }

std::int64_t Generator::randint(std::int64_t low, std::int64_t high) {
  if (high <= low)
    throw std::invalid_argument("randint: empty range [" + std::to_string(low) + ", " + std::to_string(high) + ")");
  const std::uint64_t range = static_cast<std::uint64_t>(high - low);
  // Rejection sampling removes the modulo bias.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::uint64_t r;
  do r = next_u64();
  while (r >= limit);
  return low + static_cast<std::int64_t>(r % range);
}

}  // namespace cppgrad
