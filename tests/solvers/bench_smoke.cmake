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
# A count of more than six digits (40 x 123457 x 3 = 14814840 bytes; it was
# written 1.48148e+07): every digit in the JSON line.
execute_process(
  COMMAND ${BENCH} --systems 123457 --levels 3 --backend simd --threads 2 --repeats 2
          --stream-mb 8 --json
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tdma-bench --systems 123457 failed (${rc}):\n${out}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json "${out}")
execute_process(COMMAND ${PYTHON} ${CHECK} ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tdma-bench --systems 123457: bad JSON:\n${out}")
endif()
# Bad arguments: exit status 2.
foreach(args "--systems;0;--levels;5" "--systems;5" "--levels;5;--systems;5;--precision;half"
             "--systems;5;--levels;5;--backend;no-such" "--bogus")
  execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "tdma-bench ${args}: exit ${rc}, want 2")
  endif()
endforeach()
