// Closes the AVX-512 target region that core/kernels/avx512_begin.h opened (see there): code after it is compiled
// for the build's target again. No include guard: each region includes it.
#if !defined(CPPGRAD_AVX512_REGION)
#error "core/kernels/avx512_end.h: no AVX-512 target region to close (include avx512_begin.h first)"
#endif
#undef CPPGRAD_AVX512_REGION
#undef CPPGRAD_AVX512_TARGETS
#undef CPPGRAD_AVX512_PRAGMA
#undef CPPGRAD_AVX512_PRAGMA_TEXT

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
