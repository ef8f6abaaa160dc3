# The WebAssembly build (docs/browser.md): the library for wasm32 with Debian's emscripten, and the tests that run
# under node. Included from CMakeLists.txt in place of the native build when the toolchain is emscripten's:
#   emcmake cmake -S . -B build-wasm -G Ninja && cmake --build build-wasm -j2 && ctest --test-dir build-wasm -j2
# (or the preset: cmake --preset wasm && cmake --build --preset wasm && ctest --preset wasm).
#
# What differs from the native build, and why:
#   - no threads: the page has none unless cross-origin isolation allows them, and std::thread without -pthread
#     fails to start; core/thread_pool.cpp then runs every piece on the calling thread (CPPGRAD_HAS_THREADS, decided at
#     compile time from the compiler's macros). No OpenMP runtime: `#pragma omp simd` is kept through -fopenmp-simd.
#   - 128-bit WebAssembly SIMD (-msimd128): the kernels' 8-lane vectors (core/kernels/simd.h) become two v128 each;
#     the AVX-512 files compile to their non-x86 stubs (simd_level() is Simd128, so nothing calls them).
#   - exceptions as WebAssembly exceptions (-fwasm-exceptions): the library reports errors by throwing.
#   - no PCRE2 (the BPE tokenizer's regex split, data/text_split.cpp): data/text_split_js.cpp stands in and runs the
#     split pattern on the JavaScript engine's Unicode regex, held equal to PCRE2's by the same tests.
#   - no MPI (distributed/), no programs (apps/), nothing that starts or signals processes (train/stop.cpp and the
#     step loop built on it), no benchmarks, no install. The page's module (cppgrad_web) alone takes the GPT's library
#     (models/gpt) and train/stop.cpp (for its exception type; no handler is installed).
#   - fmt, nlohmann_json and cxxopts are header-only here: Debian's headers, on an include path of their own so that
#     no other header of the build machine's /usr/include is seen.
include(CheckCXXSourceCompiles)

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "the WebAssembly build needs emscripten's clang (emcmake cmake ...); got ${CMAKE_CXX_COMPILER_ID}")
endif()

# --- header-only dependencies from the build machine ----------------------------------------------------------------
set(CPPGRAD_WASM_HOST_INCLUDE /usr/include CACHE PATH "Where Debian's fmt, nlohmann_json and cxxopts headers are")
set(CPPGRAD_WASM_INCLUDE ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${CPPGRAD_WASM_INCLUDE})
foreach(header fmt nlohmann cxxopts.hpp)
  if(NOT EXISTS ${CPPGRAD_WASM_HOST_INCLUDE}/${header})
    message(FATAL_ERROR "the WebAssembly build needs ${CPPGRAD_WASM_HOST_INCLUDE}/${header}: "
                        "apt-get install libfmt-dev nlohmann-json3-dev libcxxopts-dev (or bash .ci/install-deps.sh --wasm)")
  endif()
  file(CREATE_LINK ${CPPGRAD_WASM_HOST_INCLUDE}/${header} ${CPPGRAD_WASM_INCLUDE}/${header} SYMBOLIC)
endforeach()

