# SPDX-License-Identifier: Apache-2.0
# `cmake --install` puts under the prefix: the headers, one library per layer, a CMake package with
# one component per layer (find_package(heddle CONFIG REQUIRED COMPONENTS core async dispatch mpi
# am fw); each component finds only its own dependencies, and no component means heddle::heddle),
# one pkg-config file per component (heddle-core.pc, ..., heddle.pc) and the tools users run.
include(CMakePackageConfigHelpers)

get_property(heddle_components GLOBAL PROPERTY HEDDLE_LAYERS)  # in build order: core async [mpi] dispatch am fw
list(APPEND heddle_components heddle)
set(heddle_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/heddle)

# Every public header is installed, and the internals in <layer>/detail/ that the public headers'
# inline code includes (parallel_pipeline's serial stages take the core's spin lock, and with it its
# futex header); src/ stays private, and so do the detail headers only the layers' compiled code uses
# (heddle_layer_<layer>_uninstalled in cmake/layers.cmake: a runtime's services, exception text,
# completion hooks, the epoll set, the MPI checks). The install test compiles every installed header
# against the installed tree alone.
# heddle::mpi's header goes only with heddle::mpi.
include(${PROJECT_SOURCE_DIR}/cmake/layers.cmake)  # the components and what they need, which offered headers stay
set(heddle_not_installed "")
foreach(layer IN LISTS HEDDLE_LAYERS)
  foreach(header IN LISTS heddle_layer_${layer}_uninstalled)
    string(REPLACE "." "\\." header "${header}")
    list(APPEND heddle_not_installed "(${header}$)")
  endforeach()
endforeach()
if(NOT HEDDLE_HAVE_MPI)
  list(APPEND heddle_not_installed "(async/mpi\\.hpp$)")
endif()
list(JOIN heddle_not_installed "|" heddle_not_installed)
install(DIRECTORY include/heddle DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} REGEX "${heddle_not_installed}" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/heddle/core/build_config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heddle/core)

foreach(component IN LISTS heddle_components)
  set(target heddle_${component})
  if(component STREQUAL "heddle")
    set(target heddle)
  endif()
  install(TARGETS ${target} EXPORT heddle-${component}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT heddle-${component} NAMESPACE heddle:: FILE heddle-${component}-targets.cmake
    DESTINATION ${heddle_cmake_dir})
endforeach()

# The configuration file learns which components this build has, which each needs (directly or not)
# and what their users must find besides heddle's own (with static libraries, a layer's private
# dependencies are its users' too), all from the table (cmake/layers.cmake).
set(HEDDLE_PACKAGE_COMPONENTS "${heddle_components}")
list(JOIN HEDDLE_COMPONENTS " " HEDDLE_PACKAGE_ORDER)
set(HEDDLE_PACKAGE_TABLE "")
foreach(component IN LISTS heddle_components)
  heddle_component_closure(${component} needs)
  string(APPEND HEDDLE_PACKAGE_TABLE "set(_heddle_needs_${component} \"${needs}\")\n")
  set(finds "")
  foreach(find IN LISTS heddle_component_${component}_find)
    string(REPLACE "|" " " find "${find}")
    list(APPEND finds "${find}")
  endforeach()
  list(JOIN finds "|" finds)
  string(APPEND HEDDLE_PACKAGE_TABLE "set(_heddle_find_${component} \"${finds}\")\n")
endforeach()
configure_package_config_file(cmake/heddleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/heddleConfig.cmake
  INSTALL_DESTINATION ${heddle_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/heddleConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
# heddle_fw_add_plugin (cmake/heddle_fw_plugin.cmake), which the configuration file includes with
# the fw component.
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heddleConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/heddleConfigVersion.cmake
              cmake/heddle_fw_plugin.cmake
  DESTINATION ${heddle_cmake_dir})

# The .pc files find their prefix from where they lie (pkg-config's ${pcfiledir}), so that
# `cmake --install build --prefix P` (or DESTDIR, or moving the tree) gives files pointing into P,
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

# heddle_pc(<file name> <component> <Requires> <Libs>)
function(heddle_pc name component requires libs)
  set(HEDDLE_PC_NAME ${name})
  set(HEDDLE_PC_DESCRIPTION "heddle ${component}: ${PROJECT_DESCRIPTION}")
  set(HEDDLE_PC_REQUIRES "${requires}")
  set(HEDDLE_PC_LIBS "${libs}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/heddle.pc.in ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# One file a component; its Requires: the heddle components it needs, then the table's
# pkg-config packages; its Libs: its own library (heddle.pc has none), then the table's.
foreach(component IN LISTS heddle_components)
  set(requires "")
  foreach(need IN LISTS heddle_component_${component}_needs)
    list(APPEND requires heddle-${need})
  endforeach()
  list(APPEND requires ${heddle_component_${component}_pc_requires})
  list(JOIN requires ", " requires)
  set(libs "")
  if(NOT component STREQUAL "heddle")
    set(libs "-L\${libdir} -lheddle_${component}")
  endif()
  foreach(lib IN LISTS heddle_component_${component}_pc_libs)
    string(APPEND libs " ${lib}")
  endforeach()
  string(STRIP "${libs}" libs)
  if(component STREQUAL "heddle")
    heddle_pc(heddle ${component} "${requires}" "${libs}")
  else()
    heddle_pc(heddle-${component} ${component} "${requires}" "${libs}")
  endif()
endforeach()

# The tools a user runs, and what heddle-fw reads: its configuration reference and example
# configurations (the ones the framework's tests run on).
install(TARGETS heddle-fw heddle-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES docs/fw-config.md DESTINATION ${CMAKE_INSTALL_DATADIR}/heddle)
install(DIRECTORY tests/fw/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/heddle/examples FILES_MATCHING PATTERN "*.json")
