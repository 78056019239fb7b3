# The fuzz harnesses as ordinary test programs (fuzz/replay_main.cpp): each
# replays its seeds, the inputs that once crashed it (fuzz/regressions/),
# and truncations and byte mutations of them. In the ASan+UBSan build of
# scripts/test.sh they run under the sanitizers with their layer's tests;
# libFuzzer's coverage-guided search stays in scripts/fuzz.sh (clang).
set(SONDE_FUZZ_DIR ${PROJECT_SOURCE_DIR}/fuzz)
set(SONDE_KIEKER_FIXTURES ${PROJECT_SOURCE_DIR}/tests/data/kieker)

# The replay main() and its seed converters, compiled once for every
# harness (it was compiled seven times per build: about 35 s of CPU).
add_library(sonde_fuzz_replay_main OBJECT ${SONDE_FUZZ_DIR}/replay_main.cpp)
target_compile_options(sonde_fuzz_replay_main PRIVATE ${SONDE_WARNINGS})
target_include_directories(sonde_fuzz_replay_main PRIVATE ${PROJECT_SOURCE_DIR}/src
  ${PROJECT_SOURCE_DIR}/include ${SONDE_FUZZ_DIR})
target_link_libraries(sonde_fuzz_replay_main PUBLIC sonde_format)

# sonde_fuzz_replay(HARNESS LABEL LIBRARIES... ARGS args...)
function(sonde_fuzz_replay harness label)
  # A build that leaves its layer's tests to a sanitizer build
  # (tests/CMakeLists.txt) leaves its replays too.
  if(label IN_LIST SONDE_TESTS_LEFT_TO_SANITIZERS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 replay "" "" "LIBRARIES;ARGS;SOURCES")
  set(target ${harness}_replay)
  add_executable(${target} ${SONDE_FUZZ_DIR}/${harness}.cpp ${replay_SOURCES})
  target_compile_options(${target} PRIVATE ${SONDE_WARNINGS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/include ${SONDE_FUZZ_DIR})
  target_link_libraries(${target} PRIVATE sonde_fuzz_replay_main ${replay_LIBRARIES})
  set(inputs ${replay_ARGS})
  if(IS_DIRECTORY ${SONDE_FUZZ_DIR}/regressions/${harness})
    list(APPEND inputs ${SONDE_FUZZ_DIR}/regressions/${harness})
  endif()
  add_test(NAME FuzzReplay.${harness} COMMAND ${target} ${inputs})
  # COST: on a fresh clone ctest has no timings and starts the costliest
  # first (a GoogleTest suite's cost is its number of tests,
  # cmake/SondeTestSuites.cmake). With the default cost the replays (up to
  # 15 s each under ASan) started last, and fuzz_native ran alone for its
  # last 11 s (2026-12-06).
  set_tests_properties(FuzzReplay.${harness} PROPERTIES LABELS ${label} TIMEOUT 600 COST 10)
  set_property(GLOBAL APPEND PROPERTY SONDE_FUZZ_REPLAYS ${target})
endfunction()

set(small_logs ${SONDE_KIEKER_FIXTURES}/events-2014/log ${SONDE_KIEKER_FIXTURES}/events-2017-singleton/log)
foreach(layout kieker-dat kieker-bin native kieker-tcp)
  set(seeds_${layout})
  foreach(log ${small_logs})
    list(APPEND seeds_${layout} --kieker-seed ${log} ${layout})
  endforeach()
endforeach()

sonde_fuzz_replay(fuzz_kieker_dat format LIBRARIES sonde_analysis sonde_format ARGS ${seeds_kieker-dat})
sonde_fuzz_replay(fuzz_kieker_bin format LIBRARIES sonde_analysis sonde_format ARGS ${seeds_kieker-bin})
sonde_fuzz_replay(fuzz_native format LIBRARIES sonde_analysis sonde_format ARGS ${seeds_native})
sonde_fuzz_replay(fuzz_kieker_tcp format LIBRARIES sonde_analysis sonde_format ARGS ${seeds_kieker-tcp})
sonde_fuzz_replay(fuzz_openxtrace format LIBRARIES sonde_analysis sonde_format
  ARGS ${PROJECT_SOURCE_DIR}/tests/data/openxtrace)
# The monitor's parsers are compiled in: libsonde exports only its API.
sonde_fuzz_replay(fuzz_config monitor LIBRARIES sonde_format
  SOURCES ${PROJECT_SOURCE_DIR}/src/monitor/config.cpp ${PROJECT_SOURCE_DIR}/src/monitor/patterns.cpp
  ARGS ${SONDE_FUZZ_DIR}/seeds/fuzz_config)
get_property(readers GLOBAL PROPERTY SONDE_FUZZ_REPLAYS)
# What the sanitized stage of scripts/test.sh builds (diagnosis stays out of it).
add_custom_target(fuzz_replays DEPENDS ${readers})
if(TARGET sonde_diagnose)
  sonde_fuzz_replay(fuzz_diagnose_inputs diagnose LIBRARIES sonde_diagnose
    ARGS ${PROJECT_SOURCE_DIR}/examples/shop/profile.json)
endif()
