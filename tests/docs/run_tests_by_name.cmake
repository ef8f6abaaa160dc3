# cmake -DPROGRAM=<GoogleTest program> -DTESTS=<Suite.Name>:<Suite.Name>... -P run_tests_by_name.cmake
# Runs exactly the named tests and passes only if each of them ran and passed. A filter alone is not enough:
# GoogleTest 1.12 exits 0 when its filter matches no test (--gtest_fail_if_no_test_selected came later), so a test
# renamed in a guide, or never registered, would pass unseen.
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project's CMake
if(NOT PROGRAM OR NOT TESTS)
  message(FATAL_ERROR "usage: cmake -DPROGRAM=<program> -DTESTS=<Suite.Name>:... -P run_tests_by_name.cmake")
endif()
execute_process(COMMAND ${PROGRAM} --gtest_filter=${TESTS} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
message("${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --gtest_filter=${TESTS} failed (${status})")
endif()
string(REPLACE ":" ";" names "${TESTS}")
set(missing "")
foreach(name ${names})
  string(FIND "${output}" "[       OK ] ${name} (" at)
  if(at EQUAL -1)
    list(APPEND missing ${name})
  endif()
endforeach()
if(missing)
  list(JOIN missing ", " missing)
  message(FATAL_ERROR "these tests did not run: ${missing}")
endif()
