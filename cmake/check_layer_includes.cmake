# Checks that one layer's files include only what the layering allows (docs/architecture.md):
#   - its own public headers (include/heddle/<layer>/), its own internals (include/heddle/<layer>/detail/)
#     and its own private headers (src/<layer>/, by a name in the same folder, never "../");
#   - the public headers of the layers below it;
#   - of a lower layer's detail/ folder, only the headers that layer offers to the layers above it
#     (the extension headers listed below);
#   - nothing of a layer above it.
# and that it opens no other layer's detail namespace: each layer keeps its internals in its own
# (heddle::core_detail, heddle::async_detail, heddle::dispatch_detail, heddle::offload::detail,
# heddle::fw::detail), and a layer above names the offered parts of a lower one qualified, never by
# declaring into it.
# Run by the build before the layer compiles (src/CMakeLists.txt, heddle_check_layer):
#   cmake -DLAYER=<layer> -DROOT=<source tree> [-DSTAMP=<file written on success>] -P check_layer_includes.cmake
# Fails with one line per bad include or namespace: file:line: what it includes or opens and why
# that is not allowed.
cmake_minimum_required(VERSION 3.25)

set(below_core "")
set(below_async core)
set(below_dispatch async core)
set(below_am async core)
set(below_fw dispatch async core)

# The folders of include/heddle/ each layer owns: its own, and for the core the parallel algorithms
# too (templates over task groups, header-only, with their internals in heddle::core_detail).
set(folders_core core algorithm)
set(folders_async async)
set(folders_dispatch dispatch)
set(folders_am am)
set(folders_fw fw)

# The detail headers a layer offers the layers above it, each a small interface with its contract
# in the header: how they reach what the core's public classes hold for them (access), end the
# process and check their invariants (assert), make futures of their own (future and continuation
# states, cancellation), resume coroutines (their roots), run a function when a
# future completes (completion hooks), hand records to workers (task records, detached tasks, the
# scheduling calls, the calling worker), start per-runtime engines (services), record trace events
# (trace), spin then sleep (spin_wait, futex), report an exception (exception_text) and measure time (clock, timer
# lateness); how they wait for a deadline (the async layer's deadlines and tasks scheduled at one);
# the epoll set and MPI's checks and error text (heddle::mpi's), for am's tcp and MPI backends.
# Documented in docs/architecture.md ("What a layer offers the layers above it").
set(extension_core
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
  core/detail/worker.hpp)
set(extension_async
  async/detail/deadline.hpp
  async/detail/epoll_set.hpp
  async/detail/mpi_support.hpp)
set(extension_dispatch "")

