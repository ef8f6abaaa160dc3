# Installing cppgrad as a package: `cmake --install build --prefix P` puts
#   P/lib/libcppgrad.a (or .so with -DBUILD_SHARED_LIBS=ON), libcppgrad_train.a (the training layer, train/)
#   P/include/cppgrad/cppgrad.h           the umbrella header, and the headers it includes under include/cppgrad/,
#                                         with core/ops/elementwise_helpers.h (writing a primitive op) and its loops
#   P/include/cppgrad/train.h             the training layer's umbrella, and its headers under include/cppgrad/train/
#   P/lib/cmake/cppgrad/                  cppgradConfig.cmake, cppgradConfigVersion.cmake, the exported targets
#   P/lib/pkgconfig/cppgrad.pc            for pkg-config
#   P/bin/cppgrad-reverse, cppgrad-gpt, cppgrad-gradcheck  (the component `programs`; all the rest: `library`)
# A project then uses `find_package(cppgrad CONFIG REQUIRED)` and links `cppgrad::cppgrad` (and `cppgrad::train` for
# the training layer), or `pkg-config --cflags --libs cppgrad` (both libraries). examples/consumer/ does both, and
# .ci/run builds it against an install (examples/consumer/check.sh also compiles every installed header on its own and
# tries a stale install). Two components: `library` (the libraries, headers, CMake and pkg-config files) and
# `programs` (the three programs); `cmake --install build --component library` installs the first alone, so a build
# of the libraries alone (`--target cppgrad_train`) can be installed without building the programs.
# Included after apps/, whose programs it installs.
include(CMakePackageConfigHelpers)

set(CPPGRAD_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cppgrad)

# The programs installed, checked first of all. `cmake --install` copies whatever build/bin holds, and building one
# target (`cmake --build build --target cppgrad_tests`) rebuilds the library but not the programs: the install
# would put programs linked against an older library beside the new one. So before a file is copied, each program
# must be at least as new as what in this tree it is built from (the libraries it links, its own sources), by file
# times as the build tool judges; otherwise the install stops, with one line saying what to run.
set(CPPGRAD_INSTALLED_PROGRAMS cppgrad-reverse cppgrad-gpt cppgrad-gradcheck)
foreach(program ${CPPGRAD_INSTALLED_PROGRAMS})
  get_target_property(libraries ${program} LINK_LIBRARIES)
  get_target_property(sources ${program} SOURCES)
  get_target_property(source_dir ${program} SOURCE_DIR)
  set(inputs "")
  foreach(library ${libraries})
    if(TARGET ${library})
      get_target_property(imported ${library} IMPORTED)
      if(NOT imported)
        list(APPEND inputs $<TARGET_FILE:${library}>)
      endif()
    endif()
  endforeach()
  foreach(source ${sources})
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${source_dir})
    list(APPEND inputs ${source})
  endforeach()
  # IS_NEWER_THAN is also true for equal times, so `NOT program IS_NEWER_THAN input` means the input is newer. The
  # message starts with a space so CMake prints it on one line. Part of the programs' component: installing the
  # library alone checks nothing of them.
  install(CODE "
    if(NOT EXISTS \"$<TARGET_FILE:${program}>\")
      message(FATAL_ERROR \" ${program} is not built: run `cmake --build ${PROJECT_BINARY_DIR}` first, then install\")
    endif()
    foreach(input ${inputs})
      if(NOT \"$<TARGET_FILE:${program}>\" IS_NEWER_THAN \"\${input}\")
        get_filename_component(name \"\${input}\" NAME)
        message(FATAL_ERROR \" ${program} is older than \${name}, which it is built from: run `cmake --build ${PROJECT_BINARY_DIR}` first, then install (or install the library alone: --component library)\")
      endif()
    endforeach()" COMPONENT programs)
endforeach()

install(TARGETS cppgrad cppgrad_train EXPORT cppgradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library)
# The public headers: the library's own tree and the training layer's, without the gradient-check registry (core/checks/, nn/checks/: its
# library, cppgrad_checks, is not installed) and without the engine room (core/kernels/), except the loops the op
# author's toolkit (core/ops/elementwise_helpers.h) is written with, without train/mpi/ (its library,
# cppgrad_train_mpi, is not installed, nor the distributed layer under it), and without core/json_bounded.h (the JSON
# readers' helper, which includes nlohmann's JSON, a private dependency). check.sh compiles each installed header
# alone.
foreach(dir core nn optim data train)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad/${dir}
          COMPONENT library
          FILES_MATCHING PATTERN "*.h" PATTERN "kernels" EXCLUDE PATTERN "checks" EXCLUDE PATTERN "mpi" EXCLUDE
          PATTERN "json_bounded.h" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/core/kernels/elementwise_loops.h ${PROJECT_SOURCE_DIR}/core/kernels/parallel_for.h
              ${PROJECT_SOURCE_DIR}/core/kernels/strided.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad/core/kernels COMPONENT library)
install(FILES ${PROJECT_SOURCE_DIR}/include/cppgrad/cppgrad.h ${PROJECT_SOURCE_DIR}/include/cppgrad/train.h
              ${PROJECT_BINARY_DIR}/include/cppgrad/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad COMPONENT library)

install(EXPORT cppgradTargets NAMESPACE cppgrad:: DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR} COMPONENT library)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cppgradConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cppgradConfig.cmake
                              INSTALL_DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cppgradConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may break the API
install(FILES ${PROJECT_BINARY_DIR}/cppgradConfig.cmake ${PROJECT_BINARY_DIR}/cppgradConfigVersion.cmake
        DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR} COMPONENT library)

# pkg-config: the op author's loops (core/kernels/parallel_for.h) carry `#pragma omp simd`, so Cflags has
# -fopenmp-simd (GCC and Clang: those pragmas only, no OpenMP runtime; without it -Wall warns of an unknown pragma).
# A static libcppgrad needs its dependencies on the user's link line too, so fmt is Requires (not
# Requires.private) and the OpenMP flag is in Libs; with a shared one they would only be private. cxxopts is Requires
# either way: the training layer's train/cli.h includes it (header-only, so it adds only an include path).
string(REPLACE ";" " " CPPGRAD_PC_OPENMP_FLAGS "${OpenMP_CXX_FLAGS}")
if(BUILD_SHARED_LIBS)
  set(CPPGRAD_PC_REQUIRES "cxxopts")
  set(CPPGRAD_PC_REQUIRES_PRIVATE "fmt libpcre2-8")
  set(CPPGRAD_PC_LIBS_PRIVATE "${CPPGRAD_PC_OPENMP_FLAGS}")
  set(CPPGRAD_PC_LIBS_OPENMP "")
else()
  set(CPPGRAD_PC_REQUIRES "fmt cxxopts libpcre2-8")  # libpcre2-8: the BPE tokenizer's regex engine
  set(CPPGRAD_PC_REQUIRES_PRIVATE "")
  set(CPPGRAD_PC_LIBS_PRIVATE "")
  set(CPPGRAD_PC_LIBS_OPENMP "${CPPGRAD_PC_OPENMP_FLAGS}")
endif()
file(RELATIVE_PATH CPPGRAD_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)  # e.g. ../..
configure_file(${PROJECT_SOURCE_DIR}/cmake/cppgrad.pc.in ${PROJECT_BINARY_DIR}/cppgrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cppgrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT library)
install(TARGETS ${CPPGRAD_INSTALLED_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
