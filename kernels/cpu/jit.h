// The CPU JIT: compiles a C++ translation unit with the system compiler into a shared object,
// caches it by a hash of source + compiler + flags, loads it and hands back `ts_kernel`.
//
// ABI of a JIT-able source (what the schedule code generator emits): a self-contained TU defining
//   extern "C" void ts_kernel(float* const* args);
// where args[i] is the i-th tensor, inputs first, then outputs, fp32, shapes baked in as constants.
// Nothing here throws to the caller: a missing compiler, a compile error or a missing symbol comes
// back as a JitResult with ok == false, a one-paragraph `error` and the compiler's own output.
//
// The cache is code that this process will run, so it must be private: the folder is created
// 0700 and used only when it is a real directory (not a symlink) owned by the current user and
// writable by nobody else; files are created exclusively (O_EXCL | O_NOFOLLOW, a unique temporary
// renamed into place); a cached object is loaded only when it is a regular file owned by the user
// and not group/world-writable. Anything else there is refused with a message, never followed.
// The key covers the source, the compiler's path and --version, the flags and (for -march=native,
// whose meaning depends on the host) the CPU's model name and feature flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tilescope::kernels {

using JitKernelFn = void (*)(float* const* args);

struct JitOptions {
  std::string compiler;                     // empty: $CXX, else the compiler that built tilescope
  std::string flags = "-O3 -march=native";  // optimisation flags, shown to the user
  // empty: $XDG_CACHE_HOME/tilescope/jit, else ~/.cache/tilescope/jit, else (neither set)
  // $TMPDIR/tilescope-jit-<uid>
  std::string cache_dir;
  bool use_cache = true;  // false: always recompile (the new object still replaces the cached one)
  // After each compile the cache keeps the newest this many objects (and their sources) and at
  // most max_cache_bytes of objects; older entries, sources of failed compiles and leftovers of
  // interrupted ones are removed.
  std::size_t max_entries = 64;
  std::uint64_t max_cache_bytes = 256ull << 20;
};

// A loaded shared object; unloads it when the last owner lets go. Keep it alive while calling
// kernel().
class JitModule {
 public:
  JitModule(void* handle, JitKernelFn kernel, std::string path);
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;
  JitKernelFn kernel() const { return m_kernel; }
  const std::string& path() const { return m_path; }

 private:
  void* m_handle;
  JitKernelFn m_kernel;
  std::string m_path;
};

struct JitResult {
  bool ok = false;
  std::string command;          // the exact compile command (also set on a cache hit)
  std::string compiler_output;  // the compiler's stdout + stderr, verbatim
  std::string error;            // what went wrong, in one paragraph; empty when ok
  bool cache_hit = false;
  double compile_seconds = 0.0;  // 0 on a cache hit
  std::string cache_key;         // 16 hex digits
  std::string object_path;       // the cached shared object
  std::shared_ptr<JitModule> module;
};

JitResult jit_compile(const std::string& source, const JitOptions& options = {});

// The compiler jit_compile() would use for `options` (after $CXX and defaults are applied).
std::string jit_resolve_compiler(const JitOptions& options);
// The cache folder jit_compile() would use for `options`.
std::string jit_cache_dir(const JitOptions& options);

}  // namespace tilescope::kernels
