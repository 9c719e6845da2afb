# fmt, simdjson and toml++ inside the program instead of loaded at each start:
# every shared library costs a start its loading and relocation, and the three
# C++ ones kept libstdc++.so loaded too (docs/performance.md). fmt's and
# simdjson's compiled parts come from third_party/ (release files of the very
# versions whose headers Debian ships: each README says which), toml++ is
# header-only. tv_third_party is what tv_core links either way:
# - TV_EMBEDDED_LIBS ON: those files compiled here, and the program may take
#   libstdc++ and libgcc statically (no C++ shared library is left);
# - OFF (Debian's headers of another version; the sanitized and fuzz builds,
#   whose reports would otherwise cover those libraries' code): Debian's
#   shared libraries, as before.
add_library(tv_third_party INTERFACE)
get_target_property(TV_FMT_INCLUDE fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(TV_SIMDJSON_INCLUDE simdjson::simdjson INTERFACE_INCLUDE_DIRECTORIES)
file(STRINGS ${TV_FMT_INCLUDE}/fmt/core.h TV_FMT_VERSION REGEX "^#define FMT_VERSION ")
file(STRINGS ${TV_SIMDJSON_INCLUDE}/simdjson.h TV_SIMDJSON_VERSION
  REGEX "^#define SIMDJSON_VERSION ")
set(TV_EMBEDDED_LIBS OFF)
if(NOT TRAINVITALS_SANITIZE AND NOT TRAINVITALS_FUZZ
   AND TV_FMT_VERSION STREQUAL "#define FMT_VERSION 90100"
   AND TV_SIMDJSON_VERSION STREQUAL "#define SIMDJSON_VERSION 3.0.1")
  set(TV_EMBEDDED_LIBS ON)
endif()
if(TV_EMBEDDED_LIBS)
  add_library(tv_embedded STATIC ${CMAKE_SOURCE_DIR}/third_party/fmt/format.cc
    ${CMAKE_SOURCE_DIR}/third_party/simdjson/simdjson.cpp)
  # Release files, unchanged: not ours to lint or warn about.
  set_target_properties(tv_embedded PROPERTIES UNITY_BUILD OFF CXX_CLANG_TIDY "")
  target_compile_options(tv_embedded PRIVATE -w)
  target_include_directories(tv_embedded SYSTEM PUBLIC ${TV_FMT_INCLUDE} ${TV_SIMDJSON_INCLUDE}
    ${TOMLPP_INCLUDE_DIRS})
  target_compile_definitions(tv_embedded PUBLIC SIMDJSON_THREADS_ENABLED=1 TOML_HEADER_ONLY=1)
  target_link_libraries(tv_embedded PUBLIC Threads::Threads)
  target_link_libraries(tv_third_party INTERFACE tv_embedded)
else()
  target_link_libraries(tv_third_party INTERFACE fmt::fmt simdjson::simdjson PkgConfig::TOMLPP)
endif()
message(STATUS "fmt, simdjson and toml++ inside the program: ${TV_EMBEDDED_LIBS}")
