# What each platform builds. One build makes both, native and WebAssembly (emscripten's toolchain: docs/browser.md),
# with the same targets defined once; what differs is decided here, by options that default from EMSCRIPTEN (as
# ggml's do). This file is the one list of what the WebAssembly build leaves out, and why: the library's and the
# training layer's source lists, the tests (tests/CMakeLists.txt, cmake/wasm_tests.cmake) and docs/browser.md read it.
# Only the two defaults are built by CI; another mix of options is not tested.
if(EMSCRIPTEN)
  set(CPPGRAD_NATIVE_DEFAULT OFF)
else()
  set(CPPGRAD_NATIVE_DEFAULT ON)
endif()

# OpenMP's runtime. The library asks OpenMP for `#pragma omp simd` alone; emscripten has no OpenMP runtime, and
# -fopenmp-simd keeps those hints without one.
option(CPPGRAD_WITH_OPENMP "Link OpenMP (OFF: -fopenmp-simd, the omp simd hints alone)" ${CPPGRAD_NATIVE_DEFAULT})

# Threads. A page has none unless cross-origin isolation allows them, and std::thread without -pthread fails to start;
# core/thread_pool.cpp then runs every piece on the calling thread (CPPGRAD_HAS_THREADS, decided at compile time from
# the compiler's macros). OFF leaves out the tests that start threads and builds GoogleTest without them.
option(CPPGRAD_WITH_THREADS "Threads (OFF: no test starts one)" ${CPPGRAD_NATIVE_DEFAULT})

# PCRE2 (Debian: libpcre2-dev), the BPE tokenizer's regex split (data/text_split.cpp). There is no wasm build of it:
# data/text_split_js.cpp stands in and runs the split pattern on the JavaScript engine's Unicode regex, held equal to
# PCRE2's pieces and to tiktoken's ids by the same tests.
option(CPPGRAD_WITH_PCRE2 "The BPE split on PCRE2 (OFF: on JavaScript's regex, data/text_split_js.cpp)"
       ${CPPGRAD_NATIVE_DEFAULT})

# MPI: the distributed layer (distributed/), cppgrad_train_mpi, the trainers under mpirun and their tests, built where
# MPI is found. A page runs one process.
option(CPPGRAD_WITH_MPI "Look for MPI and build the distributed layer where it is found" ${CPPGRAD_NATIVE_DEFAULT})

# Signals and processes: a program's run file (train/run_file.cpp). The page pauses between chunks instead of taking
# Ctrl-C; train/stop.cpp itself stays, for the exception a stopped run throws (its handler is never installed there,
# and emscripten's sigaction is a stub that compiles), and so does the step loop (train/step_loop.cpp: its stop is the
# caller's check).
option(CPPGRAD_WITH_PROCESSES "Signals, process ids and a program's run (OFF: the run file is left out)"
       ${CPPGRAD_NATIVE_DEFAULT})

# The programs (apps/), and what only they need: the reversal model's library (models/reverse: the page trains the
# GPT alone) and the install (the libraries, headers and programs as a package).
option(CPPGRAD_BUILD_APPS "Build the programs (apps/) and install them with the libraries" ${CPPGRAD_NATIVE_DEFAULT})

# The benchmarks (bench/). The WebAssembly build measures itself with bench/wasm/'s programs instead, built on request
# and compared with the same files compiled natively (docs/browser.md).
option(CPPGRAD_BUILD_BENCH
       "Build the benchmarks (Google Benchmark's cppgrad-bench; cppgrad-bench-tree-sum where MPI is found)"
       ${CPPGRAD_NATIVE_DEFAULT})

