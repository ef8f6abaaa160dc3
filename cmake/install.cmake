# Installing cppgrad as a package: `cmake --install build --prefix P` puts
#   P/lib/libcppgrad.a (or .so with -DBUILD_SHARED_LIBS=ON)
#   P/include/cppgrad/cppgrad.h           the umbrella header, and the headers it includes under include/cppgrad/,
#                                         with core/ops/elementwise_helpers.h (writing a primitive op) and its loops
#   P/lib/cmake/cppgrad/                  cppgradConfig.cmake, cppgradConfigVersion.cmake, the exported targets
#   P/lib/pkgconfig/cppgrad.pc            for pkg-config
#   P/bin/cppgrad-reverse, cppgrad-gradcheck
# A project then uses `find_package(cppgrad CONFIG REQUIRED)` and links `cppgrad::cppgrad`, or
# `pkg-config --cflags --libs cppgrad`. examples/consumer/ does both, and .ci/run builds it against an install
# (examples/consumer/check.sh also compiles every installed header on its own).
include(CMakePackageConfigHelpers)

set(CPPGRAD_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cppgrad)

install(TARGETS cppgrad EXPORT cppgradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers: the library's own tree, without the gradient-check registry (core/checks/, nn/checks/: its
# library, cppgrad_checks, is not installed) and without the engine room (core/kernels/), except the loops the op
# author's toolkit (core/ops/elementwise_helpers.h) is written with. check.sh compiles each installed header alone.
foreach(dir core nn optim data)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "kernels" EXCLUDE PATTERN "checks" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/core/kernels/elementwise_loops.h ${PROJECT_SOURCE_DIR}/core/kernels/parallel_for.h
              ${PROJECT_SOURCE_DIR}/core/kernels/strided.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad/core/kernels)
install(FILES ${PROJECT_SOURCE_DIR}/include/cppgrad/cppgrad.h ${PROJECT_BINARY_DIR}/include/cppgrad/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cppgrad)

install(EXPORT cppgradTargets NAMESPACE cppgrad:: DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cppgradConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cppgradConfig.cmake
                              INSTALL_DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cppgradConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may break the API
install(FILES ${PROJECT_BINARY_DIR}/cppgradConfig.cmake ${PROJECT_BINARY_DIR}/cppgradConfigVersion.cmake
        DESTINATION ${CPPGRAD_INSTALL_CMAKEDIR})

# pkg-config: the op author's loops (core/kernels/parallel_for.h) carry `#pragma omp simd`, so Cflags has
# -fopenmp-simd (GCC and Clang: those pragmas only, no OpenMP runtime; without it -Wall warns of an unknown pragma).
# A static libcppgrad needs its dependencies on the user's link line too, so fmt is Requires (not
# Requires.private) and the OpenMP flag is in Libs; with a shared one they would only be private.
string(REPLACE ";" " " CPPGRAD_PC_OPENMP_FLAGS "${OpenMP_CXX_FLAGS}")
if(BUILD_SHARED_LIBS)
  set(CPPGRAD_PC_REQUIRES "")
  set(CPPGRAD_PC_REQUIRES_PRIVATE "fmt")
  set(CPPGRAD_PC_LIBS_PRIVATE "${CPPGRAD_PC_OPENMP_FLAGS}")
  set(CPPGRAD_PC_LIBS_OPENMP "")
else()
  set(CPPGRAD_PC_REQUIRES "fmt")
  set(CPPGRAD_PC_REQUIRES_PRIVATE "")
  set(CPPGRAD_PC_LIBS_PRIVATE "")
  set(CPPGRAD_PC_LIBS_OPENMP "${CPPGRAD_PC_OPENMP_FLAGS}")
endif()
file(RELATIVE_PATH CPPGRAD_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)  # e.g. ../..
configure_file(${PROJECT_SOURCE_DIR}/cmake/cppgrad.pc.in ${PROJECT_BINARY_DIR}/cppgrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cppgrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
