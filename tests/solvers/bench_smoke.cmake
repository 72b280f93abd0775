# Runs tdma-bench on tiny sizes and checks its JSON lines (tests/solvers):
# every backend in each mode and precision, and one count of more than six
# digits (40 x 123457 x 3 = 14814840 bytes, which was written 1.48148e+07).
set(runs "--systems|123457|--levels|3|--backend|simd")
foreach(mode "" "--fused")
  foreach(prec double single)
    list(APPEND runs "--systems|37|--levels|7|--precision|${prec}|--backend|all|--random-depths|${mode}")
  endforeach()
endforeach()
foreach(run ${runs})
  string(REPLACE "|" ";" args "${run}")
  execute_process(
    COMMAND ${BENCH} ${args} --threads 2 --repeats 2 --stream-mb 8 --json
    OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tdma-bench ${args} failed (${rc}):\n${out}")
  endif()
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json "${out}")
  execute_process(COMMAND ${PYTHON} ${CHECK} ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tdma-bench ${args}: bad JSON:\n${out}")
  endif()
endforeach()
# Bad arguments: exit status 2.
foreach(args "--systems;0;--levels;5" "--systems;5" "--levels;5;--systems;5;--precision;half"
             "--systems;5;--levels;5;--backend;no-such" "--bogus")
  execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "tdma-bench ${args}: exit ${rc}, want 2")
  endif()
endforeach()
