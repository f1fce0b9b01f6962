// Where the lesson test files build their lessons: "t.md" in the working folder, or a folder of
// a test's own (LessonFolder) so recorded() can read files beside the lesson — the only place,
// with tilescope's assets, that a lesson may read files from.
#pragma once

#include <filesystem>
#include <string>

namespace tilescope::lesson::test {

inline std::string g_lesson_file = "t.md";

// A fresh folder under the temporary folder; lessons built while it lives are `folder/t.md`.
struct LessonFolder {
  std::filesystem::path dir;
  explicit LessonFolder(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / name) {
    std::filesystem::create_directories(dir);
    g_lesson_file = (dir / "t.md").string();
  }
  ~LessonFolder() {
    g_lesson_file = "t.md";
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  LessonFolder(const LessonFolder&) = delete;
  LessonFolder& operator=(const LessonFolder&) = delete;
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

}  // namespace tilescope::lesson::test
