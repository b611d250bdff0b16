# Tests of petstore-server's HTTP side (included from tests/reference-server/CMakeLists.txt).
ps_add_unit_test(test_server_logic ${CMAKE_CURRENT_LIST_DIR}/test_server_logic.c petstore_server_logic)
target_compile_definitions(test_server_logic PRIVATE PS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Integration tests: python3 (stdlib) clients against the real server on loopback.
find_package(Python3 COMPONENTS Interpreter)
function(ps_add_server_test name labels)
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/${name}.py --server $<TARGET_FILE:petstore-server> ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 120)
endfunction()
if(Python3_FOUND)
  ps_add_server_test(test_server_http "integration")
  ps_add_server_test(test_server_limits "integration")
  ps_add_server_test(test_server_burst "integration;tsan")
  ps_add_server_test(test_server_faults "integration")
  ps_add_server_test(test_server_lifecycle "integration;tsan")
  ps_add_server_test(test_server_hardening "integration")
  ps_add_server_test(test_server_hostile_json "integration") # worst-case JSON bodies (issue 11)
  ps_add_server_test(test_server_data_paths "integration")   # --data paths that keep nothing (issue 11)
  # the same with 10,000 simultaneous connections
  add_test(NAME test_server_hardening_10k
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_server_hardening.py
                   --server $<TARGET_FILE:petstore-server> --many 10000 Hardening.test_many_connections)
  set_tests_properties(test_server_hardening_10k PROPERTIES LABELS "integration;slow" TIMEOUT 300)
  # An independent black-box client over every rule (its own helpers, several server
  # configurations; ~20 s), and its 10,000-connection part (slow).
  add_test(NAME blackbox_probe
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/blackbox_probe.py
                   --server $<TARGET_FILE:petstore-server> --source-dir ${PROJECT_SOURCE_DIR})
  set_tests_properties(blackbox_probe PROPERTIES LABELS "integration" TIMEOUT 180)
  add_test(NAME blackbox_probe_10k
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/blackbox_probe.py
                   --server $<TARGET_FILE:petstore-server> --source-dir ${PROJECT_SOURCE_DIR} --many 10000)
  set_tests_properties(blackbox_probe_10k PROPERTIES LABELS "integration;slow" TIMEOUT 300)
endif()

# The body validator's fuzz target: a libFuzzer run (label fuzz) with
# -DPETSTORE_FUZZ=ON under clang; in every build a replay of the seed corpus.
set(PS_FUZZ_CORPUS ${PROJECT_SOURCE_DIR}/fixtures/fuzz/validate)
add_executable(fuzz_validate_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz_validate.c)
target_link_libraries(fuzz_validate_replay PRIVATE petstore_server_logic)
set_target_properties(fuzz_validate_replay PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_test(NAME fuzz_validate_replay COMMAND fuzz_validate_replay ${PS_FUZZ_CORPUS})
set_tests_properties(fuzz_validate_replay PROPERTIES LABELS unit TIMEOUT 60)
if(PETSTORE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PETSTORE_FUZZ needs clang (CC=clang)")
  endif()
  # the validator and the JSON parser are compiled into the target so libFuzzer sees their coverage
  add_executable(fuzz_validate ${CMAKE_CURRENT_LIST_DIR}/fuzz_validate.c
                 ${PROJECT_SOURCE_DIR}/reference-server/validate.c ${PROJECT_SOURCE_DIR}/reference-server/responses.c
                 ${PROJECT_SOURCE_DIR}/core/json.c ${PROJECT_SOURCE_DIR}/core/buf.c ${PROJECT_SOURCE_DIR}/core/error.c)
  target_include_directories(fuzz_validate PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(fuzz_validate PRIVATE PS_LIBFUZZER=1)
  # clang flags buf.c's vsnprintf wrapper, which gcc accepts: not an issue of the target
  target_compile_options(fuzz_validate PRIVATE -fsanitize=fuzzer,address,undefined -Wno-format-nonliteral)
  target_link_options(fuzz_validate PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_validate PRIVATE PkgConfig::YAJL m)
  set_target_properties(fuzz_validate PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME fuzz_validate
           COMMAND ${CMAKE_COMMAND} -E env sh -c
             "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus' && exec '$<TARGET_FILE:fuzz_validate>' -max_total_time=20 -max_len=4096 -timeout=10 '${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus' '${PS_FUZZ_CORPUS}'")
  set_tests_properties(fuzz_validate PROPERTIES LABELS fuzz TIMEOUT 120)
endif()

# A short run of the benchmark (1 s per measurement); fails only when the
# GET ratio to nginx falls below a loose floor (the machine is shared).
find_program(PS_WRK wrk)
find_program(PS_NGINX nginx PATHS /usr/sbin)
if(PS_WRK AND PS_NGINX)
  add_test(NAME bench_server
           COMMAND ${CMAKE_COMMAND} -E env BENCH_MIN_RATIO=0.3
                   ${PROJECT_SOURCE_DIR}/bench/server/run.sh ${CMAKE_BINARY_DIR} 1s)
  set_tests_properties(bench_server PROPERTIES LABELS bench TIMEOUT 60 RUN_SERIAL TRUE)
endif()
# Every ratio of bench/ratios.sh in one short run: the script works and
# prints them; no ratio is asserted.
find_program(PS_OPENSSL openssl)
if(PS_WRK AND PS_NGINX AND PS_OPENSSL)
  add_test(NAME bench_ratios
           COMMAND ${CMAKE_COMMAND} -E env BENCH_RUNS=1 BENCH_SECONDS=1
                   ${PROJECT_SOURCE_DIR}/bench/ratios.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(bench_ratios PROPERTIES LABELS bench TIMEOUT 90 RUN_SERIAL TRUE
                       PASS_REGULAR_EXPRESSION "server petstore-server/nginx r200: +[0-9.]+x")
endif()
