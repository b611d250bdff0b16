# The reference server's state modules (rate limiter, category store and its
# journal), a library of their own so their unit tests link them without the
# HTTP side. Included from reference-server/CMakeLists.txt.
add_library(petstore_server_state STATIC
  ${CMAKE_CURRENT_LIST_DIR}/limiter.c
  ${CMAKE_CURRENT_LIST_DIR}/journal.c
  ${CMAKE_CURRENT_LIST_DIR}/store.c
)
target_include_directories(petstore_server_state PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(petstore_server_state PUBLIC petstore_core PkgConfig::YAJL ZLIB::ZLIB
                      Threads::Threads)
