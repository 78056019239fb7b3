# Run after a test driver is built (cmake/SondeTestSuites.cmake): lists its
# GoogleTest suites and writes one add_test per suite to SUITES_FILE.
# Inputs: TEST_EXECUTABLE, TEST_WORKING_DIR, TEST_LABEL, TEST_TIMEOUT,
# SUITES_FILE.
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  WORKING_DIRECTORY "${TEST_WORKING_DIR}"
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status
  TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}")
endif()

# The listing: a suite per unindented line ("Suite." or, for typed and
# parameterized suites, "Prefix/Suite.  # TypeParam = ..."), then its tests
# indented below it.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(current "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(current "${CMAKE_MATCH_1}")
    list(APPEND suites "${current}")
    set(count_${current} 0)
  elseif(line MATCHES "^  [^ ]" AND NOT current STREQUAL "")
    math(EXPR count_${current} "${count_${current}} + 1")
  endif()
endforeach()
if(NOT suites)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests listed no suite:\n${listing}")
endif()

set(script "")
foreach(suite IN LISTS suites)
  string(APPEND script
    "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
    "set_tests_properties([==[${suite}]==] PROPERTIES LABELS [==[${TEST_LABEL}]==]"
    " TIMEOUT ${TEST_TIMEOUT} COST ${count_${suite}}"
    " WORKING_DIRECTORY [==[${TEST_WORKING_DIR}]==])\n")
endforeach()
file(WRITE "${SUITES_FILE}" "${script}")
