# kbench_test(NAME SOURCES ... LIBS ... [LABELS ...]): a GoogleTest binary registered with CTest.
# Labels: unit, e2e, gpu (needs a GPU; run with `ctest -L gpu` on a GPU host).
# Every binary links tests/unit/common/test_main.cc: when one of its tests skips (GTEST_SKIP) and none
# fails it exits 77, and CTest reports it Skipped rather than Passed (SKIP_RETURN_CODE).
set(KBENCH_TEST_MAIN_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../tests/unit/common/test_main.cc)

# Triton's Python: python3 when it imports triton, else the private environment that
# scripts/install-deps.sh makes where Debian's python3 is externally managed. Tests (and the runners
# they start) find it as KBENCH_PYTHON, as a worker would be told.
set(KBENCH_TEST_PYTHON_ENV /opt/kbench-tools/python/bin/python3)
if(EXISTS ${KBENCH_TEST_PYTHON_ENV})
  execute_process(COMMAND python3 -c "import triton" RESULT_VARIABLE kbench_system_triton OUTPUT_QUIET ERROR_QUIET)
  if(NOT kbench_system_triton EQUAL 0)
    set(KBENCH_TEST_PYTHON ${KBENCH_TEST_PYTHON_ENV})
  endif()
endif()

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
  if(KBENCH_TEST_PYTHON)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "KBENCH_PYTHON=${KBENCH_TEST_PYTHON}")
  endif()
endfunction()
