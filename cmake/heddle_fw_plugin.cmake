# SPDX-License-Identifier: Apache-2.0
# heddle_fw_add_plugin(<target> <sources>...): a plugin of module types for heddle-fw, a shared
# library that heddle::fw::plugin_loader opens with dlopen when a configuration names one of its
# types (include/heddle/fw/plugins.hpp). Its sources register their modules with
# HEDDLE_FW_MODULE(ClassName); install or build the library into a directory of the plugin path
# (heddle-fw --plugin-path DIR, or HEDDLE_FW_PLUGIN_PATH).
#
# What the target gets:
#   - add_library(<target> MODULE ...), named lib<target>.so: a library to open, not to link;
#   - heddle::fw linked, which must be the shared heddle (the default; not -DBUILD_SHARED_LIBS=OFF): a plugin on a
#     static heddle would carry a second copy of the framework, with its own registry;
#   - hidden symbols: the plugin exports nothing, and two plugins may define classes of one name;
#   - with GCC, -fno-gnu-unique: GCC gives the static variables of inline functions, inline
#     variables and templates' static members of default visibility the binding STB_GNU_UNIQUE,
#     and glibc never unloads a library whose such symbol it bound first, so the loader could not
#     unload the plugin at its end. Hidden symbols are not enough: the standard library's are of
#     default visibility (a plugin calling std::to_string(unsigned long long) stays loaded without
#     the flag, and unloads with it). clang never emits that binding, and has no such flag.
#
# Defined by heddle's own build and by find_package(heddle COMPONENTS fw).
function(heddle_fw_add_plugin target)
  if(NOT ARGN)
    message(FATAL_ERROR "heddle_fw_add_plugin(${target}): no sources")
  endif()
  if(NOT TARGET heddle::fw)
    message(FATAL_ERROR "heddle_fw_add_plugin(${target}): heddle::fw is not defined (find_package(heddle CONFIG REQUIRED COMPONENTS fw))")
  endif()
  get_target_property(_heddle_fw_type heddle::fw TYPE)
  if(NOT _heddle_fw_type STREQUAL "SHARED_LIBRARY")
    message(FATAL_ERROR "heddle_fw_add_plugin(${target}): heddle::fw is a ${_heddle_fw_type}; plugins need the shared "
                        "heddle (build heddle without -DBUILD_SHARED_LIBS=OFF)")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE heddle::fw)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
endfunction()