if(NOT DEFINED LAYER OR NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DLAYER=<layer> -DROOT=<source tree> -P check_layer_includes.cmake")
endif()
if(NOT DEFINED below_${LAYER})
  message(FATAL_ERROR "check_layer_includes: unknown layer '${LAYER}'")
endif()
set(layers core async dispatch am fw)

set(globs ${ROOT}/src/${LAYER}/*.cpp ${ROOT}/src/${LAYER}/*.hpp)
foreach(folder IN LISTS folders_${LAYER})
  list(APPEND globs ${ROOT}/include/heddle/${folder}/*.hpp)
endforeach()
file(GLOB_RECURSE files ${globs})
# The layer that owns include/heddle/<folder> (or the umbrella heddle/<folder>.hpp), or "" if none.
function(owner_of folder out)
  set(found "")
  foreach(layer IN LISTS layers)
    if(folder IN_LIST folders_${layer})
      set(found ${layer})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
set(problems "")
foreach(file IN LISTS files)
  get_filename_component(dir ${file} DIRECTORY)
  file(RELATIVE_PATH shown ${ROOT} ${file})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  # Line numbers: file(STRINGS) keeps no positions, so find each include's line afterwards.
  file(STRINGS ${file} all_lines)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"].*$" "\\1;\\2" parsed "${line}")
    list(GET parsed 0 delim)
    list(GET parsed 1 path)
    set(why "")
    if(path MATCHES "^heddle/([a-z_]+)\\.hpp$")
      # An umbrella header: heddle.hpp is core, async and dispatch; <folder>.hpp is that folder's layer.
      set(name ${CMAKE_MATCH_1})
      owner_of(${name} umbrella)
      if(name STREQUAL "heddle")
        if(NOT LAYER STREQUAL "fw")
          set(why "heddle.hpp includes layers that are not below the ${LAYER} layer")
        endif()
      elseif(NOT umbrella)
        set(why "no layer '${name}'")
      elseif(NOT umbrella STREQUAL LAYER AND NOT umbrella IN_LIST below_${LAYER})
        set(why "the ${umbrella} layer is not below the ${LAYER} layer")
      endif()
    elseif(path MATCHES "^heddle/([a-z_]+)/(.*)$")
      set(folder ${CMAKE_MATCH_1})
      set(rest "${CMAKE_MATCH_2}")
      owner_of(${folder} target_layer)
      if(NOT target_layer)
        set(why "no layer '${folder}'")
      elseif(target_layer STREQUAL LAYER)
        # its own layer: anything
      elseif(NOT target_layer IN_LIST below_${LAYER})
        set(why "the ${target_layer} layer is not below the ${LAYER} layer")
      elseif(rest MATCHES "(^|/)detail/")
        string(REGEX REPLACE "^heddle/" "" rel ${path})
        if(NOT rel IN_LIST extension_${target_layer})
          set(why "a private header of the ${target_layer} layer (not one it offers the layers above it)")
        endif()
      endif()
    elseif(delim STREQUAL "\"")
      # A private header: in the including file's own folder, by its bare name.
      if(path MATCHES "/" OR NOT EXISTS ${dir}/${path})
        set(why "a private header must be in the including file's own folder (src/${LAYER}/), named without a path")
      endif()
    endif()
    if(why)
      list(FIND all_lines "${line}" index)
      math(EXPR number "${index} + 1")
      list(APPEND problems "${shown}:${number}: includes ${path}: ${why}")
    endif()
  endforeach()

  # Namespaces the file opens (a line that starts with `namespace`, not the `// namespace x` that
  # closes one): a detail namespace must be the file's own layer's.
  file(STRINGS ${file} opens REGEX "^[ \t]*(inline[ \t]+)?namespace[ \t]+[A-Za-z_:]+")
  foreach(line IN LISTS opens)
    string(REGEX REPLACE "^[ \t]*(inline[ \t]+)?namespace[ \t]+([A-Za-z_:]+).*$" "\\2" name "${line}")
    set(owner "")
    if(name MATCHES "(^|::)(core|async|dispatch)_detail$")
      set(owner ${CMAKE_MATCH_2})
    elseif(name MATCHES "(^|::)offload::detail$")
      set(owner am)
    elseif(name MATCHES "(^|::)fw::detail$")
      set(owner fw)
    elseif(name STREQUAL "heddle::detail")
      set(owner "nobody")
    endif()
    if(owner AND NOT owner STREQUAL LAYER)
      list(FIND all_lines "${line}" index)
      math(EXPR number "${index} + 1")
      if(owner STREQUAL "nobody")
        list(APPEND problems "${shown}:${number}: opens namespace ${name}: no layer's (each has its own detail namespace)")
      else()
        list(APPEND problems "${shown}:${number}: opens namespace ${name}: the detail namespace of the ${owner} layer, not of the ${LAYER} layer")
      endif()
    endif()
  endforeach()
endforeach()

if(problems)
  # One unwrapped line each (FATAL_ERROR's text is re-flowed), then the failure.
  foreach(problem IN LISTS problems)
    message(NOTICE "${problem}")
  endforeach()
  message(FATAL_ERROR "the ${LAYER} layer includes or opens what its layering does not allow (docs/architecture.md)")
endif()
if(DEFINED STAMP)
  file(WRITE ${STAMP} "")
endif()
