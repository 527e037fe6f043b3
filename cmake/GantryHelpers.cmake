# Helpers that keep every target's declaration to one call.
#
#   gantry_add_library(NAME SRCS a.cc b.cc DEPS dep1 dep2)
#     A static library; include root is the repository root, so headers are
#     included as "src/api/pod.h" or "gantry/status.h" (include/).
#   gantry_add_test(NAME SRCS a_test.cc DEPS lib1 [LABELS unit])
#     A GoogleTest binary registered with ctest as one test.
#   gantry_add_plugin(NAME SRCS ... DEPS ...)
#     A plugin library named gantry_plugin_<NAME>.
include_guard(GLOBAL)

function(gantry_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC
    "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/include" "${PROJECT_BINARY_DIR}")
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

function(gantry_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  gantry_add_library(gantry_plugin_${name} SRCS ${ARG_SRCS} DEPS gantry_framework ${ARG_DEPS})
endfunction()

function(gantry_add_test name)
  if(NOT GANTRY_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "SRCS;DEPS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE
    "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/include" "${PROJECT_BINARY_DIR}")
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  if(TARGET gantry_tsan_absl)
    target_link_libraries(${name} PRIVATE gantry_tsan_absl)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/test")
  add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS}
           WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
