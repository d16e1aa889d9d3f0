# SPDX-License-Identifier: Apache-2.0
# heddle_find_plot_python(<out-var> <override> [MODULES <module>...]): a python3 that can import
# every module named (matplotlib when none is), for the plots of heddle-bench --plot and heddle-fw
# scan and the hep example's tools (MODULES numpy h5py matplotlib); <override> if not empty.
# Debian's python3-matplotlib and python3-h5py belong to /usr/bin/python3, which another python3
# earlier in PATH (pyenv) may hide: both are tried. Without one, plain "python3" (the plots then fail
# with a message naming the package). <out-var>_FOUND: whether the python returned imports them all.
function(heddle_find_plot_python out override)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "MODULES")
  if(NOT arg_MODULES)
    set(arg_MODULES matplotlib)
  endif()
  list(JOIN arg_MODULES ", " modules)
  set(python "${override}")
  set(found FALSE)
  if(python)
    execute_process(COMMAND ${python} -c "import ${modules}" RESULT_VARIABLE rv OUTPUT_QUIET ERROR_QUIET)
    if(rv EQUAL 0)
      set(found TRUE)
    endif()
  else()
    find_program(heddle_python_in_path python3)
    set(python python3)
    foreach(candidate ${heddle_python_in_path} /usr/bin/python3)
      execute_process(COMMAND ${candidate} -c "import ${modules}" RESULT_VARIABLE rv OUTPUT_QUIET ERROR_QUIET)
      if(rv EQUAL 0)
        set(python ${candidate})
        set(found TRUE)
        break()
      endif()
    endforeach()
  endif()
  set(${out} ${python} PARENT_SCOPE)
  set(${out}_FOUND ${found} PARENT_SCOPE)
endfunction()
