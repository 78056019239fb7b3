# Real-program robustness (issue 23): longjmp over instrumented frames,
# probes in signal handlers, fork while another thread registers
# operations, stop signals, trace_start, a thread that ends while the log
# closes, a stalled writer.
add_executable(test_longjmp_jumps ${CMAKE_CURRENT_LIST_DIR}/longjmp_jumps.c)
target_compile_options(test_longjmp_jumps PRIVATE -finstrument-functions -O2)

add_executable(test_signal_probes ${CMAKE_CURRENT_LIST_DIR}/signal_probes.c)
target_compile_options(test_signal_probes PRIVATE -finstrument-functions -O2)

add_executable(test_fork_register ${CMAKE_CURRENT_LIST_DIR}/fork_register.cpp)
target_link_libraries(test_fork_register PRIVATE sonde_monitor Threads::Threads)
target_compile_options(test_fork_register PRIVATE ${SONDE_WARNINGS})

add_executable(test_fork_exit ${CMAKE_CURRENT_LIST_DIR}/fork_exit.cpp)
target_link_libraries(test_fork_exit PRIVATE sonde_monitor)
target_compile_options(test_fork_exit PRIVATE ${SONDE_WARNINGS})

add_executable(test_endless_server ${CMAKE_CURRENT_LIST_DIR}/endless_server.c)
target_compile_options(test_endless_server PRIVATE -finstrument-functions -O2)
target_link_libraries(test_endless_server PRIVATE Threads::Threads)

add_executable(test_returns_at_close ${CMAKE_CURRENT_LIST_DIR}/returns_at_close.c)
target_compile_options(test_returns_at_close PRIVATE -finstrument-functions -O2)
target_link_libraries(test_returns_at_close PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

add_executable(test_stalled_writer ${CMAKE_CURRENT_LIST_DIR}/stalled_writer.cpp)
target_link_libraries(test_stalled_writer PRIVATE sonde_monitor)
target_compile_options(test_stalled_writer PRIVATE ${SONDE_WARNINGS})

# Linked with libsonde (it switches monitoring with the C API) and
# instrumented, so its hooks are libsonde's.
add_executable(test_missed_exit ${CMAKE_CURRENT_LIST_DIR}/missed_exit.c)
target_compile_options(test_missed_exit PRIVATE -finstrument-functions -O2)
target_link_libraries(test_missed_exit PRIVATE sonde_monitor)

set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_longjmp_jumps
  test_signal_probes test_fork_register test_fork_exit test_endless_server test_returns_at_close
  test_stalled_writer test_missed_exit)

# A function whose enter hook call cannot be patched out, in assembly for
# its layout (x86-64 only, as call-site patching is), called across a
# pattern switch; linked with libsonde, which it switches with the C API.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  enable_language(ASM)
  add_executable(test_unpatchable_enter ${CMAKE_CURRENT_LIST_DIR}/unpatchable_enter.c
    ${CMAKE_CURRENT_LIST_DIR}/unpatchable_enter.S)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/unpatchable_enter.c PROPERTIES
    COMPILE_OPTIONS "-finstrument-functions;-O2")
  target_link_libraries(test_unpatchable_enter PRIVATE sonde_monitor Threads::Threads)
  set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_unpatchable_enter)
  # One exit hook call shared by two inlined functions, one of them excluded.
  add_executable(test_shared_exit ${CMAKE_CURRENT_LIST_DIR}/shared_exit.c
    ${CMAKE_CURRENT_LIST_DIR}/shared_exit.S)
  target_link_libraries(test_shared_exit PRIVATE sonde_monitor)
  set_property(GLOBAL APPEND PROPERTY SONDE_MONITOR_TEST_PROGRAMS test_shared_exit)
endif()
