#pragma once
// The float GEMMs of libraries made for the field, loaded at run time with dlopen so the build depends on neither:
// Debian's OpenBLAS (package libopenblas0: cblas_sgemm) and oneDNN (package libdnnl2: dnnl_sgemm). A library that is
// not installed gives a null function, and the benchmarks that would use it are not registered. Both stay loaded for
// the life of the process. Each multiplies row-major matrices, as cppgrad's tensors are stored.
#include <dlfcn.h>

#include <cstdint>

namespace cppgrad::bench {

// CBLAS's enum values (cblas.h), spelled here so that the header need not be installed either.
inline constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);

inline void* openblas_library() {
  static void* const lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  return lib;
}

// OpenBLAS's cblas_sgemm on `threads` threads of its own, or null.
inline CblasSgemm load_openblas_sgemm(int threads) {
  void* lib = openblas_library();
  if (lib == nullptr) return nullptr;
  using SetThreads = void (*)(int);
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"));
  if (set_threads != nullptr) set_threads(threads);
  return reinterpret_cast<CblasSgemm>(dlsym(lib, "cblas_sgemm"));
}

// The kernels OpenBLAS chose for this CPU ("SkylakeX", "Cooperlake", ...), for a benchmark's label. A CPU newer than
// the library falls back to "Prescott", its SSE3 kernels (OpenBLAS 0.3.21 on an Emerald Rapids, 4x slower):
// OPENBLAS_CORETYPE names the right ones (bench/gpt/torch_blas.sh --coretype).
inline const char* openblas_core() {
  void* lib = openblas_library();
  using CoreName = char* (*)();
  auto name = lib == nullptr ? nullptr : reinterpret_cast<CoreName>(dlsym(lib, "openblas_get_corename"));
  return name == nullptr ? "?" : name();
}

// oneDNN's dnnl_sgemm (row-major; transa, transb 'N' or 'T'; returns dnnl_success, 0, or an error). It runs on
// OpenMP's threads: OMP_NUM_THREADS=1 makes each call one thread's.
using DnnlSgemm = int (*)(char transa, char transb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                          const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
                          std::int64_t ldc);

inline DnnlSgemm load_onednn_sgemm() {
  void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  return lib == nullptr ? nullptr : reinterpret_cast<DnnlSgemm>(dlsym(lib, "dnnl_sgemm"));
}

}  // namespace cppgrad::bench
