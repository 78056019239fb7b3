# One ctest test per GoogleTest suite of a test driver, not one per test.
#
# Why: every ctest test is a process start, and a sanitized driver is a
# 100+ MB program whose start, GoogleTest set-up and leak check at exit
# cost about 0.2 s. Run per test, analysis_tests' 245 tests took 70
# test-seconds under ASan; the same binary run once took 21 s (2026-12-04,
# DEVELOPERS.md "Where CI's time goes"). A suite is what one fixture and one
# topic share, so it is still a small, nameable unit: `ctest -R '^Robustness$'`
# runs one, and a failing suite's output names the failing tests.
#
# The suites are listed after each build of the driver (--gtest_list_tests),
# like gtest_discover_tests' POST_BUILD mode, and written to a file ctest
# includes. Each suite's COST is its number of tests, so that on a first run
# (no timing data yet) the large suites start first instead of ending last.
#
# sonde_add_test_suites(<target> LABEL <label> [TIMEOUT <seconds>])
function(sonde_add_test_suites target)
  cmake_parse_arguments(arg "" "LABEL;TIMEOUT" "" ${ARGN})
  # Five minutes: the longest suite takes about 40 s under ASan and 70 s
  # under TSan, and a hung test should not hold CI for longer.
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  set(suites_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}"
      -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
      -D "TEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR}"
      -D "TEST_LABEL=${arg_LABEL}"
      -D "TEST_TIMEOUT=${arg_TIMEOUT}"
      -D "SUITES_FILE=${suites_file}"
      -P "${PROJECT_SOURCE_DIR}/cmake/sonde_list_test_suites.cmake"
    BYPRODUCTS "${suites_file}"
    VERBATIM)
  # A driver the build did not make (the sanitizer builds make only some)
  # shows as one failing test, as gtest_discover_tests does, never as none.
  file(WRITE "${include_file}"
    "if(EXISTS \"${suites_file}\")\n"
    "  include(\"${suites_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
