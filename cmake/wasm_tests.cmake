# How the WebAssembly build's tests run under node (tests/CMakeLists.txt includes it in place of the native
# find_package(GTest) and gtest_discover_tests): GoogleTest compiled from Debian's source (libgtest-dev:
# /usr/src/googletest) by emscripten's compiler, and cppgrad_test_shards(), which runs a test binary in a few node
# processes. What the suite leaves out (test files and single tests, each with its reason) is cmake/platform.cmake's
# list; docs/browser.md counts them.
set(CPPGRAD_WASM_GTEST_SOURCE /usr/src/googletest CACHE PATH "GoogleTest's source (Debian: libgtest-dev)")
if(NOT EXISTS ${CPPGRAD_WASM_GTEST_SOURCE}/CMakeLists.txt)
  message(FATAL_ERROR "the WebAssembly tests build GoogleTest from source and found none in ${CPPGRAD_WASM_GTEST_SOURCE}: "
                      "apt-get install libgtest-dev libgmock-dev (or set CPPGRAD_WASM_GTEST_SOURCE)")
endif()
if(NOT CPPGRAD_WITH_THREADS)
  set(gtest_disable_pthreads ON CACHE BOOL "" FORCE)
endif()
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
# It names its targets GTest::gtest, GTest::gmock, GTest::gtest_main too, as the native find_package(GTest) does.
add_subdirectory(${CPPGRAD_WASM_GTEST_SOURCE} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)

# cppgrad_test_shards(<target>): the binary's tests, but cmake/platform.cmake's single tests left out, in
# wasm_<target>_<i>_of_4. One node process per shard, not per test: node compiles the 4 MB module in about half a
# second each time it starts, which for 711 tests would be 400 s of a 40 s run. GoogleTest's own sharding splits the
# tests.
function(cppgrad_test_shards target)
  list(JOIN CPPGRAD_LEFT_OUT_TESTS ":" left_out)
  set(shards 4)
  math(EXPR last_shard "${shards} - 1")
  foreach(shard RANGE ${last_shard})
    set(name wasm_${target}_${shard}_of_${shards})
    add_test(NAME ${name} COMMAND ${target} --gtest_filter=-${left_out} --gtest_color=no)
    # A shard that ran no test would pass: that is a failure too.
    set_tests_properties(${name} PROPERTIES LABELS wasm TIMEOUT 900 FAIL_REGULAR_EXPRESSION "Running 0 tests"
                         ENVIRONMENT "GTEST_TOTAL_SHARDS=${shards};GTEST_SHARD_INDEX=${shard}")
  endforeach()
endfunction()
