# Tests of petstore-server's HTTP side (included from tests/server/CMakeLists.txt).
ps_add_unit_test(test_server_logic ${CMAKE_CURRENT_LIST_DIR}/test_server_logic.c petstore_server_logic)
target_compile_definitions(test_server_logic PRIVATE PS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
