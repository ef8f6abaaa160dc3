# The WebAssembly build's toolchain settings (docs/browser.md): the library for wasm32 with Debian's emscripten, and
# the tests that run under node. Included from CMakeLists.txt when the toolchain is emscripten's, before any target:
#   emcmake cmake -S . -B build-wasm -G Ninja && cmake --build build-wasm -j2 && ctest --test-dir build-wasm -j2
# (or the preset: cmake --preset wasm && cmake --build --preset wasm && ctest --preset wasm).
# The targets are the native build's; what this build leaves out is cmake/platform.cmake's list. Here, how it compiles
# and links, and why:
#   - 128-bit WebAssembly SIMD (-msimd128): the kernels' 8-lane vectors (core/kernels/simd.h) become two v128 each;
#     the AVX-512 files compile to their non-x86 stubs (simd_level() is Simd128, so nothing calls them).
#   - exceptions as WebAssembly exceptions (-fwasm-exceptions): the library reports errors by throwing.
#   - fmt, nlohmann_json and cxxopts are header-only here: Debian's headers, on an include path of their own so that
#     no other header of the build machine's /usr/include is seen, behind the targets the native build finds.

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
# The names the native build's find_package gives, so the targets link the same way on both platforms.
foreach(dependency fmt::fmt nlohmann_json::nlohmann_json cxxopts::cxxopts)
  add_library(${dependency} INTERFACE IMPORTED)
  set_target_properties(${dependency} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${CPPGRAD_WASM_INCLUDE})
endforeach()
set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY)

# --- options every wasm target is built and linked with -------------------------------------------------------------
set(CPPGRAD_WASM_FLAGS -msimd128 -fwasm-exceptions)
add_compile_options(${CPPGRAD_WASM_FLAGS})
# -O2, not -O3: the same speed to within noise for a third less compile time on CI's two cores.
string(REPLACE "-O3" "-O2" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
# NODERAWFS: under node the tests read the committed golden files and write temporary ones through node's own file
# system, as natively; the page's module uses the in-memory one instead (cmake/web_page.cmake).
add_link_options(${CPPGRAD_WASM_FLAGS} -sALLOW_MEMORY_GROWTH=1 -sNODERAWFS=1 -sEXIT_RUNTIME=1
                 --pre-js ${PROJECT_SOURCE_DIR}/cmake/wasm_node_env.js)
# emcc's JavaScript optimiser needs acorn, which Debian installs for its own node (/usr/share/nodejs); a node from
# elsewhere does not look there.
set(CMAKE_CXX_LINKER_LAUNCHER ${CMAKE_COMMAND} -E env NODE_PATH=/usr/share/nodejs)
# Node 18 and later have fetch(), which emscripten 3.1.6's loader then tries on a file path and fails: read the .wasm
# from the file system instead.
find_program(CPPGRAD_NODE NAMES node nodejs REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${CPPGRAD_NODE} --no-experimental-fetch)
