// The JIT cache runs what it finds, so it must be private: a new folder is 0700, and an object or
// source that another user owns, that sits in a folder others can write, or that is a symlink is
// refused (never loaded, followed or overwritten); the cache stays bounded.
#include "kernels/cpu/jit.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope::kernels;
namespace fs = std::filesystem;

namespace {

const char* kScaleSource = R"(
extern "C" void ts_kernel(float* const* args) {
  for (int i = 0; i < 4; ++i) args[1][i] = 2.0f * args[0][i] + 1.0f;
}
)";

// The folders the cases made, removed when the test process ends.
struct Cleanup {
  std::vector<fs::path> dirs;
  ~Cleanup() {
    std::error_code ec;
    for (const fs::path& d : dirs) {
      fs::permissions(d, fs::perms::owner_all, fs::perm_options::add, ec);
      fs::remove_all(d, ec);
    }
  }
} cleanup;

// A fresh, empty folder for one case (inside the test process's scratch folder), mode 0700.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = tilescope::test::scratch_dir() / ("jit-cache-" + name);
  cleanup.dirs.push_back(d);
  std::error_code ec;
  fs::remove_all(d, ec);
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
  return d;
}

JitOptions in_dir(const fs::path& dir) {
  JitOptions o;
  o.cache_dir = dir.string();
  return o;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The key jit_compile gives kScaleSource with the default compiler and flags (the key does not
// depend on the folder), found by compiling it once in a folder of its own.
std::string scale_key() {
  static const std::string key = [] {
    const JitResult r = jit_compile(kScaleSource, in_dir(fresh_dir("key")));
    INFO(r.error, "\n", r.compiler_output);
    REQUIRE(r.ok);
    return r.cache_key;
  }();
  return key;
}

// A shared object whose constructor creates `marker` when it is loaded: what an attacker would
// plant under a cached kernel's name. Built with the system compiler, never loaded here.
fs::path planted_object(const fs::path& marker) {
  const fs::path dir = fresh_dir("planted-build");
  std::ofstream(dir / "planted.cpp") << "#include <cstdio>\n"
                                        "__attribute__((constructor)) static void planted() {\n"
                                        "  if (FILE* f = std::fopen(\""
                                     << marker.string()
                                     << "\", \"w\")) std::fclose(f);\n}\n"
                                        "extern \"C\" void ts_kernel(float* const* a) { (void)a; "
                                        "}\n";
  const std::string compiler = jit_resolve_compiler({});
  const auto r = tilescope::test::run_command(compiler + " -std=c++17 -fPIC -shared -o '" +
                                              (dir / "planted.so").string() + "' '" +
                                              (dir / "planted.cpp").string() + "'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  return dir / "planted.so";
}

struct EnvSave {
  std::string name;
  bool had;
  std::string value;
  explicit EnvSave(std::string n) : name(std::move(n)) {
    const char* v = std::getenv(name.c_str());
    had = v != nullptr;
    value = v ? v : "";
  }
  ~EnvSave() {
    if (had)
      setenv(name.c_str(), value.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("a new cache folder is created 0700, whatever the umask") {
  // Rule: only the owner may list, add or replace the code in it. With umask 0 a plain mkdir
  // would give 0777.
  const fs::path parent = fresh_dir("created");
  const fs::path dir = parent / "sub" / "jit";
  const mode_t old_mask = umask(0);
  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  umask(old_mask);
  INFO(r.error);
  REQUIRE(r.ok);
  struct stat st {};
  REQUIRE(lstat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  // The object itself is writable by nobody else either (the linker follows the umask).
  REQUIRE(lstat(r.object_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 022) == 0);
}

TEST_CASE("a cached object owned by another user is refused, and its constructor never runs") {
  if (geteuid() != 0) {
    MESSAGE("skipped: planting a file owned by another user needs root (chown)");
    return;
  }
  const fs::path marker = tilescope::test::scratch_dir() / "planted-ran-owner";
  fs::remove(marker);
  const fs::path planted = planted_object(marker);
  const fs::path dir = fresh_dir("foreign-owner");
  const fs::path target = dir / (scale_key() + ".so");
  fs::copy_file(planted, target);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::replace);
  REQUIRE(chown(target.c_str(), 65534, 65534) == 0);

  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  INFO(r.error);
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("owned by uid 65534") != std::string::npos);
}

TEST_CASE("a cached object in a folder others can write is refused") {
  // Rule: a folder writable by group or world lets anyone replace an entry between our check
  // and dlopen, so nothing in it is trusted, even files we own.
  const fs::path marker = tilescope::test::scratch_dir() / "planted-ran-folder";
  fs::remove(marker);
  const fs::path planted = planted_object(marker);
  const fs::path dir = fresh_dir("open-folder");
  fs::copy_file(planted, dir / (scale_key() + ".so"));
  fs::permissions(dir / (scale_key() + ".so"), fs::perms::owner_all, fs::perm_options::replace);
  fs::permissions(dir, fs::perms::all, fs::perm_options::replace);  // 0777

  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  INFO(r.error);
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("writable by everyone") != std::string::npos);
}

TEST_CASE("a cache below a folder others can write is refused, naming that folder") {
  // Issue #25: with XDG_CACHE_HOME=/tmp, or /tmp/$USER made first by someone else, only the last
  // folder was checked; a second user could swap the one above it and have tilescope compile
  // and load her code. Simulated: the cache's parent made world-writable (no sticky bit), then
  // group-writable, then handed to another user.
  const fs::path base = fresh_dir("shared-parent");
  const fs::path dir = base / "jit";
  fs::permissions(base, fs::perms::all, fs::perm_options::replace);  // 0777, as /tmp without +t
  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  INFO(r.error);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("is not private: " + fs::canonical(base).string() +
                     " is writable by everyone (mode 0777) without the sticky bit") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / (scale_key() + ".cpp")));  // nothing written, nothing compiled

  // The sticky bit (as /tmp has) keeps others from replacing what we made there: accepted.
  fs::permissions(base, fs::perms::all | fs::perms::sticky_bit, fs::perm_options::replace);
  const JitResult sticky = jit_compile(kScaleSource, in_dir(dir));
  INFO(sticky.error);
  CHECK(sticky.ok);

  if (::geteuid() == 0) {  // only root can give a folder to another user
    fs::permissions(base, fs::perms::owner_all, fs::perm_options::replace);
    REQUIRE(::chown(base.c_str(), 65534, 65534) == 0);
    const JitResult other = jit_compile(kScaleSource, in_dir(dir));
    CHECK_FALSE(other.ok);
    CHECK(other.error.find(fs::canonical(base).string() + " is owned by uid 65534, not by you or root") !=
          std::string::npos);
    REQUIRE(::chown(base.c_str(), 0, 0) == 0);
  }
}

TEST_CASE("a symlink at the source's name is refused and its target left untouched") {
  const fs::path dir = fresh_dir("symlinked-source");
  const fs::path victim = tilescope::test::scratch_dir() / "victim.txt";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir / (scale_key() + ".cpp"));

  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  INFO(r.error);
  CHECK(slurp(victim) == "precious");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("symbolic link") != std::string::npos);
}

