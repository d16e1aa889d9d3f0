# `cmake --install` puts the headers, the libraries, a CMake package (heddle::heddle, the
# framework's heddle::fw, the MPI engine's heddle::mpi and the active messages' heddle::am), a
# pkg-config file (the runtime) and the launcher heddle-run under the prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(heddle_fw PROPERTIES EXPORT_NAME fw)
set_target_properties(heddle_mpi PROPERTIES EXPORT_NAME mpi)
set_target_properties(heddle_am PROPERTIES EXPORT_NAME am)
install(TARGETS heddle heddle_fw heddle_mpi heddle_am EXPORT heddleTargets
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

# heddle.pc finds its prefix from where it lies (pkg-config's ${pcfiledir}), so that
# `cmake --install build --prefix P` (or DESTDIR, or moving the tree) gives a .pc pointing into P,
# not at the CMAKE_INSTALL_PREFIX of configure time.
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(HEDDLE_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(HEDDLE_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HEDDLE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH heddle_pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" heddle_pc_up "${heddle_pc_up}")
  set(HEDDLE_PC_PREFIX "\${pcfiledir}/${heddle_pc_up}")
endif()
configure_file(cmake/heddle.pc.in ${CMAKE_CURRENT_BINARY_DIR}/heddle.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heddle.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
