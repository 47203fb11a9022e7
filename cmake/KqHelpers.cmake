# Small abseil-style helpers: one call per library or test binary, so each
# module's CMakeLists.txt reads as a list of targets and their dependencies.

set(KQ_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter
                -Wno-missing-field-initializers)

# kq_cc_library(NAME n HDRS ... SRCS ... DEPS ...) -> kq_<n> and alias kq::<n>.
function(kq_cc_library)
  cmake_parse_arguments(KQ "" "NAME" "HDRS;SRCS;DEPS" ${ARGN})
  if(KQ_SRCS)
    add_library(kq_${KQ_NAME} ${KQ_SRCS} ${KQ_HDRS})
    target_include_directories(kq_${KQ_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(kq_${KQ_NAME} PUBLIC ${KQ_DEPS})
    target_compile_options(kq_${KQ_NAME} PRIVATE ${KQ_WARNINGS})
  else()
    add_library(kq_${KQ_NAME} INTERFACE ${KQ_HDRS})
    target_include_directories(kq_${KQ_NAME} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(kq_${KQ_NAME} INTERFACE ${KQ_DEPS})
  endif()
  add_library(kq::${KQ_NAME} ALIAS kq_${KQ_NAME})
endfunction()

# Every test runs under kq-test-reaper (tests/testing/reaper.cc), so that no
# process a test starts outlives it, even when ctest kills the test on a
# timeout.
set(KQ_TEST_REAPER ${PROJECT_BINARY_DIR}/bin/kq-test-reaper)

# kq_add_test(NAME n COMMAND cmd args...) -> add_test under kq-test-reaper.
# A COMMAND that names an executable target runs that target's file, as
# add_test would.
function(kq_add_test)
  cmake_parse_arguments(KQ "" "NAME" "COMMAND" ${ARGN})
  list(GET KQ_COMMAND 0 _kq_program)
  if(TARGET ${_kq_program})
    list(REMOVE_AT KQ_COMMAND 0)
    list(PREPEND KQ_COMMAND $<TARGET_FILE:${_kq_program}>)
  endif()
  add_test(NAME ${KQ_NAME} COMMAND ${KQ_TEST_REAPER} ${KQ_COMMAND}
           ${KQ_UNPARSED_ARGUMENTS})
endfunction()

# kq_discover_tests(target ...) -> gtest_discover_tests(target ...), each
# case (and the listing of cases) run under kq-test-reaper.
function(kq_discover_tests target)
  set_target_properties(${target} PROPERTIES
                        CROSSCOMPILING_EMULATOR ${KQ_TEST_REAPER})
  add_dependencies(${target} kq-test-reaper)
  gtest_discover_tests(${target} ${ARGN})
endfunction()

# kq_cc_test(NAME n SRCS ... DEPS ...) -> one GoogleTest binary registered
# with ctest case by case.
function(kq_cc_test)
  cmake_parse_arguments(KQ "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${KQ_NAME} ${KQ_SRCS})
  target_link_libraries(${KQ_NAME} PRIVATE ${KQ_DEPS} GTest::gmock GTest::gtest_main)
  # A test's own code (its tables, its fixtures) is built without
  # optimization: the code under test comes from the kq_ libraries at the
  # build type's level, and GCC at -O2 spends most of a table-driven test's
  # compile optimizing the one large function that builds its table
  # (flavor_assigner_test.cc: 131 s at -O2, 47 s at -O0).
  target_compile_options(${KQ_NAME} PRIVATE ${KQ_WARNINGS} -O0)
  kq_discover_tests(${KQ_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "KQ_BUILD_DIR=${PROJECT_BINARY_DIR}")
endfunction()

# Adds each listed subdirectory that has a CMakeLists.txt, so modules can be
# grown one at a time.
function(kq_add_subdirectories)
  foreach(dir ${ARGN})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()
