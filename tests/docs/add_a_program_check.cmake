# docs/add-a-program.md's makemore, held to what its page says (cmake -DPROGRAM=<makemore> -DWORK=<dir> -P this):
# 1. a run with non-default flags stopped at step 300 and resumed to 600 goes on from step 300 and ends in the same
#    bytes as an unbroken run of 600 (the weights, Adam's moments and step, the batch generator, the history); a
#    resume that changes the model's width is refused;
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

# Every run with values other than the defaults (hidden 64, seed 42): a fresh run takes any flag, a resumed one the
# same values again.
set(model --hidden 96 --seed 7)
makemore_train(out --steps 300 --save half.safetensors --quiet ${model})
file(COPY_FILE ${WORK}/half.safetensors ${WORK}/at300.safetensors)
makemore_train(resumed --steps 600 --resume half.safetensors --save half.safetensors ${model})
if(NOT resumed MATCHES "^step   400 " OR resumed MATCHES "step   300 ")  # a fresh run of 600 would also match bytes
  message(FATAL_ERROR "the resumed run did not go on from step 300: its first evaluation is not step 400")
endif()
# A resumed run that would change a must_match field is refused, naming it, and leaves the checkpoint as it was.
file(COPY_FILE ${WORK}/at300.safetensors ${WORK}/kept.safetensors)
execute_process(COMMAND ${PROGRAM} train --steps 600 --resume kept.safetensors --save kept.safetensors --hidden 64
                        --seed 7
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${WORK})
if(NOT status EQUAL 2 OR NOT err MATCHES "trained with --hidden 96, not 64")
  message(FATAL_ERROR "a resume with --hidden 64 over a run of --hidden 96 was not refused (${status}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/at300.safetensors ${WORK}/kept.safetensors
                RESULT_VARIABLE changed)
if(NOT changed EQUAL 0)
  message(FATAL_ERROR "the refused resume changed its checkpoint")
endif()
makemore_train(out --save whole.safetensors --metrics-out makemore.jsonl --plot loss.svg --quiet ${model})

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
