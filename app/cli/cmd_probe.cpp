// `tilescope-cli probe`: measures this CPU's memory levels (streaming bandwidth and the cost of a
// strided, not prefetchable, line per level) and its one-thread FMA peak, prints them, and writes a
// machine file — `host-measured` — that `simulate`, the roofline and the app can use like any
// preset. Every number in that file is measured here, on one thread.
#include "commands.h"

#include "kernels/cpu/harness.h"
#include "kernels/cpu/probe.h"
#include "sim/predict/machine.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace tilescope::cli {
namespace {

struct ProbeFlags {
  std::string out;
  bool quick = false;
  bool no_write = false;
};

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

std::string machine_text(const kernels::MemoryProbe& p, const kernels::Peaks& peaks,
                         const kernels::HostInfo& host, const std::string& caches_source) {
  std::ostringstream o;
  o.precision(4);
  o << "# tilescope machine: this computer (" << host.cpu << "), measured by `tilescope-cli probe`"
    << " on " << today() << ".\n"
    << "# Caches from " << caches_source << ".\n# Per level, measured on one thread: " << p.method
    << ".\n"
    << "# bandwidth = the streaming read rate; strided_line = the time per line of the strided "
       "walk.\n"
    << "# Peak: " << peaks.source << ".\n"
    << "name = host-measured\nkind = cpu\n"
    << "description = This computer, measured on one thread by tilescope-cli probe (" << today()
    << ")\n"
    << "caches = host\ncores = 1\nclock = cpuinfo\n"
    << "peak fp32 simd = " << peaks.gflops_fp32 << " GFLOP/s\n"
    << "dependent_fma = " << peaks.dependent_fma_ns << " ns\n";
  for (const kernels::LevelProbe& l : p.levels) {
    if (l.name == "DRAM")
      o << "\n[memory DRAM]\nsize = meminfo\n";
    else
      o << "\n[level " << l.name << "]\nreplacement = lru\n";
    o << "bandwidth = " << l.stream_gbps << " GB/s\n"
      << "strided_line = " << l.strided_line_ns << " ns\n";
  }
  return o.str();
}

int run_probe(const ProbeFlags& f) {
  // The same levels `caches = host` will read back when the written file is loaded.
  const predict::HostCaches caches = predict::read_host_caches();
  std::vector<uint64_t> sizes;
  for (const memory::CacheConfig& c : caches.levels) sizes.push_back(c.size_bytes);
  std::printf("caches: %s\n", caches.source.c_str());
  // Where the file goes, checked before minutes of measuring rather than after.
  std::string out = f.out;
  if (out.empty()) out = predict::user_machine_dir() + "/host-measured.machine";
  std::ofstream file;
  if (!f.no_write) {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(out).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    file.open(out);
    if (!file) {
      std::cerr << "probe: cannot write " << out << "\n";
      return 1;
    }
  }
  std::printf("probing %zu cache levels and DRAM on one thread%s…\n", sizes.size(),
              f.quick ? " (quick: not a measurement)" : "");
  const kernels::MemoryProbe p = kernels::probe_memory(sizes, 0, f.quick);
  const kernels::Peaks peaks = kernels::measure_peaks(f.quick);
  const kernels::HostInfo host = kernels::host_info();
  std::printf("\n%-6s %12s %12s %16s %18s %14s\n", "level", "size", "buffer", "stream GB/s",
              "strided ns/line", "stream ns/line");
  for (const kernels::LevelProbe& l : p.levels) {
    std::printf("%-6s %10.0f K %10.0f K %16.1f %18.2f %14.2f\n", l.name.c_str(),
                double(l.size_bytes) / 1024, double(l.buffer_bytes) / 1024, l.stream_gbps,
                l.strided_line_ns, 64.0 / l.stream_gbps);
  }
  std::printf("peak fp32 (one thread): %.1f GFLOP/s; one dependent multiply-add: %.2f ns\n",
              peaks.gflops_fp32, peaks.dependent_fma_ns);
  const std::string text = machine_text(p, peaks, host, caches.source);
  if (f.no_write) {
    std::printf("\n%s", text.c_str());
    return 0;
  }
  if (!(file << text)) {
    std::cerr << "probe: cannot write " << out << "\n";
    return 1;
  }
  file.close();
  // Read it back through the machine parser, so a file that does not load is never left behind
  // silently.
  try {
    predict::load_machine_file(out);
  } catch (const predict::MachineError& e) {
    std::cerr << "probe: wrote " << out << " but it does not load: " << e.what() << "\n";
    return 2;
  }
  std::printf("\nwrote %s (use it as --machine host-measured)\n", out.c_str());
  return 0;
}

const CommandRegistrar registrar{
    "probe",
    "Measure this CPU's memory levels (streaming and strided reads) and peak; write a machine file",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<ProbeFlags>();
      sub.add_option("--out", flags->out,
                     "Machine file to write (default: the user machine directory, "
                     "host-measured.machine)");
      sub.add_flag("--quick", flags->quick, "Short runs and small buffers (a smoke test)");
      sub.add_flag("--print", flags->no_write, "Print the machine file instead of writing it");
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_probe(*flags);
        } catch (const predict::MachineError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const std::bad_alloc&) {
          std::cerr << "probe: not enough memory for the probe's buffers\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli
