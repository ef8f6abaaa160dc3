# The test suite of the WebAssembly build (cmake/wasm.cmake), run by ctest under node: the library's unit tests
# (tests/core, nn, optim, data) and the training layer's pieces built here (tests/train), with GoogleTest compiled
# from Debian's source (libgtest-dev: /usr/src/googletest) by emscripten's compiler. Left out, and why (docs/browser.md
# counts them): the programs' tests (tests/cli: they start processes, and apps/ is not built), the models' (tests/models), MPI
# (tests/distributed), the parity runners and the allocation counter (their own binaries with their own main), the
# stop and step-loop tests (signals), the thread pool's (no threads), and the docs' snippet tests (they compile with
# the native compiler). The BPE tokenizer's tests run here: its split runs on JavaScript's regex (data/text_split_js.cpp)
# and the same tests hold it equal to PCRE2's and to tiktoken's ids.
set(CPPGRAD_WASM_GTEST_SOURCE /usr/src/googletest CACHE PATH "GoogleTest's source (Debian: libgtest-dev)")
if(NOT EXISTS ${CPPGRAD_WASM_GTEST_SOURCE}/CMakeLists.txt)
  message(FATAL_ERROR "the WebAssembly tests build GoogleTest from source and found none in ${CPPGRAD_WASM_GTEST_SOURCE}: "
                      "apt-get install libgtest-dev libgmock-dev (or set CPPGRAD_WASM_GTEST_SOURCE)")
endif()
set(gtest_disable_pthreads ON CACHE BOOL "" FORCE)  # no threads in this build
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
add_subdirectory(${CPPGRAD_WASM_GTEST_SOURCE} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)

set(tests ${CMAKE_CURRENT_SOURCE_DIR}/tests)
file(GLOB_RECURSE CPPGRAD_TEST_SOURCES CONFIGURE_DEPENDS ${tests}/core/test_*.cpp ${tests}/nn/test_*.cpp
                                                         ${tests}/optim/test_*.cpp ${tests}/data/test_*.cpp
                                                         ${tests}/train/test_*.cpp)
list(FILTER CPPGRAD_TEST_SOURCES EXCLUDE REGEX
     "/test_parity_[^/]*$|/test_thread_pool\\.cpp$|/test_execution_context\\.cpp$|/train/test_(stop|step_loop|run_file)\\.cpp$|/data/test_text_split_window\\.cpp$")

add_executable(cppgrad_tests ${CPPGRAD_TEST_SOURCES})
target_link_libraries(cppgrad_tests PRIVATE cppgrad cppgrad_checks cppgrad_train gtest gmock gtest_main)
target_include_directories(cppgrad_tests PRIVATE ${tests})
target_compile_options(cppgrad_tests PRIVATE $<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>)
target_compile_definitions(cppgrad_tests PRIVATE CPPGRAD_DEFAULT_GOLDEN_DIR="${tests}/golden"
                                                 CPPGRAD_EDGE_CASES="${tests}/core/edge_cases.json")
target_precompile_headers(cppgrad_tests PRIVATE ${tests}/test_util.h)

# Tests of the included files that cannot run here, each with its reason (docs/browser.md counts them).
set(CPPGRAD_WASM_LEFT_OUT
  AtomicFile.RefusesAFifoAndACharacterDevice                  # node's file system has no FIFO and no /dev/null
  AtomicFile.RemovesTemporariesOfDeadWritersButNotOfLiveOnes  # it asks whether other processes are alive
  SafetensorsHostile.AHugeSparseFileCostsOneSmallRead         # a 2 GiB file: emscripten's file layer sees 0 bytes
  ReadTextFile.RefusesAPipeWithoutWaitingForItsWriter         # node's file system has no FIFO
  ReadTextFile.RefusesADevice                                 # node's file system has no /dev/zero
  BpeTokenizer.CopiesShareTheCompiledPatternAndEncodeFromManyThreads)  # four threads
list(JOIN CPPGRAD_WASM_LEFT_OUT ":" left_out)
# One node process per shard, not per test: node compiles the 4 MB module in about half a second each time it
# starts, which for 711 tests would be 400 s of a 40 s run. GoogleTest's own sharding splits the tests.
set(CPPGRAD_WASM_SHARDS 4)
math(EXPR last_shard "${CPPGRAD_WASM_SHARDS} - 1")
foreach(shard RANGE ${last_shard})
  set(name wasm_cppgrad_tests_${shard}_of_${CPPGRAD_WASM_SHARDS})
  add_test(NAME ${name} COMMAND cppgrad_tests --gtest_filter=-${left_out} --gtest_color=no)
  # A shard that ran no test would pass: that is a failure too.
  set_tests_properties(${name} PROPERTIES LABELS wasm TIMEOUT 900 FAIL_REGULAR_EXPRESSION "Running 0 tests"
                       ENVIRONMENT "GTEST_TOTAL_SHARDS=${CPPGRAD_WASM_SHARDS};GTEST_SHARD_INDEX=${shard}")
endforeach()

# The page's test in Chromium: label browser, run by `ctest --preset browser`, not by `ctest --preset wasm`.
include(cmake/web_tests.cmake)
