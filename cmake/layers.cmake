# The layers of src/ and what each may include (docs/architecture.md), read by
# CMakeLists.txt (one static library per layer, linking these) and by
# check_layers.cmake (which fails the build on an #include that crosses them).
#
# Five floors: core; markers, sources and store; sinks, analysis and views
# (side by side: none includes another); actions and run (run wires actions);
# cli and the Python binding.
set(TV_LAYER_core "")
set(TV_LAYER_markers core)
set(TV_LAYER_sources core markers)
set(TV_LAYER_store core)
# They consume samples and rows; none of them reaches back into a source.
set(TV_LAYER_sinks core store)
set(TV_LAYER_analysis core store)
set(TV_LAYER_views core store)
set(TV_LAYER_actions core markers sources store sinks analysis views)
set(TV_LAYER_run core markers sources store sinks analysis views actions)
set(TV_LAYER_cli core markers sources store sinks analysis views actions run)
set(TV_LAYER_python core markers sources store sinks analysis views actions run)
set(TV_LAYERS core markers sources store sinks analysis views actions run cli python)

