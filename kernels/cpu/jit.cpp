// The CPU JIT: system compiler → shared object in a hash-keyed cache → dlopen → ts_kernel.
#include "kernels/cpu/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <system_error>
#include <vector>

extern char** environ;

namespace tilescope::kernels {

namespace fs = std::filesystem;

JitModule::JitModule(void* handle, JitKernelFn kernel, std::string path)
    : m_handle(handle), m_kernel(kernel), m_path(std::move(path)) {}

JitModule::~JitModule() {
  if (m_handle) dlclose(m_handle);
}

namespace {

// Always part of the command: the object must be a position-independent shared library.
const std::vector<std::string> kFixedFlags = {"-std=c++17", "-fPIC", "-shared"};

// FNV-1a, 64-bit: stable across runs and machines (std::hash is not), enough for a cache key.
std::uint64_t fnv1a(std::uint64_t hash, const std::string& text) {
  for (unsigned char ch : text) {
    hash ^= ch;
    hash *= 1099511628211ull;
  }
  hash ^= 0xff;  // separator, so ("ab", "c") and ("a", "bc") differ
  hash *= 1099511628211ull;
  return hash;
}

std::string hex16(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs argv with stdout and stderr sent to log_path. Returns the exit status, or -1 with
// spawn_errno set when the program could not be started at all.
int run_process(const std::vector<std::string>& argv, const fs::path& log_path, int& spawn_errno) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  spawn_errno = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_errno != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      spawn_errno = errno;
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// dlopen + dlsym("ts_kernel"); on failure fills result.error and returns false.
bool load(const fs::path& object, JitResult& result) {
  void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    result.error = "the compiled kernel could not be loaded (" + object.string() +
                   "): " + (why ? why : "unknown dlopen error");
    return false;
  }
  dlerror();
  void* symbol = dlsym(handle, "ts_kernel");
  if (!symbol) {
    dlclose(handle);
    result.error =
        "the source compiled but defines no function `extern \"C\" void ts_kernel(float* const* "
        "args)`: a JIT kernel must export exactly that entry point (C linkage, so the name is not "
        "mangled)";
    return false;
  }
  result.module =
      std::make_shared<JitModule>(handle, reinterpret_cast<JitKernelFn>(symbol), object.string());
  return true;
}

}  // namespace

std::string jit_resolve_compiler(const JitOptions& options) {
  if (!options.compiler.empty()) return options.compiler;
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) return cxx;
#ifdef TILESCOPE_CXX_COMPILER
  std::error_code ec;
  if (fs::exists(TILESCOPE_CXX_COMPILER, ec)) return TILESCOPE_CXX_COMPILER;
#endif
  return "c++";
}

std::string jit_cache_dir(const JitOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "tilescope" / "jit").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "tilescope" / "jit").string();
  return (fs::temp_directory_path() / "tilescope-jit").string();
}

JitResult jit_compile(const std::string& source, const JitOptions& options) {
  JitResult result;
  const std::string compiler = jit_resolve_compiler(options);
  const std::vector<std::string> flags = split_words(options.flags);

  std::uint64_t hash = 14695981039346656037ull;
  hash = fnv1a(hash, source);
  hash = fnv1a(hash, compiler);
  for (const auto& f : flags) hash = fnv1a(hash, f);
  for (const auto& f : kFixedFlags) hash = fnv1a(hash, f);
  result.cache_key = hex16(hash);

  const fs::path dir = jit_cache_dir(options);
  const fs::path source_path = dir / (result.cache_key + ".cpp");
  const fs::path object_path = dir / (result.cache_key + ".so");
  result.object_path = object_path.string();
  // A private name for this process's output, renamed into place only when complete, so two
  // processes compiling the same kernel never load a half-written object.
  const std::string unique = result.cache_key + "." + std::to_string(getpid());
  const fs::path temp_object = dir / (unique + ".so.tmp");
  const fs::path log_path = dir / (unique + ".log");

  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), kFixedFlags.begin(), kFixedFlags.end());
  argv.insert(argv.end(), {"-o", temp_object.string(), source_path.string()});
  for (std::size_t i = 0; i < argv.size(); ++i)
    result.command += (i ? " " : "") + shell_quote(argv[i]);

  std::error_code ec;
  if (options.use_cache && fs::exists(object_path, ec)) {
    if (load(object_path, result)) {
      result.ok = true;
      result.cache_hit = true;
      return result;
    }
    result.error.clear();  // a stale or corrupt cache entry: compile again below
  }

  fs::create_directories(dir, ec);
  if (ec) {
    result.error = "cannot create the JIT cache folder " + dir.string() + ": " + ec.message() +
                   " (set XDG_CACHE_HOME to a writable folder)";
    return result;
  }
  {
    std::ofstream out(source_path, std::ios::binary | std::ios::trunc);
    out << source;
    if (!out) {
      result.error = "cannot write the kernel source to " + source_path.string();
      return result;
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  int spawn_errno = 0;
  const int status = run_process(argv, log_path, spawn_errno);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.compiler_output = read_file(log_path);
  fs::remove(log_path, ec);

  if (status < 0) {
    if (spawn_errno == ENOENT) {
      result.error = "the C++ compiler '" + compiler +
                     "' was not found, so the kernel cannot be compiled: install g++ or clang++, "
                     "or set the CXX environment variable to a compiler's path";
    } else {
      result.error =
          "the C++ compiler '" + compiler + "' could not be started: " + std::strerror(spawn_errno);
    }
    return result;
  }
  if (status != 0) {
    fs::remove(temp_object, ec);
    result.error = "the kernel source did not compile ('" + compiler + "' exited with status " +
                   std::to_string(status) +
                   "); the compiler's messages follow, with line numbers " + "in " +
                   source_path.string();
    return result;
  }
  fs::rename(temp_object, object_path, ec);
  if (ec) {
    result.error = "cannot move the compiled kernel into the cache (" + object_path.string() +
                   "): " + ec.message();
    fs::remove(temp_object, ec);
    return result;
  }
  result.ok = load(object_path, result);
  return result;
}

}  // namespace tilescope::kernels