# Every test program, or the library's suite alone. Under node each test program is a module node compiles each time
# it starts (about half a second for 4 MB), so the WebAssembly build runs one binary, cppgrad_tests with the training
# layer's tests folded in, split in shards (cmake/wasm_tests.cmake). Native-only: the programs' tests (tests/cli: they
# start processes), the models' and the page engine's (tests/models, tests/web; the page's module has its own tests
# under node: cmake/web_tests.cmake), the parity runners and the allocation counter (their own binaries with their
# own main), docs_* (compiled by the native compiler) and learn_*.
option(CPPGRAD_TEST_PROGRAMS "Every test program (OFF: cppgrad_tests alone, with the training layer's tests)"
       ${CPPGRAD_NATIVE_DEFAULT})

# --- what is left out, by the options above ------------------------------------------------------------------
set(CPPGRAD_LEFT_OUT_SOURCES "")       # sources, from the repository root
set(CPPGRAD_LEFT_OUT_TEST_SOURCES "")  # test files, from tests/
set(CPPGRAD_LEFT_OUT_TESTS "")         # single GoogleTest tests of the files built (docs/browser.md counts them)
set(CPPGRAD_LEFT_OUT_TARGETS "")       # targets defined but not built by default
if(CPPGRAD_WITH_PCRE2)
  list(APPEND CPPGRAD_LEFT_OUT_SOURCES data/text_split_js.cpp)  # the split on JavaScript's regex
else()
  list(APPEND CPPGRAD_LEFT_OUT_SOURCES data/text_split.cpp)  # in its place, text_split_js.cpp
  list(APPEND CPPGRAD_LEFT_OUT_TEST_SOURCES data/test_text_split_window.cpp)  # it calls PCRE2
endif()
if(NOT CPPGRAD_WITH_THREADS)
  # (test_execution_context: its workers are threads; a thread-less build runs every piece on the caller)
  list(APPEND CPPGRAD_LEFT_OUT_TEST_SOURCES core/test_thread_pool.cpp core/test_execution_context.cpp)
  list(APPEND CPPGRAD_LEFT_OUT_TESTS BpeTokenizer.CopiesShareTheCompiledPatternAndEncodeFromManyThreads)  # four threads
endif()
if(NOT CPPGRAD_WITH_PROCESSES)
  list(APPEND CPPGRAD_LEFT_OUT_SOURCES train/run_file.cpp)
  list(APPEND CPPGRAD_LEFT_OUT_TEST_SOURCES train/test_stop.cpp train/test_run_file.cpp)
  list(APPEND CPPGRAD_LEFT_OUT_TESTS
    AtomicFile.RemovesTemporariesOfDeadWritersButNotOfLiveOnes)  # it asks whether other processes are alive
endif()
if(NOT CPPGRAD_BUILD_APPS)
  list(APPEND CPPGRAD_LEFT_OUT_TARGETS cppgrad_reverse)
endif()
if(EMSCRIPTEN)
  # The tests under node read and write through node's file system (NODERAWFS: cmake/wasm.cmake).
  list(APPEND CPPGRAD_LEFT_OUT_TESTS
    AtomicFile.RefusesAFifoAndACharacterDevice           # node's file system has no FIFO and no /dev/null
    SafetensorsHostile.AHugeSparseFileCostsOneSmallRead  # a 2 GiB file: emscripten's file layer sees 0 bytes
    ReadTextFile.RefusesAPipeWithoutWaitingForItsWriter  # node's file system has no FIFO
    ReadTextFile.RefusesADevice                          # node's file system has no /dev/zero
    Report.AProgressBarFromItsFirstReportTakesItsTotalThenAndTimesWhatFollows)  # node has no pseudo-terminal
endif()

# cppgrad_leave_out(<list variable> <path>...): drops from the list the files whose path ends with one of the paths.
function(cppgrad_leave_out list_variable)
  set(files ${${list_variable}})
  foreach(path ${ARGN})
    string(REPLACE "." "\\." pattern "${path}")
    list(FILTER files EXCLUDE REGEX "/${pattern}$")
  endforeach()
  set(${list_variable} ${files} PARENT_SCOPE)
endfunction()
