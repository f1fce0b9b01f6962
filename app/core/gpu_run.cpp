// The GPU bench run as a child process for "Run on this GPU" (gpu_run.h): a private folder for
// the model and the answer, the bench's output kept for the message when no answer comes back.
#include "app/core/gpu_run.h"

#include "build_paths.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace tilescope::core {

namespace fs = std::filesystem;

namespace {

// A fresh folder only this user can enter (mkdtemp: created atomically with mode 0700, so a
// shared /tmp is safe), in the first place that can hold one; "" with the reasons otherwise.
std::string make_private_dir(std::string& why) {
  std::vector<fs::path> places;
  if (const char* t = std::getenv("TMPDIR"); t && *t) places.emplace_back(t);
  places.emplace_back("/tmp");
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    places.emplace_back(fs::path(x) / "tilescope");
  if (const char* h = std::getenv("HOME"); h && *h)
    places.emplace_back(fs::path(h) / ".cache" / "tilescope");
  for (const fs::path& p : places) {
    std::error_code ec;
    fs::create_directories(p, ec);
    std::string pattern = (p / "tilescope-gpu-XXXXXX").string();
    if (mkdtemp(pattern.data())) return pattern;
    why += (why.empty() ? "" : "; ") + p.string() + ": " + std::strerror(errno);
  }
  return {};
}

std::string last_lines(const std::string& text, int n) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  const size_t end = pos;
  for (int seen = 0; pos > 0; --pos)
    if (text[pos - 1] == '\n' && ++seen == n) break;
  return text.substr(pos, end - pos);
}

}  // namespace

std::string gpu_run_unavailable() {
#ifdef TILESCOPE_GPU_BENCH_PATH
  return {};
#else
  if (const char* env = std::getenv("TILESCOPE_GPU_BENCH"); env && *env) return {};
  return "this tilescope was built without CUDA (nvcc was not found when it was configured)";
#endif
}

std::string gpu_bench_program() {
  if (const char* env = std::getenv("TILESCOPE_GPU_BENCH"); env && *env) return env;
#ifdef TILESCOPE_GPU_BENCH_PATH
  return TILESCOPE_GPU_BENCH_PATH;
#else
  return {};
#endif
}

GpuRunResult parse_gpu_run(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("verified"))
    throw std::runtime_error("the GPU bench's answer is not a --run-schedule result");
  GpuRunResult r;
  if (j.contains("device") && j["device"].is_object()) r.device = j["device"].value("name", "");
  r.verified = j.value("verified", false);
  if (j.contains("rel_error") && j["rel_error"].is_number())
    r.rel_error = j["rel_error"].get<double>();
  if (j.contains("median_ms") && j["median_ms"].is_number())
    r.median_ms = j["median_ms"].get<double>();
  r.registers = j.value("registers", 0);
  if (j.contains("kernels") && j["kernels"].is_array())
    for (const nlohmann::json& k : j["kernels"]) {
      if (!k.is_object()) continue;
      GpuRunResult::KernelTime t;
      t.kernel = k.value("kernel", "");
      if (k.contains("median_ms") && k["median_ms"].is_number())
        t.median_ms = k["median_ms"].get<double>();
      r.kernels.push_back(t);
    }
  if (j.contains("cublas") && j["cublas"].is_object()) {
    r.cublas_what = j["cublas"].value("what", "");
    if (j["cublas"].contains("median_ms")) r.cublas_ms = j["cublas"]["median_ms"].get<double>();
  }
  return r;
}

GpuRunResult run_schedule_on_gpu(const std::string& model_text, const std::string& steps,
                                 int repeats, JobProgress& progress) {
  if (std::string why = gpu_run_unavailable(); !why.empty()) throw std::runtime_error(why);
  std::string why;
  const std::string dir = make_private_dir(why);
  if (dir.empty()) throw std::runtime_error("no folder for the GPU run's files: " + why);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  const fs::path model = fs::path(dir) / "model.model";
  const fs::path answer = fs::path(dir) / "run.json";
  const fs::path log = fs::path(dir) / "bench.log";
  {
    std::ofstream out(model, std::ios::binary);
    out << model_text;
    if (!out) throw std::runtime_error("cannot write " + model.string());
  }
  const std::vector<std::string> argv = {
      gpu_bench_program(), "--run-schedule",        model.string(), "--apply",      steps,
      "--repeats",         std::to_string(repeats), "--out",        answer.string()};
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawn_errno = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_errno != 0)
    throw std::runtime_error("cannot start the GPU bench '" + argv[0] +
                             "': " + std::strerror(spawn_errno));
  progress.set_phase("generating CUDA, compiling with NVRTC, verifying, timing");
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("lost the GPU bench process");
    if (progress.cancel) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw JobCancelled();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  nlohmann::json j;
  if (std::ifstream in(answer); in) j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    const std::string said = last_lines(text.str(), 3);
    throw std::runtime_error("the GPU run did not complete" +
                             (said.empty() ? std::string(".") : ": " + said));
  }
  progress.fraction = 1.0;
  return parse_gpu_run(j);
}

}  // namespace tilescope::core
