# Finds third-party packages. Header-only libraries may also come from .deps/include, which
# scripts/pack-deps.sh fills for machines without a package registry (the GPU machine).
set(TILESCOPE_DEPS_INCLUDE ${CMAKE_SOURCE_DIR}/.deps/include)

find_package(Threads REQUIRED)

# Header-only: nlohmann/json, CLI11, doctest, Eigen. An INTERFACE target each, so the rest of
# the build does not care where the headers came from.
function(tilescope_header_dep name header)
  find_path(${name}_INCLUDE_DIR ${header}
            HINTS ${TILESCOPE_DEPS_INCLUDE} PATHS /usr/include /usr/include/eigen3)
  if(${name}_INCLUDE_DIR)
    add_library(tilescope_dep_${name} INTERFACE)
    target_include_directories(tilescope_dep_${name} SYSTEM INTERFACE ${${name}_INCLUDE_DIR})
    set(TILESCOPE_HAVE_${name} ON PARENT_SCOPE)
  else()
    set(TILESCOPE_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

tilescope_header_dep(json nlohmann/json.hpp)
tilescope_header_dep(cli11 CLI/CLI.hpp)
tilescope_header_dep(doctest doctest/doctest.h)
tilescope_header_dep(eigen Eigen/Dense)
foreach(dep json cli11 eigen)
  if(NOT TILESCOPE_HAVE_${dep})
    message(FATAL_ERROR "tilescope needs header library '${dep}' (Debian: see scripts/setup.sh)")
  endif()
endforeach()

# md4c (Markdown, a small C library): the lesson player's text. Found without pkg-config so the
# headless build finds it too; the GPU machine has none, and its build keeps lesson prose as plain
# paragraphs (app/core/markdown.cpp), which only the app draws anyway.
find_path(MD4C_INCLUDE_DIR md4c.h)
find_library(MD4C_LIBRARY md4c)
set(TILESCOPE_HAVE_MD4C OFF)
if(MD4C_INCLUDE_DIR AND MD4C_LIBRARY)
  set(TILESCOPE_HAVE_MD4C ON)
  add_library(tilescope_dep_md4c INTERFACE)
  target_include_directories(tilescope_dep_md4c SYSTEM INTERFACE ${MD4C_INCLUDE_DIR})
  target_link_libraries(tilescope_dep_md4c INTERFACE ${MD4C_LIBRARY})
  target_compile_definitions(tilescope_dep_md4c INTERFACE TILESCOPE_HAVE_MD4C=1)
endif()

# ONNX (Debian's libonnx-dev and protobuf): `tilescope-cli import` and opening a .onnx model. The
# protobuf messages (onnx_proto) are read, and ONNX's own shape inference (onnx) cross-checks the
# shapes tilescope infers. Optional like md4c: the GPU machine has neither, and there a .onnx model
# is refused with what to install.
set(TILESCOPE_HAVE_ONNX OFF)
find_package(Protobuf QUIET)
if(Protobuf_FOUND)
  find_package(ONNX CONFIG QUIET)
endif()
if(TARGET onnx_proto AND TARGET onnx)
  set(TILESCOPE_HAVE_ONNX ON)
  add_library(tilescope_dep_onnx INTERFACE)
  target_link_libraries(tilescope_dep_onnx INTERFACE onnx onnx_proto)
  target_compile_definitions(tilescope_dep_onnx INTERFACE TILESCOPE_HAVE_ONNX=1)
endif()

# GUI: GLFW + OpenGL + Dear ImGui (Debian's libimgui-dev ships the GLFW/OpenGL3 backends).
set(TILESCOPE_HAVE_GUI OFF)
if(NOT TILESCOPE_GUI STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  find_package(OpenGL QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
    pkg_check_modules(GLFW QUIET IMPORTED_TARGET glfw3)
    pkg_check_modules(STB QUIET IMPORTED_TARGET stb)
  endif()
  if(IMGUI_FOUND AND GLFW_FOUND AND STB_FOUND AND OpenGL_FOUND AND TILESCOPE_HAVE_MD4C)
    set(TILESCOPE_HAVE_GUI ON)
  elseif(TILESCOPE_GUI STREQUAL "ON")
    message(FATAL_ERROR "TILESCOPE_GUI=ON but ImGui/GLFW/OpenGL/stb/md4c were not found")
  endif()
endif()

# CUDA: only the kernels room uses it; the rest of the build never needs nvcc.
set(TILESCOPE_HAVE_CUDA OFF)
if(NOT TILESCOPE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(TILESCOPE_HAVE_CUDA ON)
    endif()
  endif()
  if(NOT TILESCOPE_HAVE_CUDA AND TILESCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TILESCOPE_CUDA=ON but nvcc / the CUDA toolkit were not found")
  endif()
endif()
