# Automatic overhead culling (docs/cull.md): a -finstrument-functions
# program, not linked with sonde, whose hot tiny helper gets culled and its
# hook calls patched (tests/monitor/cull_end_to_end_test.cpp,
# tests/cli/cull_test.cpp). -O2 with noinline: the helper stays a real call
# with its own hooks, as in the programs culling is for.
add_executable(test_cull ${CMAKE_CURRENT_LIST_DIR}/cull_program.cpp)
target_compile_options(test_cull PRIVATE -O2 -finstrument-functions
  -finstrument-functions-exclude-file-list=/usr/include ${SONDE_WARNINGS})
set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_cull)
