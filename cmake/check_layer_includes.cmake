# SPDX-License-Identifier: Apache-2.0
# Checks that one layer's files include only what the layering allows (docs/architecture.md):
#   - its own public headers (include/heddle/<layer>/), its own internals (include/heddle/<layer>/detail/)
#     and its own private headers (src/<layer>/, by a name in the same folder, never "../");
#   - the public headers of the layers below it;
#   - of a lower layer's detail/ folder, only the headers that layer offers to the layers above it
#     (heddle_layer_<layer>_offers in cmake/layers.cmake);
#   - nothing of a layer above it.
# and that it opens no other layer's detail namespace (heddle_layer_<layer>_namespace), nor one nested
# in it, however it is spelled (`namespace heddle::fw_detail`, or `namespace fw_detail` inside
# `namespace heddle`): each layer keeps its internals in its own, and a layer above names
# the offered parts of a lower one qualified, never by declaring into it.
# What each layer may use, owns, offers and calls its detail namespace is in the table of the layers,
# cmake/layers.cmake (docs/architecture.md shows it).
# Run by the build before the layer compiles (src/CMakeLists.txt, heddle_check_layer):
#   cmake -DLAYER=<layer> -DROOT=<source tree> [-DSTAMP=<file written on success>] -P check_layer_includes.cmake
# Fails with one line per bad include or namespace: file:line: what it includes or opens and why
# that is not allowed.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

if(NOT DEFINED LAYER OR NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DLAYER=<layer> -DROOT=<source tree> -P check_layer_includes.cmake")
endif()
if(NOT LAYER IN_LIST HEDDLE_LAYERS)
  message(FATAL_ERROR "check_layer_includes: unknown layer '${LAYER}' (cmake/layers.cmake has: ${HEDDLE_LAYERS})")
endif()
heddle_layer_uses(${LAYER} below)

set(globs ${ROOT}/src/${LAYER}/*.cpp ${ROOT}/src/${LAYER}/*.hpp)
foreach(folder IN LISTS heddle_layer_${LAYER}_folders)
  list(APPEND globs ${ROOT}/include/heddle/${folder}/*.hpp)
endforeach()
file(GLOB_RECURSE files ${globs})
set(problems "")
foreach(file IN LISTS files)
  get_filename_component(dir ${file} DIRECTORY)
  file(RELATIVE_PATH shown ${ROOT} ${file})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]" ENCODING UTF-8)
  # Line numbers: file(STRINGS) keeps no positions, so find each include's line afterwards.
  file(STRINGS ${file} all_lines ENCODING UTF-8)  # else a non-ASCII character splits its line
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"].*$" "\\1;\\2" parsed "${line}")
    list(GET parsed 0 delim)
    list(GET parsed 1 path)
    set(why "")
    if(path MATCHES "^heddle/([a-z_]+)\\.hpp$")
      # An umbrella header: heddle.hpp is heddle::heddle's layers (core, async and dispatch), all of
      # which must be below; <folder>.hpp is that folder's layer.
      set(name ${CMAKE_MATCH_1})
      heddle_layer_owning(${name} umbrella)
      if(name STREQUAL "heddle")
        heddle_component_closure(heddle umbrella_layers)
        foreach(umbrella_layer IN LISTS umbrella_layers)
          if(NOT umbrella_layer IN_LIST below)
            set(why "heddle.hpp includes layers that are not below the ${LAYER} layer")
          endif()
        endforeach()
      elseif(NOT umbrella)
        set(why "no layer '${name}'")
      elseif(NOT umbrella STREQUAL LAYER AND NOT umbrella IN_LIST below)
        set(why "the ${umbrella} layer is not below the ${LAYER} layer")
      endif()
    elseif(path MATCHES "^heddle/([a-z_]+)/(.*)$")
      set(folder ${CMAKE_MATCH_1})
      set(rest "${CMAKE_MATCH_2}")
      heddle_layer_owning(${folder} target_layer)
      if(NOT target_layer)
        set(why "no layer '${folder}'")
      elseif(target_layer STREQUAL LAYER)
        # its own layer: anything
      elseif(NOT target_layer IN_LIST below)
        set(why "the ${target_layer} layer is not below the ${LAYER} layer")
      elseif(rest MATCHES "(^|/)detail/")
        string(REGEX REPLACE "^heddle/" "" rel ${path})
        if(NOT rel IN_LIST heddle_layer_${target_layer}_offers)
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

  # Namespaces the file opens, each by its full name: a line that starts with `namespace X` (no
  # alias `namespace X = ...`) opens X inside what is open around it; a line `}  // namespace X`
  # (the comment every namespace here closes with) closes X and what was opened in it since. A name
  # that starts with heddle is opened at the top; a relative one opened at the top (nothing known
  # open around it) is taken to be in heddle. Whose detail namespace the full name is in, by the
  # table, must be the file's own layer's.
  file(STRINGS ${file} scopes REGEX "^[ \t]*((inline[ \t]+)?namespace[ \t]+[A-Za-z_:]+|}[ \t]*//[ \t]*namespace)" ENCODING UTF-8)
  set(open "")
  foreach(line IN LISTS scopes)
    if(line MATCHES "^[ \t]*}[ \t]*//[ \t]*namespace[ \t]+([A-Za-z_:]+)")
      set(closed ${CMAKE_MATCH_1})
      if(closed IN_LIST open)
        while(open)
          list(POP_BACK open last)
          if(last STREQUAL closed)
            break()
          endif()
        endwhile()
      endif()
      continue()
    endif()
    if(NOT line MATCHES "^[ \t]*(inline[ \t]+)?namespace[ \t]+([A-Za-z_:]+)[ \t]*([^ \t].*)?$")
      continue()
    endif()
    set(name ${CMAKE_MATCH_2})
    set(after "${CMAKE_MATCH_3}")
    if(after MATCHES "^=")
      continue()  # an alias
    endif()
    if(name MATCHES "^heddle(::|$)")
      set(open "")
    endif()
    list(APPEND open ${name})
    list(JOIN open "::" full)
    if(NOT full MATCHES "^heddle(::|$)")
      set(full "heddle::${full}")
    endif()
    if(after MATCHES "}")
      list(POP_BACK open)  # opened and closed on one line
    endif()
    set(owner "")
    foreach(layer IN LISTS HEDDLE_LAYERS)
      set(own ${heddle_layer_${layer}_namespace})
      if(full STREQUAL own OR full MATCHES "^${own}::")
        set(owner ${layer})
      endif()
    endforeach()
    if(full MATCHES "^heddle::detail(::|$)")
      set(owner "nobody")
    endif()
    if(owner AND NOT owner STREQUAL LAYER)
      list(FIND all_lines "${line}" index)
      math(EXPR number "${index} + 1")
      set(spelled "")
      if(NOT full STREQUAL name)
        set(spelled " (as ${full})")
      endif()
      if(owner STREQUAL "nobody")
        list(APPEND problems "${shown}:${number}: opens namespace ${name}${spelled}: no layer's (each has its own detail namespace)")
      else()
        list(APPEND problems "${shown}:${number}: opens namespace ${name}${spelled}: the detail namespace of the ${owner} layer, not of the ${LAYER} layer")
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
