// `tilescope-cli bench-sim`: simulated accesses per second of the memory simulator on one core —
// (a) one cache level where every access hits, (b) a machine's full hierarchy on a tiled GEMM
// address stream — plus the process's peak memory, which must stay bounded for any trace length.
#include "commands.h"

#include "sim/memory/access.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

struct BenchSimFlags {
  std::string machine = "host";
  int64_t n = 512;
  int64_t tile = 32;
  int runs = 5;
  uint64_t hit_accesses = 200'000'000;
};

// Buffers accesses and hands them to the sink in batches through the virtual interface, exactly
// as a schedule walker would.
class Emitter {
 public:
  explicit Emitter(memory::AccessSink& sink) : m_sink(sink), m_buf(4096) {}
  ~Emitter() { flush(); }
  void emit(uint64_t addr, memory::AccessKind kind, int16_t tensor) {
    memory::Access& a = m_buf[m_n++];
    a.addr = addr;
    a.size = 4;
    a.kind = kind;
    a.tensor = tensor;
    if (m_n == m_buf.size()) flush();
  }
  void flush() {
    if (m_n) m_sink.access_batch(m_buf.data(), m_n);
    m_n = 0;
  }

 private:
  memory::AccessSink& m_sink;
  std::vector<memory::Access> m_buf;
  size_t m_n = 0;
};

// C += A·B, n×n row-major fp32 matrices at A = 0, B = 4n², C = 8n² (bytes), tiled by T in i, j, k:
// for ii, jj, kk: for i, j in the tile: read C[i][j]; for k: read A[i][k], B[k][j]; write C[i][j].
uint64_t tiled_gemm_trace(memory::AccessSink& sink, int64_t n, int64_t t) {
  Emitter out(sink);
  const uint64_t a0 = 0, b0 = 4 * n * n, c0 = 8 * n * n;
  uint64_t count = 0;
  for (int64_t ii = 0; ii < n; ii += t)
    for (int64_t jj = 0; jj < n; jj += t)
      for (int64_t kk = 0; kk < n; kk += t)
        for (int64_t i = ii; i < std::min(n, ii + t); ++i)
          for (int64_t j = jj; j < std::min(n, jj + t); ++j) {
            const uint64_t c = c0 + 4 * (i * n + j);
            out.emit(c, memory::AccessKind::Read, 2);
            const int64_t kend = std::min(n, kk + t);
            for (int64_t k = kk; k < kend; ++k) {
              out.emit(a0 + 4 * (i * n + k), memory::AccessKind::Read, 0);
              out.emit(b0 + 4 * (k * n + j), memory::AccessKind::Read, 1);
            }
            out.emit(c, memory::AccessKind::Write, 2);
            count += 2 + 2 * static_cast<uint64_t>(kend - kk);
          }
  return count;
}

// Sweeps `bytes` of fp32 data with the given stride until `count` accesses have been made.
uint64_t sweep_trace(memory::AccessSink& sink, uint64_t bytes, uint64_t stride, uint64_t count) {
  Emitter out(sink);
  uint64_t addr = 0;
  for (uint64_t i = 0; i < count; ++i) {
    out.emit(addr, memory::AccessKind::Read, 0);
    addr += stride;
    if (addr >= bytes) addr = 0;
  }
  return count;
}

// "L1 48 KiB 12-way, L2 …": the levels whose tables the figure above counts.
std::string levels_summary(const predict::Machine& machine) {
  std::string out;
  for (const memory::CacheConfig& c : machine.levels) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %llu KiB %u-way", out.empty() ? "" : ", ", c.name.c_str(),
                  static_cast<unsigned long long>(c.size_bytes / 1024), c.effective_ways());
    out += buf;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The value of a "Vm…:" line of /proc/self/status, e.g. "131356 kB".
std::string vm_status(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const size_t start = line.find_first_not_of(" \t", key.size());
      return start == std::string::npos ? "?" : line.substr(start);
    }
  return "(not available)";
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Rates per second of this thread's CPU time and per second of wall time. On a shared machine
// the wall rate also counts time the scheduler gave to other processes; the CPU-time rate is the
// simulator's own speed on one core.
struct Rate {
  double cpu = 0, wall = 0;
};

template <typename F>
Rate accesses_per_second(F&& run, uint64_t& accesses) {
  double c0 = thread_cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  accesses = run();
  auto t1 = std::chrono::steady_clock::now();
  double c1 = thread_cpu_seconds();
  double n = static_cast<double>(accesses);
  return {n / (c1 - c0), n / std::chrono::duration<double>(t1 - t0).count()};
}

void print_rate(const char* label, const std::vector<Rate>& rates, const std::string& note) {
  std::vector<double> cpu, wall;
  for (const Rate& r : rates) {
    cpu.push_back(r.cpu);
    wall.push_back(r.wall);
  }
  std::printf(
      "%-34s median %7.1f M accesses/s of CPU time (min %.1f, max %.1f; wall-clock median "
      "%.1f; %zu runs)  %s\n",
      label, median(cpu) / 1e6, *std::min_element(cpu.begin(), cpu.end()) / 1e6,
      *std::max_element(cpu.begin(), cpu.end()) / 1e6, median(wall) / 1e6, rates.size(),
      note.c_str());
}

