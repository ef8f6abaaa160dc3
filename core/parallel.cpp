#include "core/parallel.h"

namespace cppgrad {

// The pool installs the caller's execution context in every piece (core/thread_pool.cpp): nothing to copy here.
void run_in_parallel(int n, const std::function<void(int)>& work) { parallel_pieces(n, work); }

}  // namespace cppgrad
