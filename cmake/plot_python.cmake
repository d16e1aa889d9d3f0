# heddle_find_plot_python(<out-var> <override>): a python3 that can import matplotlib, for the plots
# of heddle-bench --plot and heddle-fw scan; <override> if not empty. Debian's python3-matplotlib
# belongs to /usr/bin/python3, which another python3 earlier in PATH (pyenv) may hide: both are
# tried. Without one, plain "python3" (the plots then fail with a message naming the package).
function(heddle_find_plot_python out override)
  set(python "${override}")
  if(NOT python)
    find_program(heddle_python_in_path python3)
    set(python python3)
    foreach(candidate ${heddle_python_in_path} /usr/bin/python3)
      execute_process(COMMAND ${candidate} -c "import matplotlib" RESULT_VARIABLE rv OUTPUT_QUIET ERROR_QUIET)
      if(rv EQUAL 0)
        set(python ${candidate})
        break()
      endif()
    endforeach()
  endif()
  set(${out} ${python} PARENT_SCOPE)
endfunction()
