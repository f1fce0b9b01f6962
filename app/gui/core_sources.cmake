# The desktop app's display-free sources (state, commands, layout, scene, workbench, sessions),
# relative to app/gui: tilescope_gui_core compiles them, and so does fuzz/ (whose build has no GUI).
set(TILESCOPE_GUI_CORE_SOURCES
    app_options.cpp app_state.cpp autotune.cpp commands.cpp format.cpp graph_edit.cpp graph_scene.cpp panel_layout.cpp
    script_runner.cpp session.cpp views/memory_model.cpp widgets/dag_layout.cpp workbench.cpp)
