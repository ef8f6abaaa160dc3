# docs/add-a-program.md's makemore, held to what its page says (cmake -DPROGRAM=<makemore> -DWORK=<dir> -P this):
# 1. a run stopped at step 300 and resumed to 600 goes on from step 300 and ends in the same bytes as an unbroken run
#    of 600 (the weights, Adam's moments and step, the batch generator, the history);
# 2. the unbroken run's metrics stream and plot are written, and its last validation loss is below three quarters of
#    a uniform guess's (ln 19 = 2.944, so 2.208): the model learned the names.
foreach(var PROGRAM WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "add_a_program_check.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# makemore_train(<output variable> <flags...>): the run's stdout; its failure fails the check.
function(makemore_train output)
  execute_process(COMMAND ${PROGRAM} train ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${WORK})
  string(REPLACE ";" " " flags "${ARGN}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "makemore train ${flags} failed (${status}):\n${out}\n${err}")
  endif()
  message(STATUS "makemore train ${flags}\n${out}")
  set(${output} "${out}" PARENT_SCOPE)
endfunction()

makemore_train(out --steps 300 --save half.safetensors --quiet)
makemore_train(resumed --steps 600 --resume half.safetensors --save half.safetensors)
if(NOT resumed MATCHES "^step   400 " OR resumed MATCHES "step   300 ")  # a fresh run of 600 would also match bytes
  message(FATAL_ERROR "the resumed run did not go on from step 300: its first evaluation is not step 400")
endif()
makemore_train(out --save whole.safetensors --metrics-out makemore.jsonl --plot loss.svg --quiet)

execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/half.safetensors ${WORK}/whole.safetensors
                RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "the run resumed at step 300 ended in other bytes than the unbroken run")
endif()
foreach(file makemore.jsonl loss.svg)
  if(NOT EXISTS ${WORK}/${file})
    message(FATAL_ERROR "makemore train wrote no ${file}")
  endif()
endforeach()
file(STRINGS ${WORK}/makemore.jsonl lines)
list(LENGTH lines evaluations)
if(NOT evaluations EQUAL 6)  # every 100 of 600 steps
  message(FATAL_ERROR "makemore.jsonl holds ${evaluations} evaluations, not 6")
endif()
list(GET lines -1 last)
string(JSON loss GET "${last}" val_loss)
if(NOT loss LESS 2.208)
  message(FATAL_ERROR "the validation loss ended at ${loss}, not below 2.208 (3/4 of a uniform guess's)")
endif()
message(STATUS "resumed == unbroken; validation loss ${loss}")
