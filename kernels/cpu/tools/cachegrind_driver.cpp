// Runs one generated CPU kernel (emit_cpp's ts_kernel) once on buffers placed at the simulator's
// trace addresses modulo 2 MiB, after evicting the caches, so cachegrind's per-function counts for
// ts_kernel can be compared with the simulated misses (scripts/cachegrind_compare.sh).
//
// Usage: cachegrind_driver BASE:ELEMS ... (one per kernel argument, in ts_kernel's order; BASE is
// the byte address the simulator's trace gives the tensor, ELEMS its allocated fp32 elements).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" void ts_kernel(float* const* args);

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BASE:ELEMS ...\n", argv[0]);
    return 1;
  }
  constexpr uint64_t kPeriod = uint64_t{1} << 21;  // 2 MiB: larger than any set-index period used
  std::vector<uint64_t> base, elems;
  uint64_t end = 0;
  for (int a = 1; a < argc; ++a) {
    unsigned long long b = 0, e = 0;
    if (std::sscanf(argv[a], "%llu:%llu", &b, &e) != 2 || e == 0) {
      std::fprintf(stderr, "argument %d: expected BASE:ELEMS, got '%s'\n", a, argv[a]);
      return 1;
    }
    base.push_back(b);
    elems.push_back(e);
    end = std::max<uint64_t>(end, b + e * 4);
  }
  // One arena whose address equals the trace's modulo kPeriod at every tensor.
  const uint64_t first = base[0] / kPeriod * kPeriod;
  auto* arena =
      static_cast<char*>(std::aligned_alloc(kPeriod, (end - first + kPeriod) / kPeriod * kPeriod));
  if (!arena) {
    std::fprintf(stderr, "out of memory\n");
    return 1;
  }
  std::vector<float*> args;
  for (size_t t = 0; t < base.size(); ++t) {
    float* p = reinterpret_cast<float*>(arena + (base[t] - first));
    for (uint64_t i = 0; i < elems[t]; ++i) p[i] = float((i * 7 + t) % 13) * 0.125f;
    args.push_back(p);
  }
  std::vector<float> junk(size_t{64} << 20 >> 2, 1.0f);  // 64 MiB
  const float s = evict_caches(junk);
  ts_kernel(args.data());
  // Print something the kernel computed so the call cannot be dropped.
  std::printf("%g %g\n", double(args.back()[0]), double(s));
  std::free(arena);
  return 0;
}
