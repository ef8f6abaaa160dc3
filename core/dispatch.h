#pragma once
// The one choice every op with a fast kernel makes: take the shortcut (float32 SIMD, fused, threaded code in
// core/kernels/) or run its readable definition (core/ops/). The definition is the truth; a kernel is a shortcut
// that a test holds equal to it. float64 (gradient checks, parity) always runs the definitions, so gradcheck proves
// the math and the equality tests prove the kernels.
//
// Reference mode turns every shortcut off, so a whole program (the trainer too) runs on the definitions alone:
// set CPPGRAD_REFERENCE=1 in the environment, or hold a ReferenceModeGuard. Like the no-grad switch it is
// thread-local and scoped, a field of the thread's execution context (core/execution_context.h), which the thread
// pool carries into its workers with the other switches.
#include "core/tensor.h"

namespace cppgrad {

bool reference_mode();

class ReferenceModeGuard {
 public:
  explicit ReferenceModeGuard(bool on = true);
  ~ReferenceModeGuard();
  ReferenceModeGuard(const ReferenceModeGuard&) = delete;
  ReferenceModeGuard& operator=(const ReferenceModeGuard&) = delete;

 private:
  bool previous_;
};

// True when an op may take its fast kernel for x: x is float32 and reference mode is off.
inline bool fast_path(const Tensor& x) { return x.dtype() == DType::Float32 && !reference_mode(); }

}  // namespace cppgrad
