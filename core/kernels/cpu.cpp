// Which vector instructions the float kernels use (core/kernels/gemm.h: simd_level), decided once per process.
#include <cstdlib>
#include <cstring>

#include "core/kernels/gemm.h"

namespace cppgrad::kernels {

bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

SimdLevel simd_level() {
#if defined(__wasm_simd128__)
  return SimdLevel::Simd128;  // one path: the build's 128-bit vectors
#else
  static const SimdLevel level = [] {
    const char* forced = std::getenv("CPPGRAD_SIMD");
    if (forced != nullptr && std::strcmp(forced, "avx2") == 0) return SimdLevel::Avx2;
    return cpu_has_avx512() ? SimdLevel::Avx512 : SimdLevel::Avx2;
  }();
  return level;
#endif
}

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx2: return "avx2";
    case SimdLevel::Avx512: return "avx512";
    case SimdLevel::Simd128: return "simd128";
  }
  return "unknown";
}

}  // namespace cppgrad::kernels
