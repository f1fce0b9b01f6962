// `lesson handout`: computes the lesson's answers, runs the app once per step (under xvfb-run,
// --no-session, a script that opens the lesson at that step and takes a screenshot), and writes
// DIR/index.html with the pictures beside it. Without the app or xvfb-run the handout is written
// without pictures and says why.
#include "app/cli/lesson_handout_cmd.h"

#include "app/core/lesson_handout.h"
#include "build_paths.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

extern char** environ;

namespace tilescope::cli {
namespace {

namespace fs = std::filesystem;

struct HandoutFlags {
  std::string lesson;
  std::string dir;
  std::string out;
  std::string app;
  bool no_pictures = false;
};

// A lesson by number (2 → DIR/02-*.md) or path.
std::string resolve_lesson(const HandoutFlags& f) {
  const std::string& name = f.lesson;
  if (name.empty() || name.size() > 3 || name.find_first_not_of("0123456789") != std::string::npos)
    return name;
  std::string folder = f.dir;
  std::error_code ec;
  if (folder.empty())
    folder = fs::is_directory("lessons", ec)
                 ? "lessons"
                 : (fs::path(TILESCOPE_SOURCE_DIR) / "lessons").string();
  const int n = std::stoi(name);
  const std::string prefix = (n < 10 ? "0" : "") + std::to_string(n) + "-";
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && e.path().extension() == ".md")
      return e.path().string();
  return (fs::path(folder) / (prefix + "*.md")).string();  // reported as missing by the loader
}

// Runs argv (no shell), waits; the exit status, or -1 when it could not start.
int spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::error_code ec;
    const fs::path p = fs::path(dirs.substr(start, end - start)) / program;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The app beside this CLI in a build tree (app/cli/tilescope-cli → app/gui/tilescope).
std::string default_app() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path app = self.parent_path().parent_path() / "gui" / "tilescope";
  return fs::is_regular_file(app, ec) ? app.string() : std::string();
}

int run_handout(const HandoutFlags& f) {
  const std::string file = resolve_lesson(f);
  std::shared_ptr<const lesson::Lesson> lesson;
  try {
    lesson = std::make_shared<lesson::Lesson>(lesson::load_lesson_file(file));
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  core::JobProgress progress;
  const core::LessonComputed computed = core::compute_lesson(*lesson, progress);
  if (!computed.error.empty()) {
    // The handout still has its text; the answers page says why it has no answers.
    std::cerr << "lesson handout: the answers cannot be computed: " << computed.error << "\n";
  }
  std::error_code ec;
  fs::create_directories(f.out, ec);
  if (ec) {
    std::cerr << "lesson handout: cannot create '" << f.out << "': " << ec.message() << "\n";
    return 1;
  }
  core::HandoutOptions options;
  const std::string app = f.app.empty() ? default_app() : f.app;
  if (f.no_pictures) {
    options.pictures_note.clear();
  } else if (app.empty() || !fs::is_regular_file(app, ec)) {
    options.pictures_note = "No pictures: the tilescope app was not found (--app PATH).";
  } else if (!on_path("xvfb-run")) {
    options.pictures_note = "No pictures: xvfb-run is not installed (Debian package xvfb).";
  } else {
    const std::string lessons_dir = fs::path(file).parent_path().string();
    for (size_t s = 0; s < lesson->steps.size(); ++s) {
      const std::string png = "step-" + std::to_string(s + 1) + ".png";
      const fs::path script = fs::path(f.out) / ("step-" + std::to_string(s + 1) + ".script");
      {
        std::ofstream out(script);
        out << "lesson open " << lesson->id << "\nwait-jobs\nlesson goto " << lesson->steps[s].id
            << "\nwait-jobs\nwait-frames 4\nscreenshot " << (fs::path(f.out) / png).string()
            << "\nwait-frames 1\nquit\n";
      }
      std::cerr << "lesson handout: picture of step " << s + 1 << " of " << lesson->steps.size()
                << "\n";
      const int rc = spawn({"xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", app, "--no-session",
                            "--lessons", lessons_dir.empty() ? "." : lessons_dir, "--size",
                            "1280x800", "--script", script.string()});
      fs::remove(script, ec);
      if (rc == 0 && fs::is_regular_file(fs::path(f.out) / png, ec))
        options.pictures[static_cast<int>(s)] = png;
      else
        std::cerr << "lesson handout: the app could not make the picture of step " << s + 1
                  << " (exit " << rc << ")\n";
    }
  }
  const fs::path index = fs::path(f.out) / "index.html";
  std::ofstream out(index);
  out << core::lesson_handout_html(*lesson, computed, options);
  if (!out) {
    std::cerr << "lesson handout: cannot write '" << index.string() << "'\n";
    return 1;
  }
  size_t questions = 0;
  for (const lesson::Block& b : lesson->blocks)
    questions += b.kind == lesson::BlockKind::Predict ? 1 : 0;
  std::cout << "wrote " << index.string() << ": " << lesson->steps.size() << " steps, " << questions
            << " questions (answers on the last page), " << options.pictures.size()
            << " pictures\n";
  if (!options.pictures_note.empty()) std::cout << options.pictures_note << "\n";
  return computed.error.empty() ? 0 : 1;
}

}  // namespace

void add_lesson_handout(CLI::App& lesson, int& exit_code) {
  auto flags = std::make_shared<HandoutFlags>();
  CLI::App* h = lesson.add_subcommand(
      "handout",
      "Write a printable HTML handout of a lesson: its text and models, each prediction as a "
      "question with room to answer, each checkpoint as a goal, a picture of the workbench at "
      "each step (the app under xvfb-run), and the answers on a last page of their own");
  h->add_option("lesson", flags->lesson, "Lesson number (2 = lessons/02-*.md) or file")->required();
  h->add_option("--out", flags->out, "Folder for index.html and the pictures")->required();
  h->add_option("--dir", flags->dir, "Lessons folder for a lesson number");
  h->add_option("--app", flags->app, "The tilescope app (default: the one beside this CLI)");
  h->add_flag("--no-pictures", flags->no_pictures, "Write the text and answers only");
  h->callback([flags, &exit_code] { exit_code = run_handout(*flags); });
}

}  // namespace tilescope::cli
