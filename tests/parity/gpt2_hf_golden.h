#pragma once
// What the GPT-2-in-HF-layout tests share (tests/parity/test_gpt2_hf_*.cpp): the PyTorch-written files of
// tests/golden/gpt2_hf/ (make_gpt2_hf.py), the comparison with a stated tolerance, and bitwise equality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "core/safetensors.h"
#include "nn/gpt_hf.h"
#include "test_paths.h"

namespace cppgrad::test {

// The model file and PyTorch's numbers: $CPPGRAD_GOLDEN_DIR/gpt2_hf if that set carries one, else the committed
// tests/golden/gpt2_hf. A golden set of one case per file (docs/parity.md's format) has no such folder, and its
// op cases say nothing about this model, so the committed one stands in.
inline std::filesystem::path gpt2_hf_dir() {
  if (const std::filesystem::path given = golden_dir() / "gpt2_hf"; std::filesystem::is_directory(given)) return given;
  return std::filesystem::path(CPPGRAD_DEFAULT_GOLDEN_DIR) / "gpt2_hf";
}
inline std::string gpt2_hf_model_path() { return (gpt2_hf_dir() / "model.safetensors").string(); }

struct Gpt2HfExpected {
  std::map<std::string, Tensor> t;  // idx, targets [B, T] int64; logits [B, T, V], loss [], adamw_losses [steps]
  std::map<std::string, std::string> meta;
  std::int64_t n_head() const { return std::stoll(meta.at("n_head")); }
  double hp(const std::string& name) const { return std::stod(meta.at("adamw_" + name)); }
};

inline Gpt2HfExpected read_gpt2_hf_expected(const std::filesystem::path& dir = gpt2_hf_dir()) {
  SafetensorsFile f = read_safetensors((dir / "expected.safetensors").string());
  return {std::move(f.tensors), std::move(f.metadata)};
}

// allclose's test |a - b| <= atol + rtol |b|, as a ratio: the worst element's |a - b| / (atol + rtol |b|), so <= 1
// passes and a ratio of 100 is a hundred times the tolerance. Also the largest |a - b|, for the messages.
struct Closeness {
  double worst_ratio = 0, max_abs = 0;
};

inline Closeness closeness(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  EXPECT_EQ(actual.shape(), expected.shape());
  const std::vector<double> a = actual.to_double_vector(), b = expected.to_double_vector();
  Closeness c;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::abs(a[i] - b[i]);
    c.max_abs = std::max(c.max_abs, std::isnan(d) ? INFINITY : d);
    c.worst_ratio = std::max(c.worst_ratio, std::isnan(d) ? INFINITY : d / (atol + rtol * std::abs(b[i])));
  }
  return c;
}

// Same dtype, shape and bytes.
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const auto bytes = [](const Tensor& t) {
    return t.impl().storage->data() + t.offset() * static_cast<std::int64_t>(dtype_size(t.dtype()));
  };
  return std::memcmp(bytes(x), bytes(y), static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype())) == 0;
}

}  // namespace cppgrad::test
