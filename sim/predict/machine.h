// Machines: compute peaks, cache levels, main memory and scratchpad of a CPU or GPU, loaded from
// the line-based files in assets/machines/ (or from sysfs for this computer's caches).
//
// File format (one `key = value` per line, `#` comments, `[kind name]` sections):
//   name = h100                 kind = gpu          sms = 132          clock = 1.98 GHz
//   dependent_fma = 4 cycles    (latency of a serial multiply-add chain; CPU machines)
//   peak fp32 simt = 66.9 TFLOP/s                   (peak <dtype> <unit> = rate)
//   [level L1]   size, line, sector, ways (a number or `full`), replacement (lru fifo random plru),
//                write (back | through), write_allocate (yes | no), writebacks (below |
//                dropped: counted but sent nowhere, as cachegrind models), inclusion (inclusive |
//                non-inclusive), seed, bandwidth, latency (cycles or ns), shared_by
//   [memory HBM3]      size, bandwidth, latency
//   [scratchpad shared] size, banks, bank_width, warp_size, bandwidth, latency
// Units: B KiB MiB GiB KB MB GB; B/s KB/s GB/s TB/s (and GiB/s…); FLOP/s GFLOP/s TFLOP/s TOP/s;
// ns us ms s cycles; Hz MHz GHz. `caches = host` (or its older spelling `caches = sysfs`) fills
// the levels from this computer: /sys/devices/system/cpu/cpu0/cache, else CPUID (as glibc's
// sysconf answers it), else a labelled generic default; `[level Lk]` sections then only adjust
// those levels, and `Machine::notes` says which source was used. Every error names file:line.
// Geometry is bounded (at most 8 levels, 2^23 lines a level, lines of 1 B .. 64 KiB, ways ≤ 2^16)
// so a typo cannot make the simulator allocate gigabytes.
#pragma once

#include "sim/memory/hierarchy.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::predict {

class MachineError : public std::runtime_error {
 public:
  MachineError(std::string file, int line, const std::string& message);
  const std::string& file() const { return m_file; }
  int line() const { return m_line; }

 private:
  std::string m_file;
  int m_line;
};

struct ComputePeak {
  std::string dtype;  // "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64"
  std::string unit;   // "simt", "tensor", "simd"
  double ops_per_s = 0;
  std::string note;  // how it was obtained when computed (e.g. host CPU from cpuinfo)
};

struct Machine {
  std::string name;
  std::string kind = "cpu";  // "cpu" or "gpu"
  std::string description;
  std::string source;   // file it came from
  int cores = 1;        // CPU cores, or GPU SMs
  double clock_hz = 0;  // 0 = not known
  std::vector<ComputePeak> peaks;
  // Latency of one fp32 multiply-add that waits for the previous one (key `dependent_fma`, in ns
  // or cycles; `tilescope-cli probe` measures it). 0 = not known.
  double dependent_fma_s = 0;
  std::vector<memory::CacheConfig> levels;  // closest to the core first
  memory::MemoryConfig memory;
  std::optional<memory::ScratchpadConfig> scratchpad;
  // Seconds per line for strided (not prefetchable) reads served by a level or memory, by name;
  // measured by `tilescope-cli probe` (key `strided_line`). Absent = unknown.
  std::map<std::string, double> strided_line_s;
  // Where figures of a host machine came from when they were not read from a file: "caches:
  // sysfs (/sys/…)", "caches: CPUID via sysconf (sysfs has no cache information)", "clock:
  // assumed 2.0 GHz (…)". Empty for machines described wholly by their file.
  std::vector<std::string> notes;
  // Limits a schedule must respect (predict::target_for turns them into its legality target); 0 =
  // not stated, the target's default applies. GPU: shared memory one block may use (the opt-in
  // maximum, key `smem_per_block`; the scratchpad's size when absent), 32-bit registers per
  // thread, threads per block. CPU: SIMD register width in bytes (`vector = 32 B`; the host's from
  // CPUID) and how many such registers there are.
  int64_t smem_per_block = 0;
  int64_t registers_per_thread = 0;
  int64_t threads_per_block = 0;
  int64_t vector_bytes = 0;
  int64_t vector_registers = 0;
  // What one SM holds at once, for occupancy (predict/occupancy.h): warps and blocks, 32-bit
  // registers (allocated per warp in units of `register_unit`, split evenly over the SM's
  // `sub_partitions` warp schedulers), and the shared memory the driver keeps per block
  // (`smem_reserved_per_block`) and rounds each block's to (`smem_unit`). The SM's shared memory is
  // the scratchpad's size (the largest carve-out). 0 = not stated: occupancy is then unknown.
  struct SmLimits {
    int64_t warps = 0, blocks = 0, registers = 0, register_unit = 0, sub_partitions = 0;
    int64_t smem_reserved_per_block = 0, smem_unit = 0;
    bool known() const { return warps > 0 && blocks > 0 && registers > 0 && register_unit > 0; }
  } sm;

