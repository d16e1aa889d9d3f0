# SPDX-License-Identifier: Apache-2.0
# The one table of heddle's layers: what each may use, the folders it owns, its detail namespace,
# the detail headers it offers the layers above it, and the libraries (package components) it is
# shipped as with their dependencies. Everything that states one of these facts reads them here:
#   - the layer check (cmake/check_layer_includes.cmake), run before each layer compiles;
#   - the libraries' link lines and the check's inputs (src/CMakeLists.txt, heddle_layer);
#   - the installed package: heddleConfig.cmake's components, the pkg-config files, which detail
#     headers stay uninstalled (cmake/install.cmake);
#   - the check's own test (tests/build/layer_check_test.sh), which asks this file for the layers;
#   - docs/architecture.md, whose tables and lists tests/build/architecture_doc_test.cmake compares
#     with this file, failing on any difference.
# Plain set()s, read by include() in a project and in cmake -P scripts alike. Run as a script, it
# prints one of its variables: cmake -DPRINT=HEDDLE_LAYERS -P cmake/layers.cmake

# The layers, lowest first.
set(HEDDLE_LAYERS core async dispatch am fw)

# heddle_layer_<layer>_on: the layers it builds on directly (its library links theirs, PUBLIC); it
# may use these and everything they may use (heddle_layer_uses).
set(heddle_layer_core_on "")
set(heddle_layer_async_on core)
set(heddle_layer_dispatch_on async)
set(heddle_layer_am_on async)
set(heddle_layer_fw_on dispatch)

# heddle_layer_<layer>_folders: the folders of include/heddle/ it owns (besides its src/<layer>/).
# The core owns the parallel algorithms too: templates over task groups, header-only, with their
# internals in the core's detail namespace.
set(heddle_layer_core_folders core algorithm)
set(heddle_layer_async_folders async)
set(heddle_layer_dispatch_folders dispatch)
set(heddle_layer_am_folders am)
set(heddle_layer_fw_folders fw)

# heddle_layer_<layer>_namespace: its detail namespace, which only its own files open (nor any
# namespace nested in it). heddle::detail is no layer's.
set(heddle_layer_core_namespace heddle::core_detail)
set(heddle_layer_async_namespace heddle::async_detail)
set(heddle_layer_dispatch_namespace heddle::dispatch_detail)
set(heddle_layer_am_namespace heddle::am_detail)
set(heddle_layer_fw_namespace heddle::fw_detail)

# heddle_layer_<layer>_offers: the headers of its detail/ folders that the layers above it may
# include, each a small interface with its contract in the header (docs/architecture.md, "What a
# layer offers the layers above it", says what each is for). Any other detail/ header is the
# layer's own.
set(heddle_layer_core_offers
  core/detail/access.hpp
  core/detail/assert.hpp
  core/detail/cancel_state.hpp
  core/detail/clock.hpp
  core/detail/completion_hook.hpp
  core/detail/continuation_state.hpp
  core/detail/coroutine.hpp
  core/detail/detached_task.hpp
  core/detail/exception_text.hpp
  core/detail/futex.hpp
  core/detail/future_state.hpp
  core/detail/scheduling.hpp
  core/detail/service.hpp
  core/detail/spin_wait.hpp
  core/detail/task_record.hpp
  core/detail/trace.hpp
  core/detail/trace_extension.hpp
  core/detail/worker.hpp)
set(heddle_layer_async_offers
  async/detail/deadline.hpp
  async/detail/epoll_set.hpp
  async/detail/mpi_support.hpp)
set(heddle_layer_dispatch_offers "")
set(heddle_layer_am_offers "")
set(heddle_layer_fw_offers "")

# heddle_layer_<layer>_uninstalled: the offered headers that only the layers' compiled code
# includes (no installed header does), so `cmake --install` leaves them out; the install test
# checks that no installed header includes one.
set(heddle_layer_core_uninstalled core/detail/completion_hook.hpp core/detail/exception_text.hpp core/detail/service.hpp)
set(heddle_layer_async_uninstalled async/detail/epoll_set.hpp async/detail/mpi_support.hpp)
# The configuration reader's key tables and the JSON behind a parameter_set, on nlohmann-json (a
# private dependency of heddle::fw): for the framework's sources, its tests and its built-in
# plugin's (src/fw/study/), not for installed code.
set(heddle_layer_fw_uninstalled fw/detail/config_keys.hpp fw/detail/parameter_set_json.hpp)

