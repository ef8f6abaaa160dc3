#include "core/dispatch.h"

#include <utility>

#include "core/execution_context.h"

namespace cppgrad {

// A field of this thread's execution context (core/execution_context.h): each thread starts from the environment
// (CPPGRAD_REFERENCE), and the thread pool carries the caller's setting into its workers.
bool reference_mode() { return detail::this_thread_context().reference_mode; }
ReferenceModeGuard::ReferenceModeGuard(bool on)
    : previous_(std::exchange(detail::this_thread_context().reference_mode, on)) {}
ReferenceModeGuard::~ReferenceModeGuard() { detail::this_thread_context().reference_mode = previous_; }

}  // namespace cppgrad
