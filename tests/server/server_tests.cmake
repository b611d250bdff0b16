# Tests of petstore-server's HTTP side (included from tests/server/CMakeLists.txt).
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
  # the same with 10,000 simultaneous connections
  add_test(NAME test_server_hardening_10k
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_server_hardening.py
                   --server $<TARGET_FILE:petstore-server> --many 10000 Hardening.test_many_connections)
  set_tests_properties(test_server_hardening_10k PROPERTIES LABELS "integration;slow" TIMEOUT 300)
endif()
