# cmake -DPROBE=<skip_probe_test> -P skip_check.cmake: the exit status of the probe binary under three
# filters, each against what CTest must see (see test_main.cc).
foreach(c "SkipProbe.Skips=77" "SkipProbe.Skips:SkipProbe.Passes=77" "SkipProbe.Passes=0" "SkipProbe.Skips:SkipProbe.Fails=1")
  string(REPLACE "=" ";" parts "${c}")
  list(GET parts 0 filter)
  list(GET parts 1 want)
  execute_process(COMMAND ${PROBE} --gtest_filter=${filter} RESULT_VARIABLE got OUTPUT_QUIET ERROR_QUIET)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "--gtest_filter=${filter}: exit status ${got}, expected ${want}")
  endif()
  message(STATUS "--gtest_filter=${filter}: exit status ${got}, as expected")
endforeach()
