# `cmake --install` puts the headers, the library, a CMake package (heddle::heddle) and a
# pkg-config file under the prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS heddle EXPORT heddleTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/heddle DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT heddleTargets NAMESPACE heddle:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heddle)

configure_package_config_file(cmake/heddleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/heddleConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heddle)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/heddleConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heddleConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/heddleConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heddle)

configure_file(cmake/heddle.pc.in ${CMAKE_CURRENT_BINARY_DIR}/heddle.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heddle.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