# --- options every wasm target is built and linked with -------------------------------------------------------------
set(CPPGRAD_WASM_FLAGS -msimd128 -fwasm-exceptions)
add_compile_options(${CPPGRAD_WASM_FLAGS} -fopenmp-simd)
# -O2, not -O3: the same speed to within noise for a third less compile time on CI's two cores.
string(REPLACE "-O3" "-O2" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
# NODERAWFS: under node the tests read the committed golden files and write temporary ones through node's own file
# system, as natively; a page's build would use the in-memory one instead.
add_link_options(${CPPGRAD_WASM_FLAGS} -sALLOW_MEMORY_GROWTH=1 -sNODERAWFS=1 -sEXIT_RUNTIME=1
                 --pre-js ${CMAKE_CURRENT_SOURCE_DIR}/cmake/wasm_node_env.js)
# emcc's JavaScript optimiser needs acorn, which Debian installs for its own node (/usr/share/nodejs); a node from
# elsewhere does not look there.
set(CMAKE_CXX_LINKER_LAUNCHER ${CMAKE_COMMAND} -E env NODE_PATH=/usr/share/nodejs)
# Node 18 and later have fetch(), which emscripten 3.1.6's loader then tries on a file path and fails: read the .wasm
# from the file system instead.
find_program(CPPGRAD_NODE NAMES node nodejs REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${CPPGRAD_NODE} --no-experimental-fetch)

# --- the library: core <- nn <- optim, data ---------------------------------------------------------------------
file(GLOB CPPGRAD_SOURCES CONFIGURE_DEPENDS
  core/*.cpp core/ops/*.cpp core/kernels/*.cpp
  nn/*.cpp optim/*.cpp data/*.cpp)
list(FILTER CPPGRAD_SOURCES EXCLUDE REGEX "/data/text_split\\.cpp$")  # in its place, text_split_js.cpp
add_library(cppgrad STATIC ${CPPGRAD_SOURCES})
add_library(cppgrad::cppgrad ALIAS cppgrad)
target_compile_features(cppgrad PUBLIC cxx_std_20)
configure_file(cmake/version.h.in ${CMAKE_CURRENT_BINARY_DIR}/include/cppgrad/version.h @ONLY)
target_include_directories(cppgrad PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/include
                                          ${CMAKE_CURRENT_BINARY_DIR}/include)
target_include_directories(cppgrad SYSTEM PUBLIC ${CPPGRAD_WASM_INCLUDE})
target_compile_definitions(cppgrad PUBLIC FMT_HEADER_ONLY)
target_compile_options(cppgrad PRIVATE -fno-math-errno)
set_source_files_properties(core/kernels/gemm.cpp PROPERTIES COMPILE_OPTIONS "-ffp-contract=fast")

file(GLOB CPPGRAD_CHECK_SOURCES CONFIGURE_DEPENDS core/checks/*.cpp nn/checks/*.cpp)
add_library(cppgrad_checks STATIC ${CPPGRAD_CHECK_SOURCES})
target_link_libraries(cppgrad_checks PUBLIC cppgrad)
target_compile_options(cppgrad_checks PRIVATE $<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>)

# --- the training layer's pieces a page uses: checkpoints, the metrics, the GPT's step, the plots -----------------
file(GLOB CPPGRAD_TRAIN_SOURCES CONFIGURE_DEPENDS train/*.cpp train/plot/*.cpp)
list(FILTER CPPGRAD_TRAIN_SOURCES EXCLUDE REGEX "/train/(stop|step_loop|run_file)\\.cpp$")
add_library(cppgrad_train STATIC ${CPPGRAD_TRAIN_SOURCES})
add_library(cppgrad::train ALIAS cppgrad_train)
target_link_libraries(cppgrad_train PUBLIC cppgrad)

# --- the page's module (web/, docs/browser.md): cppgrad-gpt's trainer and web::Session for a Web Worker ------------
# The GPT's library (models/gpt, as natively), and train/stop.cpp for the exception a stopped run throws: its signal
# handler is never installed here (the page pauses between chunks instead), and emscripten's sigaction is a stub
# that compiles.
file(GLOB CPPGRAD_GPT_SOURCES CONFIGURE_DEPENDS models/gpt/*.cpp)
add_library(cppgrad_web_engine STATIC ${CPPGRAD_GPT_SOURCES} train/stop.cpp web/session.cpp web/graph_json.cpp)
target_link_libraries(cppgrad_web_engine PUBLIC cppgrad_train)
add_executable(cppgrad_web web/bindings.cpp)
target_link_libraries(cppgrad_web PRIVATE cppgrad_web_engine)
# The page's link, not the tests': the in-memory file system (the worker writes the word list and checkpoints into
# it; NODERAWFS would need node), a module the worker instantiates, the runtime kept alive between calls.
set_property(TARGET cppgrad_web PROPERTY LINK_OPTIONS
  ${CPPGRAD_WASM_FLAGS} -lembind -sMODULARIZE=1 -sEXPORT_NAME=createCppgrad -sENVIRONMENT=web,worker,node
  -sALLOW_MEMORY_GROWTH=1 -sEXPORTED_RUNTIME_METHODS=FS,ENV)
set_target_properties(cppgrad_web PROPERTIES SUFFIX .js RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/web)

# web/dist: what a static server hosts. The word list and its notice are Debian's wamerican (cppgrad-gpt's default
# data), copied at build time.
set(CPPGRAD_WEB_WORDS /usr/share/dict/american-english CACHE FILEPATH "The word list the page trains on (wamerican)")
set(CPPGRAD_WEB_WORDS_NOTICE /usr/share/doc/wamerican/copyright CACHE FILEPATH "Its copyright notice (SCOWL)")
set(CPPGRAD_WEB_DIST ${CMAKE_CURRENT_SOURCE_DIR}/web/dist)
file(GLOB CPPGRAD_WEB_FILES CONFIGURE_DEPENDS web/*.html web/*.css web/*.js)
if(EXISTS ${CPPGRAD_WEB_WORDS} AND EXISTS ${CPPGRAD_WEB_WORDS_NOTICE})
  add_custom_target(web_dist ALL
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CPPGRAD_WEB_DIST}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:cppgrad_web> $<TARGET_FILE_DIR:cppgrad_web>/cppgrad_web.wasm
            ${CPPGRAD_WEB_FILES} ${CPPGRAD_WEB_DIST}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CPPGRAD_WEB_WORDS} ${CPPGRAD_WEB_DIST}/words.txt
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CPPGRAD_WEB_WORDS_NOTICE} ${CPPGRAD_WEB_DIST}/words-NOTICE.txt
    DEPENDS cppgrad_web ${CPPGRAD_WEB_FILES}
    COMMENT "web/dist: the page, its module and the word list")
else()
  add_custom_target(web_dist ALL
    COMMAND ${CMAKE_COMMAND} -E echo "web/dist needs Debian's word list ${CPPGRAD_WEB_WORDS} and its notice "
            "${CPPGRAD_WEB_WORDS_NOTICE}: sudo apt-get install wamerican"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()

if(CPPGRAD_BUILD_TESTS)
  enable_testing()
  include(cmake/wasm_tests.cmake)
  # The page's numbers against native cppgrad-gpt's (tests/web/same_numbers.js): the module the page loads, under
  # node, and the native programs of the Release build beside this one (CPPGRAD_NATIVE_BIN_DIR, cmake/web_tests.cmake).
  add_test(NAME wasm_web_same_numbers
           COMMAND ${CPPGRAD_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/web/same_numbers.js $<TARGET_FILE:cppgrad_web>
                   ${CPPGRAD_NATIVE_BIN_DIR} ${CPPGRAD_WEB_WORDS} ${CMAKE_BINARY_DIR}/web/same_numbers)
  set_tests_properties(wasm_web_same_numbers PROPERTIES LABELS wasm TIMEOUT 900)
  # A BPE checkpoint trained natively, loaded by the page's module with its dropped text (tests/web/bpe_checkpoint.js).
  add_test(NAME wasm_web_bpe_checkpoint
           COMMAND ${CPPGRAD_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/web/bpe_checkpoint.js $<TARGET_FILE:cppgrad_web>
                   ${CPPGRAD_NATIVE_BIN_DIR} ${CMAKE_BINARY_DIR}/web/bpe_checkpoint)
  set_tests_properties(wasm_web_bpe_checkpoint PROPERTIES LABELS wasm TIMEOUT 300)
endif()

# One thread's training steps per second of the words GPT, to compare with the same program built natively
# (bench/wasm/gpt_step_words.cpp; docs/browser.md). Built on request only.
add_executable(gpt_step_words EXCLUDE_FROM_ALL bench/wasm/gpt_step_words.cpp)
target_link_libraries(gpt_step_words PRIVATE cppgrad)

# The BPE tokenizer's regex split over a text file, to compare JavaScript's regex with native PCRE2 on one machine
# (bench/wasm/split_speed.cpp; docs/browser.md). Built on request only.
add_executable(split_speed EXCLUDE_FROM_ALL bench/wasm/split_speed.cpp)
target_link_libraries(split_speed PRIVATE cppgrad)
