// Opens an AVX-512 target region; core/kernels/avx512_end.h closes it. Every function defined between the two is
// compiled for AVX-512 (with AVX2 and FMA) without any special compiler flag, so the rest of the library stays
// runnable on any x86-64 with AVX2, and the region's entry points are called only when cpu_has_avx512().
//
// Include every other header before this one, the standard library's above all: an inline function of external
// linkage (a std::vector member, std::sort) compiled inside the region would be AVX-512 code, and the linker keeps
// one copy of such a function for the whole program, perhaps this one, for callers on any CPU. Inside go only the
// kernel loops (gemm_tiled.h, gelu_loops.h: internal linkage, all of them) and the entry points.
//
// x86-64 only (the file wraps the region in #if defined(__x86_64__)). No include guard: each region includes it.
#if !defined(__x86_64__)
#error "core/kernels/avx512_begin.h: AVX-512 target regions are for x86-64 only"
#endif
#if defined(CPPGRAD_AVX512_REGION)
#error "core/kernels/avx512_begin.h: already inside an AVX-512 target region (include avx512_end.h first)"
#endif
#define CPPGRAD_AVX512_REGION

// A region that also uses AVX512_BF16 (vdpbf16ps, vcvtneps2bf16: core/kernels/gemm_bf16_avx512.cpp) defines
// CPPGRAD_AVX512_WITH_BF16 before including this header, and calls in only when cpu_has_avx512_bf16().
#if defined(CPPGRAD_AVX512_WITH_BF16)
#define CPPGRAD_AVX512_TARGETS "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,avx512bf16"
#else
#define CPPGRAD_AVX512_TARGETS "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"
#endif
#define CPPGRAD_AVX512_PRAGMA_TEXT(x) #x
#define CPPGRAD_AVX512_PRAGMA(x) _Pragma(CPPGRAD_AVX512_PRAGMA_TEXT(x))
#if defined(__clang__)
CPPGRAD_AVX512_PRAGMA(clang attribute push(__attribute__((target(CPPGRAD_AVX512_TARGETS))), apply_to = function))
#else
#pragma GCC push_options
CPPGRAD_AVX512_PRAGMA(GCC target(CPPGRAD_AVX512_TARGETS))
#endif

namespace cppgrad::kernels {
namespace {
// 16 floats, one AVX-512 register: the lane type of every region's loops (gemm_tiled.h's Tile, gelu_loops.h).
// -Wpsabi: GCC notes that passing such a vector by value changes ABI with AVX-512; it never crosses the region.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using f32x16 = float __attribute__((vector_size(64)));
#pragma GCC diagnostic pop
}  // namespace
}  // namespace cppgrad::kernels
