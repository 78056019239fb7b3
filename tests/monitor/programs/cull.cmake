# Automatic overhead culling (docs/cull.md): a -finstrument-functions
# program, not linked with sonde, whose hot tiny helper gets culled and its
# hook calls patched (tests/monitor/cull_end_to_end_test.cpp,
# tests/cli/cull_test.cpp). -O2 with noinline: the helper stays a real call
# with its own hooks, as in the programs culling is for.
add_executable(test_cull ${CMAKE_CURRENT_LIST_DIR}/cull_program.cpp)
target_compile_options(test_cull PRIVATE -O2 -finstrument-functions
  -finstrument-functions-exclude-file-list=/usr/include ${SONDE_WARNINGS})
set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_cull)

# Patterns exclude, by name, functions whose address lies in a library that
# is not instrumented: std::string members inlined into instrumented code
# (tests/monitor/probes_end_to_end_test.cpp).
add_executable(test_inlined_library ${CMAKE_CURRENT_LIST_DIR}/inlined_library.cpp)
target_compile_options(test_inlined_library PRIVATE -O2 -finstrument-functions ${SONDE_WARNINGS})
# C++17: libstdc++ declares std::string an extern template only up to C++17
# (C++20's constexpr string instantiates it in the program), and it is the
# extern template whose inlined members name libstdc++'s copies.
set_target_properties(test_inlined_library PROPERTIES CXX_STANDARD 17)
set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_inlined_library)
# The same built as C++20: std::string's members are instantiated in the
# program, which exports those libstdc++ also calls (_M_create), so
# libstdc++'s own string code runs the program's instrumented copies — also
# while libsonde starts (probes_end_to_end_test.cpp).
add_executable(test_interposing_libstdcxx ${CMAKE_CURRENT_LIST_DIR}/inlined_library.cpp)
target_compile_options(test_interposing_libstdcxx PRIVATE -O2 -finstrument-functions ${SONDE_WARNINGS})
set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_interposing_libstdcxx)