# The libraries, each a component of the installed CMake package (heddle::<component>) with a
# pkg-config file (heddle-<component>.pc; heddle.pc for heddle). Most are a layer's; heddle::mpi is
# the async layer's MPI engine, a library of its own so that nothing else links MPI (its sources are
# the async layer's and checked as such), built only where MPI is found; heddle::heddle is core +
# async + dispatch, what most programs use. In the order a consumer imports them: the layers', with
# mpi after async, then heddle.
set(HEDDLE_COMPONENTS ${HEDDLE_LAYERS})
list(FIND HEDDLE_COMPONENTS async heddle_async_at)
math(EXPR heddle_async_at "${heddle_async_at} + 1")
list(INSERT HEDDLE_COMPONENTS ${heddle_async_at} mpi)
list(APPEND HEDDLE_COMPONENTS heddle)
unset(heddle_async_at)
# heddle_component_<c>_needs: the components it links directly: a layer's library those of the layers
# it builds on (heddle_layer_<layer>_on), and where MPI is built (HEDDLE_HAVE_MPI, known once
# src/async/ is configured) am's links heddle::mpi too, for its MPI backend.
foreach(heddle_layer IN LISTS HEDDLE_LAYERS)
  set(heddle_component_${heddle_layer}_needs ${heddle_layer_${heddle_layer}_on})
endforeach()
unset(heddle_layer)
set(heddle_component_mpi_needs async)
if(HEDDLE_HAVE_MPI)
  list(APPEND heddle_component_am_needs mpi)
endif()
set(heddle_component_heddle_needs dispatch)
# heddle_component_<c>_find: what its users must find besides heddle (its libraries may be static:
# their private dependencies are their users' too), as find_dependency's arguments, one call per
# ';'-free entry ('|' separates the arguments).
set(heddle_component_core_find Threads)
set(heddle_component_mpi_find "MPI|COMPONENTS|CXX")
set(heddle_component_fw_find "nlohmann_json|3")
# heddle_component_<c>_pc_requires and _pc_libs: its pkg-config file's Requires besides the heddle
# components it needs, and its Libs besides its own library. liburing is linked by name where found
# (HEDDLE_HAVE_LIBURING); fw opens plugins with the dynamic loader (CMAKE_DL_LIBS, empty where the C
# library has it).
set(heddle_component_core_pc_libs -pthread)
if(HEDDLE_HAVE_LIBURING)
  set(heddle_component_async_pc_requires liburing)
endif()
set(heddle_component_mpi_pc_requires mpi-c)
set(heddle_component_fw_pc_requires nlohmann_json)
foreach(heddle_dl IN LISTS CMAKE_DL_LIBS)
  list(APPEND heddle_component_fw_pc_libs -l${heddle_dl})
endforeach()
unset(heddle_dl)

# heddle_closure(<out> <start> <prefix> <suffix>): everything <start> reaches through the lists
# ${<prefix><name><suffix>} (a table above: the layers a layer builds on, the components a component
# needs), directly or not, nearest first (<start>'s own list, then theirs), without repeats.
function(heddle_closure out start prefix suffix)
  set(result "")
  set(todo ${${prefix}${start}${suffix}})
  while(todo)
    list(POP_FRONT todo next)
    if(NOT next IN_LIST result)
      list(APPEND result ${next})
      list(APPEND todo ${${prefix}${next}${suffix}})
    endif()
  endwhile()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# heddle_layer_uses(<layer> <out>): every layer <layer> may use, nearest first (its _on layers, then
# theirs). A macro, so that heddle_closure sets <out> in the caller's scope.
macro(heddle_layer_uses layer out)
  heddle_closure(${out} ${layer} heddle_layer_ _on)
endmacro()

# heddle_component_closure(<component> <out>): the components <component> needs, directly or not,
# nearest first (what a consumer of it must import).
macro(heddle_component_closure component out)
  heddle_closure(${out} ${component} heddle_component_ _needs)
endmacro()

# heddle_layer_owning(<folder> <out>): the layer that owns include/heddle/<folder>, or "" if none.
function(heddle_layer_owning folder out)
  set(found "")
  foreach(layer IN LISTS HEDDLE_LAYERS)
    if(folder IN_LIST heddle_layer_${layer}_folders)
      set(found ${layer})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED PRINT)
  string(REPLACE ";" " " heddle_print "${${PRINT}}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${heddle_print}")
endif()
