# kbench_test(NAME SOURCES ... LIBS ... [LABELS ...]): a GoogleTest binary registered with CTest.
# Labels: unit, e2e, gpu (needs a GPU; run with `ctest -L gpu` on a GPU host).
# Every binary links tests/unit/common/test_main.cc: when one of its tests skips (GTEST_SKIP) and none
# fails it exits 77, and CTest reports it Skipped rather than Passed (SKIP_RETURN_CODE).
set(KBENCH_TEST_MAIN_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../tests/unit/common/test_main.cc)

# The library of that main, made once by whichever test comes first.
function(kbench_test_main_library)
  if(NOT TARGET kbench_test_main)
    add_library(kbench_test_main STATIC ${KBENCH_TEST_MAIN_SOURCE})
    target_link_libraries(kbench_test_main PUBLIC GTest::gtest)
  endif()
endfunction()

function(kbench_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  kbench_test_main_library()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest kbench_test_main)
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77)
endfunction()
