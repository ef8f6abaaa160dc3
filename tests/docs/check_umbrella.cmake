# cmake -DSOURCE_DIR=<repository> [-DOVERLAY_DIR=<tree>] -P check_umbrella.cmake
# Fails, naming each one, when a public header of core/, nn/, optim/ or data/ (the directories cmake/install.cmake
# installs) is missing from the umbrella header include/cppgrad/cppgrad.h, directly or through core/ops.h (the
# umbrella of the op groups). A user's program includes only the umbrella, installed or not: a header left out of it
# is a part of the library that program cannot see, and nothing else notices. OVERLAY_DIR is a tree laid over the
# repository (a guide's pasted copy, a fixture): its files replace or add to the repository's.
#
# Not public, so not required (every other header of those directories is):
#   core/kernels/, core/checks/, nn/checks/      the engine room and the gradient-check registry (only the loops
#                                                the op author's toolkit needs are installed, the registry not at all)
#   core/ops/elementwise_helpers.h               the op author's toolkit: a program that writes a primitive op
#                                                includes it by name (examples/consumer does); the rest have no use for
#                                                its loops and their `omp simd` pragmas
#   core/allocator.h core/storage.h              the parts of a Tensor (core/tensor.h includes them)
#   core/small_vector.h
#   core/thread_pool.h                           the threads behind run_in_parallel (core/parallel.h includes it)
#   core/allocator_release.h                     giving the block cache back: train/data_parallel.h's, not a user's
#   core/ops/index_add_to_zeros.h                index_select's backward rule's helper (core/ops/select.cpp)
#   core/source_location.h core/bit_cast.h       the standard's, or equivalents where libc++ 14 lacks them (the
#                                                headers that use them include them)
#   data/js_split_pattern.h                      the split pattern for JavaScript's regex: the WebAssembly build's
#                                                splitter's (data/text_split_js.cpp), not a user's
#   core/safetensors_header.h                    the safetensors reader's header parse, behind core/safetensors.h's
#                                                SafetensorsReader (core/safetensors.cpp), not a user's
#   core/json_error_text.h                       nlohmann's messages without their tag: the JSON readers', not a user's
#   core/json_bounded.h                          hostile JSON read within bounds: the JSON readers', not a user's (not
#                                                installed: it includes nlohmann's JSON, a private dependency)
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project's CMake
set(CPPGRAD_NOT_PUBLIC core/ops/elementwise_helpers.h core/allocator.h core/storage.h core/small_vector.h
                       core/thread_pool.h core/allocator_release.h core/ops/index_add_to_zeros.h core/source_location.h
                       core/bit_cast.h data/js_split_pattern.h core/safetensors_header.h
                       core/json_error_text.h core/json_bounded.h)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> [-DOVERLAY_DIR=<tree>] -P check_umbrella.cmake")
endif()
set(trees ${SOURCE_DIR})
if(OVERLAY_DIR)
  list(PREPEND trees ${OVERLAY_DIR})
endif()

# The file at `path` (from the root), from the first tree that has it.
function(find_in_trees path out)
  foreach(tree ${trees})
    if(EXISTS ${tree}/${path})
      set(${out} ${tree}/${path} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${path}: not found in ${trees}")
endfunction()

# The headers an umbrella includes by name (#include "dir/file.h" or <cppgrad/...>), as paths from the root.
function(includes_of path out)
  find_in_trees(${path} file)
  file(STRINGS ${file} lines REGEX "^#include [\"<]")
  set(found "")
  foreach(line ${lines})
    if(line MATCHES "^#include [\"<]([^\">]+)[\">]")
      list(APPEND found ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

includes_of(include/cppgrad/cppgrad.h included)
if("core/ops.h" IN_LIST included)
  includes_of(core/ops.h from_ops)
  list(APPEND included ${from_ops})
endif()

set(headers "")
foreach(tree ${trees})
  file(GLOB_RECURSE found RELATIVE ${tree} ${tree}/core/*.h ${tree}/nn/*.h ${tree}/optim/*.h ${tree}/data/*.h)
  list(APPEND headers ${found})
endforeach()
list(REMOVE_DUPLICATES headers)
list(SORT headers)
set(public "")
set(missing "")
foreach(header ${headers})
  if(header MATCHES "^(core/kernels|core/checks|nn/checks)/" OR header IN_LIST CPPGRAD_NOT_PUBLIC)
    continue()
  endif()
  list(APPEND public ${header})
  if(NOT header IN_LIST included)
    list(APPEND missing ${header})
  endif()
endforeach()
if(missing)
  # One line per header, each starting with a space: CMake prints such lines as they are, unwrapped.
  set(lines "")
  foreach(header ${missing})
    string(APPEND lines " include/cppgrad/cppgrad.h does not include ${header}\n")
  endforeach()
  message(FATAL_ERROR "${lines} Add each to it, or if one is not meant for users, list it with the reason in "
                      "tests/docs/check_umbrella.cmake.")
endif()
list(LENGTH public count)
message(STATUS "include/cppgrad/cppgrad.h includes all ${count} public headers of core/, nn/, optim/ and data/")
