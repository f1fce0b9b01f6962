// Runs one generated CPU kernel (emit_cpp's ts_kernel) once on buffers placed at the simulator's
// trace addresses modulo 2 MiB, after evicting the caches, so cachegrind's per-function counts for
// ts_kernel can be compared with the simulated misses (scripts/cachegrind_compare.sh).
//
// Usage: cachegrind_driver [--acc-at ACC:OFF] [--probe BYTES] BASE:ELEMS ...
//   BASE:ELEMS   one per kernel argument, in ts_kernel's order: the byte address the simulator's
//                trace gives the tensor, and its allocated fp32 elements.
//   --acc-at     the kernel keeps an accumulator tile on its stack; the trace puts it at byte
//                address ACC. The kernel runs on a stack of this program's own whose top is
//                OFF bytes above the array (OFF from --probe), so the array lands at ACC modulo
//                2 MiB, as the tensors do, and falls in the same cache sets as in the trace.
//   --probe      (run natively, not under valgrind) finds where ts_kernel's BYTES-byte stack
//                array lies below the top of the stack: runs the kernel twice on a stack filled
//                with a marker, with different inputs, and looks for the one 64-byte-aligned
//                BYTES-long block whose every word differs between the runs (the accumulators'
//                final values; saved registers and spilled pointers or counters are the same
//                in both runs). Prints OFF; with --acc-at, checks the array lands at ACC instead.
#include <ucontext.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" void ts_kernel(float* const* args);

