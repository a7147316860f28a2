# Runs a command (typically mpiexec ... failure_probe MODE) and checks its exit code, its
# wall time and its output. Used by ctest:
#   cmake -DCMD=<;-list> -DEXPECT=zero|nonzero -DMAX_SECONDS=<n> [-DEXPECT_OUTPUT=<regex>]
#         [-DEXPECT_ONCE=<regex>] -P run_and_check.cmake
# EXPECT_ONCE must match exactly once in stdout+stderr (e.g. an error printed by rank 0 only).
if(NOT DEFINED CMD OR NOT DEFINED EXPECT OR NOT DEFINED MAX_SECONDS)
  message(FATAL_ERROR "run_and_check.cmake needs CMD, EXPECT and MAX_SECONDS")
endif()
string(REPLACE "|" ";" cmd "${CMD}")
string(TIMESTAMP t0 "%s")
# The hard limit is twice the allowed time, so a hang is reported rather than waited out.
math(EXPR hard_limit "${MAX_SECONDS} * 2")
execute_process(COMMAND ${cmd}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err
                TIMEOUT ${hard_limit})
string(TIMESTAMP t1 "%s")
math(EXPR elapsed "${t1} - ${t0}")
message(STATUS "exit: ${rc}, ${elapsed} s\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
if(elapsed GREATER MAX_SECONDS)
  message(FATAL_ERROR "took ${elapsed} s, more than ${MAX_SECONDS} s")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "did not exit normally: ${rc}")
endif()
if(EXPECT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit code 0, got ${rc}")
endif()
if(EXPECT STREQUAL "nonzero" AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit code, got 0")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}'")
endif()
if(DEFINED EXPECT_ONCE)
  string(REGEX MATCHALL "${EXPECT_ONCE}" hits "${out}${err}")
  list(LENGTH hits n_hits)
  if(NOT n_hits EQUAL 1)
    message(FATAL_ERROR "'${EXPECT_ONCE}' appears ${n_hits} times, expected once")
  endif()
endif()
