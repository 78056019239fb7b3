# Installs libsonde, libsonde-preload (next to it: `sonde run` preloads both
# from one directory, and the preload library finds libsonde through
# $ORIGIN), their headers, the sonde CLI, a CMake package and a pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS sonde_monitor sonde_preload EXPORT sondeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS sonde_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sonde DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT sondeTargets NAMESPACE sonde:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sonde)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sondeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sondeConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sonde)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sondeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sondeConfig.cmake ${PROJECT_BINARY_DIR}/sondeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sonde)
# sonde.pc finds its prefix relative to itself, so `cmake --install --prefix` relocates it.
string(REGEX REPLACE "[^/]+" ".." SONDE_PC_TO_PREFIX "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sonde.pc.in ${PROJECT_BINARY_DIR}/sonde.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sonde.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
