# Runs tdma-bench on tiny sizes and checks its JSON lines (tests/solvers).
foreach(mode "" "--fused")
  foreach(prec double single)
    execute_process(
      COMMAND ${BENCH} --systems 37 --levels 7 --precision ${prec} --backend all ${mode}
              --threads 2 --repeats 2 --stream-mb 8 --json --random-depths
      OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "tdma-bench ${prec} ${mode} failed (${rc}):\n${out}")
    endif()
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json "${out}")
    execute_process(COMMAND ${PYTHON} ${CHECK} ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "tdma-bench ${prec} ${mode}: bad JSON:\n${out}")
    endif()
  endforeach()
endforeach()
# Bad arguments: exit status 2.
foreach(args "--systems;0;--levels;5" "--systems;5" "--levels;5;--systems;5;--precision;half"
             "--systems;5;--levels;5;--backend;no-such" "--bogus")
  execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "tdma-bench ${args}: exit ${rc}, want 2")
  endif()
endforeach()
