// The project's own source files, for the tests about the code itself (the include graph, the
// size budget): every file under TILESCOPE_SOURCE_DIR/{app,sim,kernels} that `keep` accepts, read
// whole and keyed by its repository-relative path ("sim/pipeline.h").
#pragma once

#include "build_paths.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

namespace tilescope::test {

inline constexpr const char* kSourceRoots[] = {"app/", "sim/", "kernels/"};

inline std::map<std::string, std::string> read_source_tree(
    const std::function<bool(const std::filesystem::path&)>& keep) {
  namespace fs = std::filesystem;
  const fs::path root(TILESCOPE_SOURCE_DIR);
  std::map<std::string, std::string> sources;
  for (const char* top : kSourceRoots)
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file() || !keep(e.path())) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream s;
      s << in.rdbuf();
      sources[e.path().lexically_relative(root).generic_string()] = s.str();
    }
  return sources;
}

// A C++ or CUDA source or header of the project (.h, .cpp, .cuh, .cu).
inline bool is_code_file(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cpp" || ext == ".cuh" || ext == ".cu";
}

}  // namespace tilescope::test
