#pragma once
// The machinery of the PyTorch parity runner (tests/parity/golden_parity.cpp): one golden case loaded from a
// safetensors file, the leaves a handler builds from it, the allclose comparison, the backward convention of
// tests/golden/README.md, and the bookkeeping that proves every expected tensor was compared.
//
// Flow of one case (run_case):
//   1. the handler for the file's `kind` reads inputs/params through Case and returns its outputs by name;
//   2. every returned output Y is compared with `output.Y`;
//   3. loss = sum_Y sum(Y * upstream.Y) (a rank-0 output without upstream is the loss itself), backward;
//   4. every `grad.input.X` / `grad.param.P` is compared with the .grad() of the leaf the handler used;
//   5. every tensor of the file must be accounted for: `output.*` and `grad.*` by a comparison, the rest
//      (input, param, upstream, ...) by having been read. Anything left over fails the case.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/safetensors.h"

namespace cppgrad::parity {

// ------------------------------------------------------------------------------------------ comparison
// allclose as numpy/PyTorch: |actual - expected| <= atol + rtol * |expected|, elementwise.
struct Tolerance {
  double rtol;
  double atol;
};

// float64 runs must agree to ~1e-10 relative (docs/parity.md); float32 runs cast the inputs and agree to ~1e-4.
inline Tolerance tolerance_for(DType run_dtype) {
  return run_dtype == DType::Float64 ? Tolerance{1e-9, 1e-10} : Tolerance{1e-4, 1e-5};
}

inline std::string fmt_err(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

inline std::string fmt_value(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "[1, 0, 3]": the multi-dim index of flat element i of a row-major tensor of this shape.
inline std::string index_str(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

struct Comparison {
  bool ok = true;
  double max_abs_err = 0;  // over all elements (inf when a non-finite value disagrees)
  std::string message;     // why it failed, naming file, tensor, worst element and both values
};

// Compares `actual` (any layout, the run's dtype) with the stored reference `expected`.
inline Comparison compare(const std::string& file, const std::string& name, const Tensor& actual,
                          const Tensor& expected, Tolerance tol) {
  Comparison r;
  std::ostringstream msg;
  msg << file << ": " << name << ": ";
  if (actual.shape() != expected.shape()) {
    r.ok = false;
    msg << "shape mismatch: cppgrad " << shape_str(actual.shape()) << " vs PyTorch " << shape_str(expected.shape());
    r.message = msg.str();
    return r;
  }
  const std::vector<double> a = actual.to_double_vector(), e = expected.to_double_vector();
  std::int64_t worst = -1, n_bad = 0, argmax_err = 0;
  double worst_ratio = 0;  // |diff| / allowed, largest among the failing elements
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = std::fabs(a[i] - e[i]);
    const bool same = a[i] == e[i];  // also equal infinities
    const double err = same ? 0.0 : (std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff);
    if (err > r.max_abs_err) r.max_abs_err = err, argmax_err = static_cast<std::int64_t>(i);
    if (same) continue;
    const double allowed = tol.atol + tol.rtol * std::fabs(e[i]);
    if (std::isfinite(diff) && diff <= allowed) continue;  // NaN or inf on either side never passes
    ++n_bad;
    const double ratio = std::isfinite(diff) ? diff / allowed : std::numeric_limits<double>::infinity();
    if (worst < 0 || ratio > worst_ratio) worst = static_cast<std::int64_t>(i), worst_ratio = ratio;
  }
  if (n_bad == 0) return r;
  r.ok = false;
  const std::size_t w = static_cast<std::size_t>(worst);
  msg << n_bad << " of " << a.size() << " elements outside |a - b| <= " << tol.atol << " + " << tol.rtol
      << " * |b|; worst at flat index " << worst << " " << index_str(worst, actual.shape())
      << ": cppgrad " << fmt_value(a[w]) << " vs PyTorch " << fmt_value(e[w]) << " (|diff| "
      << fmt_err(std::fabs(a[w] - e[w])) << "); max abs err " << fmt_err(r.max_abs_err) << " at flat index "
      << argmax_err;
  r.message = msg.str();
  return r;
}

// ------------------------------------------------------------------------------------------ one case
class Case {
 public:
  Case(std::string file, SafetensorsFile st, DType run_dtype)
      : file_(std::move(file)), st_(std::move(st)), dtype_(run_dtype), tol_(tolerance_for(run_dtype)) {}

  const std::string& file() const { return file_; }
  DType dtype() const { return dtype_; }
  const SafetensorsFile& contents() const { return st_; }
  bool has(const std::string& full_name) const { return st_.tensors.count(full_name) != 0; }

  // --- metadata (all strings in the file); a missing or malformed key throws, naming it ---
  bool has_meta(const std::string& key) const { return st_.metadata.count(key) != 0; }
  const std::string& meta(const std::string& key) const {
    auto it = st_.metadata.find(key);
    if (it == st_.metadata.end()) throw std::runtime_error("metadata key '" + key + "' is missing");
    return it->second;
  }
  std::int64_t meta_int(const std::string& key) const {
    const std::string& v = meta(key);
    std::size_t used = 0;
    std::int64_t out = 0;
    try {
      out = std::stoll(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size())
      throw std::runtime_error("metadata '" + key + "' = '" + v + "' is not an integer");
    return out;
  }
  double meta_double(const std::string& key) const {
    const std::string& v = meta(key);
    std::size_t used = 0;
    double out = 0;
    try {
      out = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size()) throw std::runtime_error("metadata '" + key + "' = '" + v + "' is not a number");
    return out;
  }
  bool meta_bool(const std::string& key) const {
    const std::string& v = meta(key);
    if (v == "1" || v == "true" || v == "True") return true;
    if (v == "0" || v == "false" || v == "False") return false;
    throw std::runtime_error("metadata '" + key + "' = '" + v + "' is not a boolean");
  }

  // --- tensors the handler reads ---
  // `input.<name>` / `param.<name>`. A floating tensor becomes a leaf of the run dtype that requires grad
  // (its .grad() is later compared with `grad.input.<name>` / `grad.param.<name>`); int64 ids and bool masks
  // come back as stored. Repeated calls return the same tensor.
  Tensor input(const std::string& name) { return leaf("input." + name); }
  Tensor param(const std::string& name) { return leaf("param." + name); }

  // For module handlers: `t` (e.g. a module's own parameter, filled from param_value(name)) is the tensor
  // whose .grad() is compared with `grad.param.<name>`.
  Tensor param_value(const std::string& name) { return consume("param." + name); }
  void bind_param(const std::string& name, const Tensor& t) {
    consume("param." + name);
    leaves_["param." + name] = t;
  }

  // Any stored tensor, floating ones cast to the run dtype, marked as read. The escape hatch for entries
  // that are inputs despite their prefix (the optimizer cases' `grad.step{s}`).
  Tensor consume(const std::string& full_name) {
    Tensor t = stored(full_name);
    used_.insert(full_name);
    return is_floating(t.dtype()) ? t.to(dtype_) : t;
  }

  // The reference exactly as stored (float64 for floating data); does not count as reading it.
  const Tensor& stored(const std::string& full_name) const {
    auto it = st_.tensors.find(full_name);
    if (it == st_.tensors.end()) throw std::runtime_error("the file holds no tensor '" + full_name + "'");
    return it->second;
  }

  // The tensor the handler read as `input.X` / `param.P` (or bound), or undefined if it never did.
  Tensor leaf_for(const std::string& full_name) const {
    auto it = leaves_.find(full_name);
    return it == leaves_.end() ? Tensor() : it->second;
  }

  // --- comparisons ---
  // Compares `actual` with the stored `full_name`; a failure is recorded (see failures()), not thrown.
  void check(const std::string& full_name, const Tensor& actual) {
    if (!has(full_name)) return fail("cppgrad produced '" + full_name + "' but the file holds no such tensor");
    used_.insert(full_name);
    checked_.insert(full_name);
    const Tensor& expected = stored(full_name);
    if (!actual.defined()) return fail(full_name + ": cppgrad produced no tensor (undefined)");
    if (is_floating(expected.dtype()) && actual.dtype() != dtype_)
      return fail(full_name + ": computed in " + dtype_name(actual.dtype()) + " but this run is " +
                  dtype_name(dtype_) + " (an op changed the dtype)");
    Comparison c = compare(file_, full_name, actual, expected, tol_);
    ++n_checked_;
    max_abs_err_ = std::max(max_abs_err_, c.max_abs_err);
    if (!c.ok) failures_.push_back(c.message);
  }

  void fail(const std::string& what) { failures_.push_back(file_ + ": " + what); }

  // Every tensor of the file must have been compared (output.*, grad.*) or read (everything else).
  void check_everything_accounted_for(const std::string& kind) {
    for (const auto& [name, t] : st_.tensors) {
      const bool expected_value = name.rfind("output.", 0) == 0 || name.rfind("grad.", 0) == 0;
      if (expected_value && !checked_.count(name) && !used_.count(name))
        fail("'" + name + "' was never compared: the handler for kind '" + kind + "' does not produce it");
      else if (!expected_value && !used_.count(name))
        fail("'" + name + "' was never read: the handler for kind '" + kind + "' ignores it");
    }
  }

  const std::vector<std::string>& failures() const { return failures_; }
  int n_checked() const { return n_checked_; }
  double max_abs_err() const { return max_abs_err_; }

 private:
  Tensor leaf(const std::string& full_name) {
    if (auto it = leaves_.find(full_name); it != leaves_.end()) return it->second;
    Tensor t = consume(full_name);
    if (is_floating(t.dtype())) {
      t = t.detach().clone();  // a fresh leaf, not the stored reference
      t.set_requires_grad(true);
    }
    leaves_[full_name] = t;
    return t;
  }

  std::string file_;
  SafetensorsFile st_;
  DType dtype_;
  Tolerance tol_;
  std::map<std::string, Tensor> leaves_;  // "input.X" / "param.P" -> the tensor whose grad is compared
  std::set<std::string> used_, checked_;
  std::vector<std::string> failures_;
  int n_checked_ = 0;
  double max_abs_err_ = 0;
};

// A handler computes a kind's forward from the case and returns its outputs by name: {"output", y} is
// compared with `output.output`. Everything else (compare, backward, gradients, coverage) is run_case's job.
using Outputs = std::map<std::string, Tensor>;
using Handler = std::function<Outputs(Case&)>;

// Steps 2-5 of the flow described at the top of this file. Exceptions (from ops or the handler) become failures.
inline void run_case(Case& c, const std::string& kind, const Handler& handler) {
  try {
    const Outputs outputs = handler(c);
    // 2. forward values
    for (const auto& [name, y] : outputs) c.check("output." + name, y);
    // 3. loss = sum_Y sum(Y * upstream.Y); a scalar output with no upstream is the loss itself
    Tensor loss;
    for (const auto& [name, y] : outputs) {
      Tensor term;
      if (c.has("upstream." + name))
        term = sum(mul(y, c.consume("upstream." + name)));
      else if (y.defined() && y.dim() == 0 && c.has("output." + name))
        term = y;
      else
        continue;  // compared, not differentiated (attention weights)
      loss = loss.defined() ? add(loss, term) : term;
    }
    bool wants_grads = false;
    for (const auto& [name, t] : c.contents().tensors)
      wants_grads |= name.rfind("grad.input.", 0) == 0 || name.rfind("grad.param.", 0) == 0;
    if (wants_grads) {
      if (!loss.defined()) {
        c.fail("the file holds gradients but no output has an upstream (nothing to backpropagate)");
      } else if (!loss.requires_grad()) {
        c.fail("the loss does not depend on any input or parameter that requires grad");
      } else {
        loss.backward();
      }
    }
    // 4. gradients of the leaves the handler used
    if (wants_grads && loss.defined() && loss.requires_grad()) {
      for (const auto& [name, t] : c.contents().tensors) {
        std::string leaf;  // grad.input.X -> input.X, grad.param.P -> param.P
        if (name.rfind("grad.input.", 0) == 0 || name.rfind("grad.param.", 0) == 0)
          leaf = name.substr(5);
        else
          continue;
        const Tensor x = c.leaf_for(leaf);
        if (!x.defined())
          c.fail("'" + name + "' is expected but the handler never used '" + leaf + "'");
        else if (!x.grad().defined())
          c.fail("'" + name + "': no gradient reached '" + leaf + "'");
        else
          c.check(name, x.grad());
      }
    }
  } catch (const std::exception& e) {
    c.fail(std::string("kind '") + kind + "' threw: " + e.what());
    return;  // the coverage check would only repeat that the case did not finish
  }
  // 5. nothing in the file left unexamined
  c.check_everything_accounted_for(kind);
}

}  // namespace cppgrad::parity
