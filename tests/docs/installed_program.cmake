# A documentation page's program built against an INSTALLED cppgrad, as a project outside the repository builds it:
#   cmake -DBUILD_DIR=<build tree> -DPROGRAM=<the extracted snippet .cpp> [-DARGS="..."] [-DCHECK_SCRIPT=<script>]
#         -DWORK=<scratch dir> -DCXX=<compiler> [-DLAUNCHER=<ccache>] [-DEXTRA_FLAGS=<flags>] -P installed_program.cmake
# 1. `cmake --install BUILD_DIR --component library --prefix WORK/prefix` (the libraries and headers: the programs
#    need not be built);
# 2. a project of its own in WORK/src (find_package(cppgrad), cppgrad::cppgrad and cppgrad::train), configured
#    against that prefix alone and built with -Wall -Wextra -Werror;
# 3. the program run with ARGS in WORK/run, or checked by CHECK_SCRIPT (run with -DPROGRAM=<it> -DWORK=WORK/check): its
#    exit status is the test's.
# Most of the time is the compiler's (one file, at -O1: 10 to 20 s of CPU, nothing with the build's compiler launcher,
# ccache, when the file is unchanged); the install, the configure and the run take a few seconds.
foreach(var BUILD_DIR PROGRAM WORK CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "installed_program.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/src ${WORK}/run)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${WORK}/run)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  if(what MATCHES "^run")  # the program's own lines; the install's list of files would bury them
    message(STATUS "${what}: ok\n${out}")
  else()
    message(STATUS "${what}: ok")
  endif()
endfunction()

run_step("cmake --install --component library" ${CMAKE_COMMAND} --install ${BUILD_DIR} --component library
         --prefix ${WORK}/prefix)
configure_file(${PROGRAM} ${WORK}/src/program.cpp COPYONLY)
file(WRITE ${WORK}/src/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(installed_program LANGUAGES CXX)
find_package(cppgrad CONFIG REQUIRED)
add_executable(program program.cpp)
target_link_libraries(program PRIVATE cppgrad::cppgrad cppgrad::train)
]=])
run_step("configure against the prefix" ${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build -DCMAKE_CXX_COMPILER=${CXX}
         "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}"
         -DCMAKE_PREFIX_PATH=${WORK}/prefix "-DCMAKE_CXX_FLAGS=-O1 -Wall -Wextra -Werror ${EXTRA_FLAGS}"
         "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run_step("build" ${CMAKE_COMMAND} --build ${WORK}/build)
if(CHECK_SCRIPT)
  run_step("run: ${CHECK_SCRIPT}" ${CMAKE_COMMAND} -DPROGRAM=${WORK}/build/program -DWORK=${WORK}/check
           -P ${CHECK_SCRIPT})
else()
  separate_arguments(args UNIX_COMMAND "${ARGS}")
  run_step("run: program ${ARGS}" ${WORK}/build/program ${args})
endif()
