// Memory probe: streaming and strided reads per level, one thread. See probe.h.
#include "kernels/cpu/probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

namespace tilescope::kernels {
namespace {

constexpr uint64_t kLine = 64;
constexpr uint64_t kRow = 4096;  // one line per row: every load of the strided walk is a new page

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint32_t, FreeDeleter>;

Buffer make_buffer(uint64_t bytes) {
  void* p = std::aligned_alloc(kRow, bytes);
  if (!p) throw std::bad_alloc();
  // Touch every page (and give the data a value) so page faults are not timed.
  std::memset(p, 1, bytes);
  return Buffer(static_cast<uint32_t*>(p));
}

// Integer sums: the compiler may vectorise and reassociate them (no float rounding), so the loop
// is bound by loads, not by an add chain. `sink` keeps the loads from being optimised away.
volatile uint32_t sink;

uint32_t stream_pass(const uint32_t* p, uint64_t words) {
  uint32_t acc[16] = {};
  for (uint64_t i = 0; i + 16 <= words; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += p[i + uint64_t(j)];
  uint32_t s = 0;
  for (uint32_t a : acc) s += a;
  return s;
}

// Column after column of 64-byte lines down 4 KiB rows: rows × 64 loads, each a different line
// and page than the one before; the loads are independent (only an integer add joins them).
uint32_t strided_pass(const uint32_t* p, uint64_t rows) {
  uint32_t s0 = 0, s1 = 0;
  constexpr uint64_t words_per_row = kRow / 4, words_per_line = kLine / 4;
  for (uint64_t col = 0; col < kRow / kLine; ++col) {
    const uint32_t* c = p + col * words_per_line;
    uint64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
      s0 += c[r * words_per_row];
      s1 += c[(r + 1) * words_per_row];
    }
    if (r < rows) s0 += c[r * words_per_row];
  }
  return s0 + s1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best time per pass of `pass`, repeating passes until `budget_s` is spent (at least 3 timed
// rounds after one warm-up pass, which brings the buffer into the level being probed).
template <typename F>
double best_pass_seconds(F&& pass, double budget_s) {
  sink = pass();
  const auto start = std::chrono::steady_clock::now();
  double best = 1e30;
  for (int round = 0; round < 3 || seconds_since(start) < budget_s; ++round) {
    // Short passes are batched so the clock's resolution does not matter.
    int batch = 1;
    double t = 0;
    for (;;) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) sink = pass();
      t = seconds_since(t0);
      if (t > 2e-3 || batch >= (1 << 20)) break;
      batch *= 4;
    }
    best = std::min(best, t / batch);
    if (round > 1000) break;
  }
  return best;
}

// `strided_rows`: how many 4 KiB rows the strided walk spans (0 = the whole buffer).
LevelProbe probe_level(const std::string& name, uint64_t size, uint64_t buffer,
                       uint64_t strided_rows, bool quick) {
  LevelProbe lp;
  lp.name = name;
  lp.size_bytes = size;
  lp.buffer_bytes = buffer = std::max<uint64_t>(kRow, buffer / kRow * kRow);
  Buffer b = make_buffer(buffer);
  const uint32_t* p = b.get();
  const double budget = quick ? 0.02 : 0.3;
  const double ts = best_pass_seconds([&] { return stream_pass(p, buffer / 4); }, budget);
  lp.stream_gbps = double(buffer) / ts / 1e9;
  const uint64_t rows = strided_rows ? std::min(strided_rows, buffer / kRow) : buffer / kRow;
  const double tr = best_pass_seconds([&] { return strided_pass(p, rows); }, budget);
  lp.strided_line_ns = tr / double(rows * (kRow / kLine)) * 1e9;
  return lp;
}

}  // namespace

MemoryProbe probe_memory(const std::vector<uint64_t>& cache_bytes, uint64_t dram_buffer_bytes,
                         bool quick) {
  MemoryProbe r;
  // A level's buffer: at most half its size (it fits, with room for code and stack; a shared
  // last level may be busy with other cores or tenants), at most four times the level above
  // (that is enough to miss it), and at least twice the level above.
  // The strided walk spans at most kStridedRows pages on cache levels: one line per page means
  // one page per load, and 1,024 pages stay within a second-level TLB (1,536–2,048 entries on
  // current x86 cores), so a cache level's strided cost is not a page walk's. For DRAM the walk
  // must span more than the last level, so it pays page walks too, and the file says so.
  constexpr uint64_t kStridedRows = 1024;
  uint64_t above = 0;
  for (size_t i = 0; i < cache_bytes.size(); ++i) {
    uint64_t buf = cache_bytes[i] / 2;
    if (above) buf = std::max(std::min(buf, 4 * above), 2 * above);
    if (quick) buf = std::min<uint64_t>(buf, uint64_t(8) << 20);
    std::string name = "L";  // (not "L" + …: GCC 12 -O3 warns falsely on that, -Wrestrict)
    name += std::to_string(i + 1);
    r.levels.push_back(probe_level(name, cache_bytes[i], buf, kStridedRows, quick));
    above = cache_bytes[i];
  }
  uint64_t dram = dram_buffer_bytes;
  if (dram == 0)
    dram = std::clamp<uint64_t>(4 * above, uint64_t(256) << 20, uint64_t(1) << 30);
  if (quick) dram = std::min<uint64_t>(dram, uint64_t(32) << 20);
  r.levels.push_back(probe_level("DRAM", 0, dram, 0, quick));
  std::ostringstream m;
  m << "one thread; per level a buffer that fits it but not the level above; streaming = a "
       "front-to-back read (integer sum, 16 independent lanes), strided = one 64 B line per "
       "4 KiB row, column after column, over at most 1024 rows on cache levels (within the "
       "second-level TLB) and the whole buffer for DRAM (with page walks); best pass of several"
    << (quick ? " (quick mode: short runs, small buffers — not a measurement)" : "");
  r.method = m.str();
  return r;
}

}  // namespace tilescope::kernels
