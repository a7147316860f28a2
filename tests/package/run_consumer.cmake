# The test package_consumer: does an installed rotor work for a project of its own?
#   cmake -DBUILD_DIR=<rotor build> -DWORK_DIR=<scratch> -DGENERATOR=<generator>
#         -DCXX_COMPILER=<compiler> [-DLAUNCHER=<ccache>] -DBUILD_TYPE=<type> -DWITH_MPI=<ON|OFF>
#         -DTARGETS=<installed targets, ;-list> -P run_consumer.cmake
# Steps: bring the installed targets up to date (a no-op after a full build), install BUILD_DIR
# to WORK_DIR/prefix, check the exported targets carry no build-only flags, configure the consumer
# project beside this script with CMAKE_PREFIX_PATH=WORK_DIR/prefix, build it, run its ctest.
# WORK_DIR is removed at the end, whatever the outcome.
cmake_minimum_required(VERSION 3.25)
foreach(var BUILD_DIR WORK_DIR GENERATOR CXX_COMPILER BUILD_TYPE WITH_MPI TARGETS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)

# Runs the command after COMMAND; on failure removes WORK_DIR and stops with its output. SHOW
# prints the output on success too.
function(step what)
  cmake_parse_arguments(ARG "SHOW" "" "COMMAND" ${ARGN})
  message(STATUS "package_consumer: ${what}")
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE ${WORK_DIR})
    message(FATAL_ERROR "package_consumer: ${what} failed (${rc}):\n${out}")
  endif()
  if(ARG_SHOW)
    message(STATUS "${out}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
step("build ${TARGETS}" COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGETS})
step("install to ${prefix}" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The exported targets: no warning, -Werror or sanitizer flag, no build-only target, and MPI
# only in a build with it.
file(GLOB_RECURSE exported ${prefix}/*/rotor-targets*.cmake)
if(NOT exported)
  file(REMOVE_RECURSE ${WORK_DIR})
  message(FATAL_ERROR "package_consumer: no rotor-targets*.cmake under ${prefix}")
endif()
set(forbidden "-W" "-fsanitize" "rotor_options")
if(NOT WITH_MPI)
  list(APPEND forbidden "MPI::")
endif()
foreach(file IN LISTS exported)
  file(READ ${file} text)
  foreach(word IN LISTS forbidden)
    string(FIND "${text}" "${word}" at)
    if(NOT at EQUAL -1)
      file(REMOVE_RECURSE ${WORK_DIR})
      message(FATAL_ERROR "package_consumer: ${file} contains '${word}'")
    endif()
  endforeach()
endforeach()

set(configure_args -S ${CMAKE_CURRENT_LIST_DIR} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DROTOR_EXPECT_PREFIX=${prefix} -DROTOR_EXPECT_MPI=${WITH_MPI})
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
step("configure the consumer" COMMAND ${CMAKE_COMMAND} ${configure_args})
step("build the consumer" COMMAND ${CMAKE_COMMAND} --build ${consumer_build})
step("run the consumer" SHOW
     COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${consumer_build} --output-on-failure -V)
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "package_consumer: passed")