int run_bench_sim(const BenchSimFlags& f) {
  if (f.n <= 0 || f.tile <= 0 || f.runs <= 0) {
    std::cerr << "bench-sim: --n, --tile and --runs must be positive\n";
    return 1;
  }
  // Resident memory before any simulation: the program and its shared libraries (a CUDA-enabled
  // build maps cuBLAS, cuDNN and NVRTC at start-up), which the peak below includes.
  const std::string rss_at_start = vm_status("VmRSS:");
  std::printf("memory simulator throughput, one thread (medians of %d runs)\n\n", f.runs);

  // (a) One level, all hits: a 32 KiB 8-way LRU cache, warmed, then swept over 16 KiB.
  memory::CacheConfig l1;
  l1.name = "L1";
  l1.size_bytes = 32 * 1024;
  l1.ways = 8;
  l1.line_bytes = 64;
  // Through the shared pipeline's raw-trace entry (predict::run_trace), as `simulate --trace`
  // runs a din file: a machine of that one level, no write-back at the end.
  predict::Machine one_level;
  one_level.name = "one 32 KiB level";
  one_level.levels = {l1};
  predict::RunOptions raw;
  raw.write_back_all = false;
  for (uint64_t stride : {uint64_t{4}, uint64_t{64}}) {
    std::vector<Rate> rates;
    uint64_t misses = 0, hits = 0, n = 0;
    for (int r = 0; r < f.runs; ++r) {
      const predict::TraceRun run = predict::run_trace(
          one_level,
          [&](memory::AccessSink& sink) {
            sweep_trace(sink, 16 * 1024, stride, 16 * 1024 / stride);  // warm-up: compulsory misses
            rates.push_back(accesses_per_second(
                [&] { return sweep_trace(sink, 16 * 1024, stride, f.hit_accesses); }, n));
            return n;
          },
          raw);
      // Of the timed sweep: the warm-up made every miss (compulsory) and the rest of its
      // accesses hit.
      const uint64_t warm = 16 * 1024 / stride;
      misses =
          run.hierarchy->counters(0).misses - std::min(warm, run.hierarchy->counters(0).misses);
      hits = run.hierarchy->counters(0).hits -
             (warm - std::min(warm, run.hierarchy->counters(0).misses));
    }
    std::string note = "(" + std::to_string(hits) + " hits, " + std::to_string(misses) + " misses)";
    print_rate(
        stride == 4 ? "(a) 1 level, all hits, stride 4 B" : "    1 level, all hits, stride 64 B",
        rates, note);
  }

  // (b) A machine's whole hierarchy on a tiled GEMM stream.
  predict::Machine machine = predict::load_machine(f.machine);
  std::vector<Rate> rates;
  uint64_t n = 0;
  std::string summary;
  size_t cache_bytes = 0;
  for (int r = 0; r < f.runs; ++r) {
    const predict::TraceRun run = predict::run_trace(
        machine,
        [&](memory::AccessSink& sink) {
          rates.push_back(
              accesses_per_second([&] { return tiled_gemm_trace(sink, f.n, f.tile); }, n));
          return n;
        },
        raw);
    const memory::Hierarchy& h = *run.hierarchy;
    cache_bytes = h.cache_memory_bytes();
    summary.clear();
    for (int k = 0; k < h.level_count(); ++k) {
      memory::Counters c = h.counters(k);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.2f%% miss", k ? ", " : "",
                    h.config().levels[k].name.c_str(),
                    100.0 * static_cast<double>(c.misses) /
                        static_cast<double>(std::max<uint64_t>(1, c.accesses)));
      summary += buf;
    }
  }
  std::string label = "(b) " + std::to_string(machine.levels.size()) + " levels, tiled GEMM";
  print_rate(label.c_str(), rates, "");
  std::printf("    machine %s (%s); GEMM %lld^3, %lld-tiles, fp32 row-major: %llu accesses; %s\n",
              machine.name.c_str(), machine.source.c_str(), static_cast<long long>(f.n),
              static_cast<long long>(f.tile), static_cast<unsigned long long>(n), summary.c_str());
  std::printf("    one hierarchy's tag stores and replacement state: %.1f MB (%s)\n",
              static_cast<double>(cache_bytes) / 1e6, levels_summary(machine).c_str());
  std::printf(
      "\npeak memory (VmHWM): %s; resident before any simulation (program and libraries): %s\n",
      vm_status("VmHWM:").c_str(), rss_at_start.c_str());
  return 0;
}

const CommandRegistrar registrar{
    "bench-sim", "Measure the memory simulator's speed (accesses per second) and peak memory",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<BenchSimFlags>();
      sub.add_option("--machine", flags->machine, "Machine for the hierarchy run (b)")
          ->capture_default_str();
      sub.add_option("--n", flags->n, "GEMM size n (n x n x n)")->capture_default_str();
      sub.add_option("--tile", flags->tile, "GEMM tile size")->capture_default_str();
      sub.add_option("--runs", flags->runs, "Runs per measurement (the median is reported)")
          ->capture_default_str();
      sub.add_option("--hit-accesses", flags->hit_accesses, "Accesses per all-hits run")
          ->capture_default_str();
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_bench_sim(*flags);
        } catch (const predict::MachineError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const std::invalid_argument& e) {
          std::cerr << "bench-sim: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli
