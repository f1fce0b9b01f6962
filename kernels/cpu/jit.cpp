// The CPU JIT: system compiler → shared object in a private hash-keyed cache → dlopen → ts_kernel.
#include "kernels/cpu/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <set>
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
  // A fresh file of our own: never one that is already there (or a symlink planted in its name).
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
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

// [SECTION] A private cache

std::string mode_text(mode_t mode) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", unsigned(mode & 07777));
  return b;
}

// "" when `path` is a file of `kind` this process may trust with code it will run: not a symlink,
// owned by the effective user, writable by nobody else. Otherwise what is wrong, in a phrase.
std::string trust_problem(const fs::path& path, bool directory) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0)
    return std::string("cannot be examined: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (directory && !S_ISDIR(st.st_mode)) return "is not a directory";
  if (!directory && !S_ISREG(st.st_mode)) return "is not a regular file";
  if (st.st_uid != geteuid())
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "is writable by " + std::string(st.st_mode & S_IWOTH ? "everyone" : "its group") +
           " (mode " + mode_text(st.st_mode) + ")";
  return "";
}

// Whether `gid` is the user's own group, with no one else in it: the "user private group" of many
// distributions, where a umask of 002 makes ~/.cache group-writable without sharing anything.
bool private_group(gid_t gid) {
  if (gid != getegid()) return false;
  const group* g = getgrgid(gid);
  const passwd* me = getpwuid(geteuid());
  if (!g || !me) return false;
  for (char** m = g->gr_mem; m && *m; ++m)
    if (std::strcmp(*m, me->pw_name) != 0) return false;
  return true;
}

// "" when no one but the user (and root) can change what the path `real` leads to: every folder
// above it, from /, is owned by the user or root and writable by no one else (its group may
// write when that group is the user's private one) — or, if others can write it (as /tmp), has
// the sticky bit, so they cannot rename or remove what the user made in it. Otherwise which
// folder is not, and why. `real` has no symlinks ("canonical").
std::string ancestors_problem(const fs::path& real) {
  fs::path folder;
  for (const fs::path& part : real.parent_path()) {
    folder /= part;
    struct stat st {};
    if (lstat(folder.c_str(), &st) != 0)
      return folder.string() + " cannot be examined: " + std::strerror(errno);
    if (st.st_uid != geteuid() && st.st_uid != 0)
      return folder.string() + " is owned by uid " + std::to_string(st.st_uid) +
             ", not by you or root";
    const bool others_write =
        (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && !private_group(st.st_gid));
    if (others_write && !(st.st_mode & S_ISVTX))
      return folder.string() + " is writable by " +
             (st.st_mode & S_IWOTH ? "everyone" : "its group") + " (mode " +
             mode_text(st.st_mode) + ") without the sticky bit";
  }
  return "";
}

// Creates the cache folder 0700 if it is missing and checks it and every folder above it; `dir`
// becomes its canonical path, the one every later step uses (a symlink above it, which someone
// could point elsewhere later, is not followed again). On failure fills `error`.
bool prepare_cache_dir(fs::path& dir, std::string& error) {
  std::error_code ec;
  // Folders that do not exist yet are made 0700 too (~/.cache/tilescope under umask 0 would be
  // 0777, and then refused below as a folder others can write).
  fs::path made;
  for (const fs::path& part : dir.parent_path()) {
    made /= part;
    if (!made.empty() && mkdir(made.c_str(), 0700) != 0 && errno != EEXIST) break;
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    error = "cannot create the JIT cache folder " + dir.string() + ": " + std::strerror(errno) +
            " (set XDG_CACHE_HOME to a writable folder)";
    return false;
  }
  if (const std::string why = trust_problem(dir, true); !why.empty()) {
    error = "the JIT cache folder " + dir.string() + " " + why +
            ", so someone else could put code there that tilescope would load; it is not used. "
            "Remove it, or set XDG_CACHE_HOME to a folder of your own";
    return false;
  }
  // A second user could swap a folder above the cache (XDG_CACHE_HOME=/tmp, or /tmp/$USER made
  // first by someone else) and have tilescope compile and load their code (issue #25).
  const fs::path real = fs::canonical(dir, ec);
  if (ec) {
    error = "the JIT cache folder " + dir.string() + " cannot be resolved: " + ec.message();
    return false;
  }
  if (const std::string why = ancestors_problem(real); !why.empty()) {
    error = "the JIT cache folder " + dir.string() + " is not private: " + why +
            ", so someone else could replace the cache with code tilescope would load; it is not "
            "used. Set XDG_CACHE_HOME to a folder of your own";
    return false;
  }
  dir = real;
  return true;
}

// A name in the cache folder no other call, thread or process uses (pid + a counter), for files
// that are written and then renamed into place.
std::string unique_name(const std::string& key, const std::string& suffix) {
  static std::atomic<unsigned> counter{0};
  return key + "." + std::to_string(getpid()) + "." + std::to_string(counter++) + suffix;
}

// Writes `text` to a new file at `path` (which must not exist: O_EXCL | O_NOFOLLOW), mode 0600.
bool write_new_file(const fs::path& path, const std::string& text, std::string& error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot create " + path.string() + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write " + path.string() + ": " + std::strerror(errno);
      close(fd);
      return false;
    }
    done += size_t(n);
  }
  if (close(fd) != 0) {
    error = "cannot write " + path.string() + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

// Runs argv and returns its stdout + stderr ("" when it cannot be started).
std::string run_capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, size_t(n));
  }
  close(fds[0]);
  if (rc != 0) return "";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// What the key must know about the compiler beyond its name: the same path can be upgraded, and
// another version may emit different code. Asked once per compiler per process.
std::string compiler_identity(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(compiler);
  if (it == known.end()) it = known.emplace(compiler, run_capture({compiler, "--version"})).first;
  return it->second;
}

// -march=native means "this CPU": an object built on one host may use instructions another lacks
// (SIGILL), so the key includes the CPU's model name and feature flags (first processor).
std::string cpu_identity() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string text;
    for (std::string line; std::getline(in, line) && !line.empty();) {
      for (const char* field : {"model name", "flags", "Features", "CPU implementer", "CPU part"})
        if (line.rfind(field, 0) == 0) text += line + "\n";
    }
    return text;
  }();
  return id;
}

bool is_key(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// Bounds the cache: keeps the newest options.max_entries objects within options.max_cache_bytes
// (and always `keep`, the entry just made), removes sources with no object (failed compiles; the
// one of `keep` stays, since its error message points at it) and temporaries of compiles that
// were interrupted more than an hour ago.
void prune_cache(const fs::path& dir, const JitOptions& options, const std::string& keep) {
  struct Entry {
    std::string key;
    fs::file_time_type time;
    std::uint64_t bytes;
  };
  std::vector<Entry> objects;
  std::set<std::string> sources, with_object;
  std::vector<fs::path> stale;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::error_code fe;
    if (!e.is_regular_file(fe) || e.is_symlink(fe)) continue;
    const std::string name = e.path().filename().string();
    const std::string stem = name.substr(0, 16);
    const auto time = e.last_write_time(fe);
    if (name.size() == 19 && name.ends_with(".so") && is_key(stem)) {
      objects.push_back({stem, time, std::uint64_t(e.file_size(fe))});
      with_object.insert(stem);
    } else if (name.size() == 20 && name.ends_with(".cpp") && is_key(stem)) {
      sources.insert(stem);
    } else if (is_key(stem) && name.size() > 17 && name[16] == '.' &&
               now - time > std::chrono::hours(1)) {
      stale.push_back(e.path());  // <key>.<pid>.<n>.so.tmp / .cpp.tmp / .log of a killed compile
    }
  }
  std::sort(objects.begin(), objects.end(),
            [](const Entry& a, const Entry& b) { return a.time > b.time; });
  std::size_t kept = 0;
  std::uint64_t kept_bytes = 0;
  for (const Entry& o : objects) {
    const bool fits = kept < options.max_entries && kept_bytes + o.bytes <= options.max_cache_bytes;
    if (o.key == keep || fits) {
      ++kept;
      kept_bytes += o.bytes;
      continue;
    }
    fs::remove(dir / (o.key + ".so"), ec);
    with_object.erase(o.key);
  }
  for (const std::string& key : sources)
    if (key != keep && !with_object.count(key)) fs::remove(dir / (key + ".cpp"), ec);
  for (const fs::path& p : stale) fs::remove(p, ec);
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
  // No home: a shared temporary folder, so the name is per user (the folder is still checked:
  // someone else can create that name first).
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / ("tilescope-jit-" + std::to_string(geteuid()))).string();
}

JitResult jit_compile(const std::string& source, const JitOptions& options) {
  JitResult result;
  const std::string compiler = jit_resolve_compiler(options);
  const std::vector<std::string> flags = split_words(options.flags);

  std::uint64_t hash = 14695981039346656037ull;
  hash = fnv1a(hash, source);
  hash = fnv1a(hash, compiler);
  hash = fnv1a(hash, compiler_identity(compiler));
  hash = fnv1a(hash, cpu_identity());
  for (const auto& f : flags) hash = fnv1a(hash, f);
  for (const auto& f : kFixedFlags) hash = fnv1a(hash, f);
  result.cache_key = hex16(hash);

  fs::path dir = jit_cache_dir(options);
  if (!prepare_cache_dir(dir, result.error)) return result;
  // From here on, paths inside the folder's canonical name only.
  const fs::path source_path = dir / (result.cache_key + ".cpp");
  const fs::path object_path = dir / (result.cache_key + ".so");
  result.object_path = object_path.string();
  // Private names for this call's files, renamed into place only when complete, so two
  // processes compiling the same kernel never load a half-written object.
  const fs::path temp_source = dir / unique_name(result.cache_key, ".cpp.tmp");
  const fs::path temp_object = dir / unique_name(result.cache_key, ".so.tmp");
  const fs::path log_path = dir / unique_name(result.cache_key, ".log");

  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), kFixedFlags.begin(), kFixedFlags.end());
  argv.insert(argv.end(), {"-o", temp_object.string(), source_path.string()});
  for (std::size_t i = 0; i < argv.size(); ++i)
    result.command += (i ? " " : "") + shell_quote(argv[i]);

  std::error_code ec;
  // An existing entry that this user did not make (another owner, a symlink, writable by others)
  // is refused rather than loaded, followed or silently replaced: someone tampered with the
  // cache, and the learner should know.
  const auto refuse_entry = [&](const fs::path& path, const std::string& why) {
    result.error = "the JIT cache entry " + path.string() + " " + why +
                   ", so it may not be what tilescope wrote; it is neither loaded nor "
                   "overwritten. Remove it (or the folder " +
                   dir.string() + ") to compile afresh";
    return result;
  };
  if (fs::symlink_status(object_path, ec).type() != fs::file_type::not_found) {
    if (const std::string why = trust_problem(object_path, false); !why.empty())
      return refuse_entry(object_path, why);
    if (options.use_cache) {
      if (load(object_path, result)) {
        result.ok = true;
        result.cache_hit = true;
        // Recently used entries are the ones pruning keeps.
        utimensat(AT_FDCWD, object_path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
        return result;
      }
      result.error.clear();  // a stale or corrupt cache entry: compile again below
    }
  }
  if (fs::symlink_status(source_path, ec).type() != fs::file_type::not_found) {
    if (const std::string why = trust_problem(source_path, false); !why.empty())
      return refuse_entry(source_path, why);
  }
  if (!write_new_file(temp_source, source, result.error)) {
    result.error = "cannot write the kernel source into the JIT cache: " + result.error;
    return result;
  }
  // rename() replaces the name, never what a name points to.
  if (std::rename(temp_source.c_str(), source_path.c_str()) != 0) {
    result.error = "cannot move the kernel source into the JIT cache (" + source_path.string() +
                   "): " + std::strerror(errno);
    fs::remove(temp_source, ec);
    return result;
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
    fs::remove(source_path, ec);
    return result;
  }
  if (status != 0) {
    fs::remove(temp_object, ec);
    prune_cache(dir, options, result.cache_key);
    result.error = "the kernel source did not compile ('" + compiler + "' exited with status " +
                   std::to_string(status) +
                   "); the compiler's messages follow, with line numbers " + "in " +
                   source_path.string();
    return result;
  }
  // The linker's mode follows the umask, which may allow group writes; our own load check would
  // then refuse the object.
  chmod(temp_object.c_str(), 0700);
  fs::rename(temp_object, object_path, ec);
  if (ec) {
    result.error = "cannot move the compiled kernel into the cache (" + object_path.string() +
                   "): " + ec.message();
    fs::remove(temp_object, ec);
    return result;
  }
  prune_cache(dir, options, result.cache_key);
  result.ok = load(object_path, result);
  return result;
}

}  // namespace tilescope::kernels
