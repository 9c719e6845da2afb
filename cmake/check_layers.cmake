cmake_minimum_required(VERSION 3.20)
# The layers of src/ and what each may include (docs/architecture.md): run as
# part of every build (cmake -DSRC=<src dir> -DSTAMP=<file> -P check_layers.cmake),
# it fails the build on an #include that crosses a layer, naming the file and
# line. Unit tests (*_test.cc) may use any layer's test helpers.
#
# Five floors: core; markers, sources and store; sinks, analysis and views
# (side by side: none includes another); actions and run (run wires actions);
# cli and the Python binding.
set(TV_LAYER_core "")
set(TV_LAYER_markers core)
set(TV_LAYER_sources core markers)
set(TV_LAYER_store core)
set(TV_LAYER_sinks core markers sources store)
set(TV_LAYER_analysis core markers sources store)
set(TV_LAYER_views core markers sources store)
set(TV_LAYER_actions core markers sources store sinks analysis views)
set(TV_LAYER_run core markers sources store sinks analysis views actions)
set(TV_LAYER_cli core markers sources store sinks analysis views actions run)
set(TV_LAYER_python core markers sources store sinks analysis views actions run)
set(TV_LAYERS core markers sources store sinks analysis views actions run cli python)

set(errors "")
foreach(layer IN LISTS TV_LAYERS)
  file(GLOB_RECURSE files "${SRC}/${layer}/*.h" "${SRC}/${layer}/*.cc")
  list(FILTER files EXCLUDE REGEX "_test\\.cc$|_test_util\\.h$")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines REGEX "^#include \"[a-z_]+/")
    file(RELATIVE_PATH rel "${SRC}/.." "${file}")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" used "${line}")
      if(used STREQUAL layer OR NOT used IN_LIST TV_LAYERS)
        continue()
      endif()
      if(NOT used IN_LIST TV_LAYER_${layer})
        string(REPLACE ";" ", " allowed "${TV_LAYER_${layer}}")
        if(allowed STREQUAL "")
          set(allowed "nothing else")
        endif()
        string(APPEND errors "  ${rel}: ${line}: ${layer}/ may not include ${used}/ "
               "(it may use: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(NOT errors STREQUAL "")
  message(FATAL_ERROR "An #include crosses the layers of src/ (docs/architecture.md):\n${errors}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
