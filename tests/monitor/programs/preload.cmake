# libsonde without interposers, libsonde-preload with them, and probes
# compiled out (preload_split_test.cpp, docs/probes.md).

# The same program linked with libsonde only, and with libsonde-preload
# first (ahead of libsqlite3, whose sqlite3_* it interposes).
add_executable(test_split_libsonde preload_split.cpp)
target_link_libraries(test_split_libsonde PRIVATE sonde_monitor SQLite::SQLite3 Threads::Threads
  ${CMAKE_DL_LIBS})
add_executable(test_split_preload preload_split.cpp)
target_link_libraries(test_split_preload PRIVATE sonde_preload sonde_monitor SQLite::SQLite3
  Threads::Threads ${CMAKE_DL_LIBS})

# SONDE_ENABLE=0: every probe compiles to nothing, so these link without
# libsonde; only its headers are used.
add_executable(test_sonde_disabled sonde_disabled.cpp)
add_executable(test_sonde_disabled_c sonde_disabled_c.c)
set_target_properties(test_sonde_disabled_c PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
foreach(target test_sonde_disabled test_sonde_disabled_c)
  target_compile_definitions(${target} PRIVATE SONDE_ENABLE=0)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include)
endforeach()

foreach(target test_split_libsonde test_split_preload test_sonde_disabled)
  target_compile_options(${target} PRIVATE ${SONDE_WARNINGS})
endforeach()
# SONDE_WARNINGS holds a C++-only flag that gcc merely warns about in C.
set(SONDE_DISABLED_C_WARNINGS ${SONDE_WARNINGS})
list(REMOVE_ITEM SONDE_DISABLED_C_WARNINGS -Wnon-virtual-dtor)
target_compile_options(test_sonde_disabled_c PRIVATE ${SONDE_DISABLED_C_WARNINGS})

set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS
  test_split_libsonde test_split_preload test_sonde_disabled test_sonde_disabled_c)
