# cmake -DSOURCE_DIR=<repository> [-DOVERLAY_DIR=<tree>] -P check_layers.cmake
# Fails, naming each one, when a source file includes a layer above its own, a sibling layer, or a program:
#
#   core  <-  nn, distributed  <-  optim, data  <-  train  <-  include/cppgrad  <-  models/<each model>  <-  apps, web
#   and above them all: tests, bench, fuzz, examples (any layer, but never apps/)
#
# A folder may include its own files and those of any lower layer; two folders on one layer (optim and data, two
# models, apps and web) never include each other; nothing outside apps/ includes apps/ (the programs are the top:
# what a test, a benchmark, the page or a fuzzer needs of them belongs in a model's library). "cppgrad/version.h"
# (generated) is the bottom layer's. Every include is spelled from the root ("models/gpt/trainer.h", never
# "gpt/trainer.h" through an include path that hides the layer). Includes of anything else (<vector>, "test_util.h") are not layers and are
# skipped. OVERLAY_DIR is a tree laid over the repository (a fixture), its files added to the repository's.
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> [-DOVERLAY_DIR=<tree>] -P check_layers.cmake")
endif()

set(rank_core 0)
set(rank_nn 1)
set(rank_distributed 1)
set(rank_optim 2)
set(rank_data 2)
set(rank_train 3)
set(rank_include 4)  # the umbrella headers, <cppgrad/cppgrad.h> and <cppgrad/train.h>, over the layers they gather
set(rank_models 5)
set(rank_apps 6)
set(rank_web 6)
set(rank_tests 7)
set(rank_bench 7)
set(rank_fuzz 7)
set(rank_examples 7)
set(folders core nn distributed optim data train include models apps web tests bench fuzz examples)

# The layer a path from the root belongs to: its first folder, or for models/ its first two (each model its own).
function(layer_of path out_layer out_folder)
  set(${out_layer} "" PARENT_SCOPE)
  if(path MATCHES "^cppgrad/version\\.h$")
    set(${out_layer} core PARENT_SCOPE)
    set(${out_folder} core PARENT_SCOPE)
    return()
  endif()
  if(path MATCHES "^cppgrad/")
    set(path include/${path})
  endif()
  if(path MATCHES "^([^/]+)/")
    set(first ${CMAKE_MATCH_1})
    if(first IN_LIST folders)
      set(${out_layer} ${first} PARENT_SCOPE)
      set(${out_folder} ${first} PARENT_SCOPE)
      if(first STREQUAL "models" AND path MATCHES "^models/([^/]+)/")
        set(${out_folder} models/${CMAKE_MATCH_1} PARENT_SCOPE)
      endif()
    endif()
  endif()
endfunction()

set(trees ${SOURCE_DIR})
if(OVERLAY_DIR)
  list(APPEND trees ${OVERLAY_DIR})
endif()
set(problems "")
set(count 0)
foreach(tree ${trees})
  set(globs "")
  foreach(folder ${folders})
    list(APPEND globs ${tree}/${folder}/*.h ${tree}/${folder}/*.cpp ${tree}/${folder}/*.cc)
  endforeach()
  file(GLOB_RECURSE files RELATIVE ${tree} ${globs})
  list(FILTER files EXCLUDE REGEX "^tests/docs/fixtures/")  # planted failures, checked through OVERLAY_DIR
  foreach(file ${files})
    layer_of(${file} from from_folder)
    if(NOT from)
      continue()
    endif()
    math(EXPR count "${count} + 1")
    file(STRINGS ${tree}/${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line ${lines})
      if(NOT line MATCHES "#[ \t]*include[ \t]*[\"<]([^\">]+)[\">]")
        continue()
      endif()
      set(included ${CMAKE_MATCH_1})
      # "gpt/trainer.h" would resolve only with models/ or apps/ on the include path, which hides the layer it
      # reaches: every include is spelled from the root.
      if(included MATCHES "^([^/]+)/")
        set(first ${CMAKE_MATCH_1})
        if(NOT first IN_LIST folders AND (IS_DIRECTORY ${SOURCE_DIR}/models/${first} OR
                                          IS_DIRECTORY ${SOURCE_DIR}/apps/${first}))
          string(APPEND problems " ${file} includes ${included}: spell it from the repository's root (models/... or "
                                 "apps/...)\n")
          continue()
        endif()
      endif()
      layer_of(${included} to to_folder)
      if(NOT to OR to_folder STREQUAL from_folder)
        continue()
      endif()
      if(to STREQUAL "apps")
        string(APPEND problems " ${file} includes ${included}: nothing outside apps/ includes a program's file (move "
                               "what it needs into a model's library, models/)\n")
      elseif(rank_${to} GREATER rank_${from})
        string(APPEND problems " ${file} includes ${included}: ${from_folder}/ may not include ${to_folder}/, a layer "
                               "above it\n")
      elseif(rank_${to} EQUAL rank_${from})
        string(APPEND problems " ${file} includes ${included}: ${from_folder}/ and ${to_folder}/ are one layer, and "
                               "neither includes the other\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "${problems} The layers are core <- nn, distributed <- optim, data <- train <- models/<model> "
                      "<- apps, web (tests/docs/check_layers.cmake); move the code to the lowest layer that needs it.")
endif()
message(STATUS "${count} files: no include goes up a layer, across one, or into apps/")