  // Peak for a dtype and unit, 0 when the machine file does not give it.
  double peak(std::string_view dtype, std::string_view unit) const;
  memory::HierarchyConfig hierarchy() const;
};

enum class Quantity { Bytes, Bandwidth, Rate, Frequency, Count };
// Parses "48 KiB", "3.35 TB/s", "989 TFLOP/s", "1.98 GHz", "132"; throws std::invalid_argument
// with a message naming the expected units.
double parse_quantity(std::string_view text, Quantity kind);
// Latency: "4 cycles" or "80 ns" → (cycles, ns), one of them 0.
std::pair<double, double> parse_latency(std::string_view text);

// A key a machine file's section accepts, with an example value (what the machine editor offers
// for a key the file lacks).
struct MachineKey {
  const char* key;
  const char* example;
};
// The keys of a section of `kind`: "machine" (the header, before any section), "level", "memory"
// or "scratchpad"; empty for another kind. The header's 'peak <dtype> <unit>' is not listed (its
// key is a pattern). The parser's "unknown key" messages list these.
const std::vector<MachineKey>& machine_section_keys(const std::string& kind);

// Where this computer's description is read from. The defaults honour $TILESCOPE_SYSFS_ROOT (a
// folder that stands for `/`: tests and CI point it at a fake or empty tree) and
// $TILESCOPE_NO_CPUID=1 (skip the CPUID fallback, to reach the generic default).
std::string host_path(const std::string& absolute);
bool host_cpuid_allowed();
struct SysfsPaths {
  std::string cache_dir = host_path("/sys/devices/system/cpu/cpu0/cache");
  std::string cpuinfo = host_path("/proc/cpuinfo");
  std::string meminfo = host_path("/proc/meminfo");
  bool use_cpuid = host_cpuid_allowed();
};

Machine parse_machine(std::string_view text, const std::string& file, const SysfsPaths& sys = {});
Machine load_machine_file(const std::string& path, const SysfsPaths& sys = {});
// Data and unified caches of cpu0, lowest level first (named L1, L2, …). Throws MachineError.
std::vector<memory::CacheConfig> read_sysfs_caches(const std::string& cache_dir);
// This computer's data caches from the first source that answers: sysfs, CPUID (glibc's sysconf
// reads it), or a generic default (32 KiB L1, 1 MiB L2, 8 MiB L3; 64 B lines). Never throws.
struct HostCaches {
  std::vector<memory::CacheConfig> levels;
  std::string
      source;  // "sysfs (/sys/devices/system/cpu/cpu0/cache)", "CPUID …", "generic default …"
};
HostCaches read_host_caches(const SysfsPaths& sys = {});

// Where `tilescope-cli probe` saves measured machines: $XDG_DATA_HOME/tilescope/machines or
// ~/.local/share/tilescope/machines.
std::string user_machine_dir();
// Directories searched for presets: $TILESCOPE_MACHINES, ./assets/machines, user_machine_dir(),
// the source tree's.
std::vector<std::string> machine_search_path();
std::vector<std::string> preset_names();  // sorted file stems found on the search path
// A path to a file, or a preset name ("h100", "host"). Throws MachineError.
Machine load_machine(const std::string& name_or_path);
// A preset by name only — letters, digits, '_', '-' and '.', not first — from `first_dir` (when
// given) and then the search path; never a path, so a lesson's machine=NAME cannot name a file
// elsewhere (issue #25). Throws MachineError.
Machine load_machine_preset(const std::string& name, const std::string& first_dir = {});

}  // namespace tilescope::predict