TEST_CASE("a symlinked object is refused, not followed") {
  const fs::path marker = tilescope::test::scratch_dir() / "planted-ran-link";
  fs::remove(marker);
  const fs::path planted = planted_object(marker);
  const fs::path dir = fresh_dir("symlinked-object");
  fs::create_symlink(planted, dir / (scale_key() + ".so"));
  const JitResult r = jit_compile(kScaleSource, in_dir(dir));
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("symbolic link") != std::string::npos);
}

TEST_CASE("without HOME and XDG_CACHE_HOME the cache is a per-user folder, still checked") {
  // Rule: a shared temporary folder has one name per user, and a name someone else prepared
  // (here a symlink to a folder of theirs) is refused instead of used.
  EnvSave home("HOME"), xdg("XDG_CACHE_HOME"), tmp("TMPDIR");
  const fs::path tmpdir = fresh_dir("tmpdir");
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  setenv("TMPDIR", tmpdir.c_str(), 1);
  const fs::path expected = tmpdir / ("tilescope-jit-" + std::to_string(geteuid()));
  CHECK(jit_cache_dir({}) == expected.string());

  const fs::path theirs = fresh_dir("theirs");
  fs::create_directory_symlink(theirs, expected);
  const JitResult r = jit_compile(kScaleSource);
  INFO(r.error);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("symbolic link") != std::string::npos);
  CHECK(fs::is_empty(theirs));
}

TEST_CASE("the cache keeps the newest max_entries objects and drops failed compiles' sources") {
  // Hand count: five old objects aged 5..1 hours, max_entries 3 → the new object plus the two
  // youngest old ones remain; the orphan source (its compile failed) goes.
  const fs::path dir = fresh_dir("bounded");
  const auto now = fs::file_time_type::clock::now();
  std::vector<std::string> old_keys;
  for (int i = 0; i < 5; ++i) {
    const std::string key = "00000000000000a" + std::to_string(i);
    old_keys.push_back(key);
    std::ofstream(dir / (key + ".so")) << "x";
    std::ofstream(dir / (key + ".cpp")) << "x";
    fs::last_write_time(dir / (key + ".so"), now - std::chrono::hours(5 - i));
  }
  std::ofstream(dir / "00000000000000ff.cpp") << "does not compile";
  JitOptions o = in_dir(dir);
  o.max_entries = 3;
  const JitResult r = jit_compile(kScaleSource, o);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(fs::exists(r.object_path));
  CHECK(fs::exists(dir / (old_keys[4] + ".so")));
  CHECK(fs::exists(dir / (old_keys[3] + ".so")));
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(fs::exists(dir / (old_keys[size_t(i)] + ".so")));
    CHECK_FALSE(fs::exists(dir / (old_keys[size_t(i)] + ".cpp")));
  }
  CHECK_FALSE(fs::exists(dir / "00000000000000ff.cpp"));
  size_t objects = 0;
  for (const auto& e : fs::directory_iterator(dir))
    objects += e.path().extension() == ".so" ? 1 : 0;
  CHECK(objects == 3);
}