namespace {

constexpr uint64_t kPeriod = uint64_t{1} << 21;  // 2 MiB: larger than any set-index period used
constexpr uint64_t kStackRegion = 4 * kPeriod;   // the kernel's stack area
constexpr uint64_t kProbeBytes = 1 << 20;        // below the top: what --probe compares

// Touches a buffer larger than any simulated LL once, so the kernel starts as the simulator does:
// with none of its lines cached. Kept out of line so cachegrind charges it to this function.
[[gnu::noinline]] float evict_caches(std::vector<float>& junk) {
  float s = 0;
  for (size_t i = 0; i < junk.size(); i += 16) {
    junk[i] += 1.0f;
    s += junk[i];
  }
  return s;
}

ucontext_t g_main, g_kernel;
float* const* g_args = nullptr;
std::vector<float>* g_junk = nullptr;
float g_junk_sum = 0;

// The kernel's context: evict (when asked), then the kernel, on the stack this program placed.
void kernel_entry() {
  if (g_junk) g_junk_sum = evict_caches(*g_junk);
  ts_kernel(g_args);
}

void run_on_stack(char* top, char* region) {
  getcontext(&g_kernel);
  g_kernel.uc_stack.ss_sp = region;
  g_kernel.uc_stack.ss_size = size_t(top - region);
  g_kernel.uc_link = &g_main;
  makecontext(&g_kernel, kernel_entry, 0);
  swapcontext(&g_main, &g_kernel);
}

void fill_inputs(const std::vector<float*>& args, const std::vector<uint64_t>& elems, int variant) {
  for (size_t t = 0; t < args.size(); ++t)
    for (uint64_t i = 0; i < elems[t]; ++i)
      args[t][i] = variant == 0 ? float((i * 7 + t) % 13) * 0.125f
                                : float((i * 5 + t + 3) % 11) * 0.25f + 0.5f;
}

bool parse_pair(const char* s, unsigned long long* a, unsigned long long* b) {
  return std::sscanf(s, "%llu:%llu", a, b) == 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> base, elems;
  bool probe = false, acc_at = false;
  unsigned long long acc = 0, acc_off = 0, probe_bytes = 0;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--probe") == 0 && a + 1 < argc) {
      probe = true;
      probe_bytes = std::strtoull(argv[++a], nullptr, 10);
      if (probe_bytes == 0 || probe_bytes % 4 != 0 || probe_bytes > kProbeBytes / 2) {
        std::fprintf(stderr, "--probe: expected a positive multiple of 4 bytes, got '%s'\n",
                     argv[a]);
        return 1;
      }
      continue;
    }
    if (std::strcmp(argv[a], "--acc-at") == 0 && a + 1 < argc) {
      acc_at = true;
      if (!parse_pair(argv[++a], &acc, &acc_off) || acc_off == 0 || acc_off >= kProbeBytes) {
        std::fprintf(stderr, "--acc-at: expected ACC:OFF with 0 < OFF < %llu, got '%s'\n",
                     static_cast<unsigned long long>(kProbeBytes), argv[a]);
        return 1;
      }
      continue;
    }
    unsigned long long b = 0, e = 0;
    if (!parse_pair(argv[a], &b, &e) || e == 0) {
      std::fprintf(stderr, "argument %d: expected BASE:ELEMS, got '%s'\n", a, argv[a]);
      return 1;
    }
    base.push_back(b);
    elems.push_back(e);
  }
  if (base.empty()) {
    std::fprintf(stderr, "usage: %s [--acc-at ACC:OFF] [--probe BYTES] BASE:ELEMS ...\n", argv[0]);
    return 1;
  }
  uint64_t end = 0;
  for (size_t t = 0; t < base.size(); ++t) end = std::max<uint64_t>(end, base[t] + elems[t] * 4);
  // One arena whose address equals the trace's modulo kPeriod at every tensor.
  const uint64_t first = base[0] / kPeriod * kPeriod;
  auto* arena =
      static_cast<char*>(std::aligned_alloc(kPeriod, (end - first + kPeriod) / kPeriod * kPeriod));
  auto* stack = static_cast<char*>(std::aligned_alloc(kPeriod, kStackRegion));
  if (!arena || !stack) {
    std::fprintf(stderr, "out of memory\n");
    return 1;
  }
  std::vector<float*> args;
  for (size_t t = 0; t < base.size(); ++t)
    args.push_back(reinterpret_cast<float*>(arena + (base[t] - first)));
  g_args = args.data();
  // The stack top: OFF above ACC modulo kPeriod, at least 2 MiB into the region so the kernel
  // has room below; without --acc-at, a period boundary.
  char* top = stack + 2 * kPeriod;
  if (acc_at) top += (acc + acc_off) % kPeriod;

  if (probe) {
    const uint64_t n = kProbeBytes / 4;
    std::vector<uint32_t> snap[2];
    for (int run = 0; run < 2; ++run) {
      std::memset(top - kProbeBytes, 0xA5, kProbeBytes);
      fill_inputs(args, elems, run);
      run_on_stack(top, stack);
      snap[run].resize(n);
      std::memcpy(snap[run].data(), top - kProbeBytes, kProbeBytes);
    }
    // 64-byte-aligned starts of fully differing BYTES-long blocks.
    std::vector<uint64_t> found;
    const uint64_t words = probe_bytes / 4;
    std::vector<uint64_t> run_len(n + 1, 0);  // differing words from i on
    for (uint64_t i = n; i-- > 0;) run_len[i] = snap[0][i] != snap[1][i] ? run_len[i + 1] + 1 : 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(top - kProbeBytes)) + i * 4;
      if (addr % 64 == 0 && run_len[i] >= words) found.push_back(addr);
    }
    if (found.size() != 1) {
      std::fprintf(stderr,
                   "--probe: expected one 64-byte-aligned %llu-byte block of accumulators on the "
                   "stack, found %zu\n",
                   probe_bytes, found.size());
      return 3;
    }
    const uint64_t off = uint64_t(reinterpret_cast<uintptr_t>(top)) - found[0];
    if (acc_at) {
      if (found[0] % kPeriod != acc % kPeriod) {
        std::fprintf(stderr, "--probe: the array is at %llu modulo 2 MiB, wanted %llu\n",
                     static_cast<unsigned long long>(found[0] % kPeriod), acc % kPeriod);
        return 3;
      }
      std::printf("ok\n");
    } else {
      std::printf("%llu\n", static_cast<unsigned long long>(off));
    }
    return 0;
  }

  fill_inputs(args, elems, 0);
  std::vector<float> junk(size_t{64} << 20 >> 2, 1.0f);  // 64 MiB
  g_junk = &junk;
  run_on_stack(top, stack);
  // Print something the kernel computed so the call cannot be dropped.
  std::printf("%g %g\n", double(args.back()[0]), double(g_junk_sum));
  std::free(stack);
  std::free(arena);
  return 0;
}
