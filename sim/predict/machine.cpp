// Machine files: the line-based parser with file:line errors, unit parsing, and the sysfs /
// cpuinfo reader for this computer's caches and peak.
#include "sim/predict/machine.h"

#include "build_paths.h"

#include "sim/io/input.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tilescope::predict {

const std::vector<MachineKey>& machine_section_keys(const std::string& kind) {
  static const std::vector<MachineKey> header = {{"name", "my-gpu"},
                                                 {"kind", "gpu"},
                                                 {"description", "what it is"},
                                                 {"cores", "8"},
                                                 {"sms", "132"},
                                                 {"clock", "1.98 GHz"},
                                                 {"caches", "host"},
                                                 {"fma_units", "2"},
                                                 {"dependent_fma", "4 cycles"},
                                                 {"smem_per_block", "227 KiB"},
                                                 {"registers_per_thread", "255"},
                                                 {"threads_per_block", "1024"},
                                                 {"warps_per_sm", "64"},
                                                 {"blocks_per_sm", "32"},
                                                 {"registers_per_sm", "65536"},
                                                 {"register_unit", "256"},
                                                 {"sub_partitions", "4"},
                                                 {"smem_reserved_per_block", "1 KiB"},
                                                 {"smem_unit", "128 B"},
                                                 {"vector", "32 B"},
                                                 {"vector_registers", "16"}};
  static const std::vector<MachineKey> level = {{"size", "32 KiB"},
                                                {"line", "64 B"},
                                                {"sector", "32 B"},
                                                {"ways", "8"},
                                                {"replacement", "lru"},
                                                {"write", "back"},
                                                {"write_allocate", "yes"},
                                                {"writebacks", "below"},
                                                {"inclusion", "non-inclusive"},
                                                {"seed", "1"},
                                                {"bandwidth", "1 TB/s"},
                                                {"latency", "4 cycles"},
                                                {"strided_line", "2 ns"},
                                                {"shared_by", "1"}};
  static const std::vector<MachineKey> memory = {{"size", "16 GiB"},
                                                 {"bandwidth", "100 GB/s"},
                                                 {"latency", "80 ns"},
                                                 {"strided_line", "2 ns"}};
  static const std::vector<MachineKey> scratchpad = {
      {"size", "228 KiB"}, {"banks", "32"},          {"bank_width", "4 B"},
      {"warp_size", "32"}, {"bandwidth", "10 TB/s"}, {"latency", "23 cycles"}};
  static const std::vector<MachineKey> none;
  if (kind == "machine") return header;
  if (kind == "level") return level;
  if (kind == "memory") return memory;
  if (kind == "scratchpad") return scratchpad;
  return none;
}

namespace {

// "size, line or seed": the keys of a section of `kind`, for the parser's messages; the header's
// peak pattern after `after_peak`.
std::string expected_keys(const std::string& kind, const std::string& after = "") {
  const std::vector<MachineKey>& keys = machine_section_keys(kind);
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ") + std::string(keys[i].key);
    if (keys[i].key == after) out += ", 'peak <dtype> <unit>'";
  }
  return out;
}

}  // namespace

MachineError::MachineError(std::string file, int line, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                         ": error: " + message),
      m_file(std::move(file)),
      m_line(line) {}

double Machine::peak(std::string_view dtype, std::string_view unit) const {
  for (const ComputePeak& p : peaks)
    if (p.dtype == dtype && p.unit == unit) return p.ops_per_s;
  return 0;
}

memory::HierarchyConfig Machine::hierarchy() const {
  memory::HierarchyConfig h;
  h.levels = levels;
  h.memory = memory;
  h.scratchpad = scratchpad;
  return h;
}

// [SECTION] Units

namespace {

using io::trim;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Splits "3.35 TB/s" / "48K" into a number and a unit string.
bool split_number(std::string_view text, double& value, std::string& unit) {
  std::string t = trim(text);
  const char* b = t.data();
  const char* e = t.data() + t.size();
  auto [p, ec] = std::from_chars(b, e, value);
  if (ec != std::errc() || !(value >= 0) || !std::isfinite(value)) return false;
  unit = trim(std::string_view(p, static_cast<size_t>(e - p)));
  return true;
}

const std::map<std::string, double>& unit_table(Quantity kind) {
  static const std::map<std::string, double> bytes = {
      {"", 1},          {"b", 1},       {"k", 1024.0},    {"kib", 1024.0},          {"m", 1 << 20},
      {"mib", 1 << 20}, {"g", 1 << 30}, {"gib", 1 << 30}, {"tib", 1099511627776.0}, {"kb", 1e3},
      {"mb", 1e6},      {"gb", 1e9},    {"tb", 1e12}};
  static const std::map<std::string, double> bandwidth = {
      {"b/s", 1},           {"kb/s", 1e3},           {"mb/s", 1e6},
      {"gb/s", 1e9},        {"tb/s", 1e12},          {"kib/s", 1024.0},
      {"mib/s", 1048576.0}, {"gib/s", 1073741824.0}, {"tib/s", 1099511627776.0}};
  static const std::map<std::string, double> rate = {
      {"flop/s", 1}, {"gflop/s", 1e9}, {"tflop/s", 1e12}, {"pflop/s", 1e15},
      {"op/s", 1},   {"gop/s", 1e9},   {"top/s", 1e12},   {"pop/s", 1e15},
      {"flops", 1},  {"gflops", 1e9},  {"tflops", 1e12},  {"tops", 1e12}};
  static const std::map<std::string, double> frequency = {
      {"hz", 1}, {"khz", 1e3}, {"mhz", 1e6}, {"ghz", 1e9}};
  static const std::map<std::string, double> count = {{"", 1}};
  switch (kind) {
    case Quantity::Bytes:
      return bytes;
    case Quantity::Bandwidth:
      return bandwidth;
    case Quantity::Rate:
      return rate;
    case Quantity::Frequency:
      return frequency;
    case Quantity::Count:
      return count;
  }
  return count;
}

const char* expected_units(Quantity kind) {
  switch (kind) {
    case Quantity::Bytes:
      return "a size such as 48 KiB, 2 MiB, 64 B or 80 GB";
    case Quantity::Bandwidth:
      return "a bandwidth such as 3.35 TB/s or 900 GB/s";
    case Quantity::Rate:
      return "a rate such as 66.9 TFLOP/s or 1979 TOP/s";
    case Quantity::Frequency:
      return "a clock such as 1.98 GHz or 2400 MHz";
    case Quantity::Count:
      return "a plain number";
  }
  return "";
}

}  // namespace

double parse_quantity(std::string_view text, Quantity kind) {
  double value = 0;
  std::string unit;
  if (!split_number(text, value, unit))
    throw std::invalid_argument("'" + trim(text) + "' is not " + expected_units(kind));
  const auto& table = unit_table(kind);
  auto it = table.find(lower(unit));
  if (it == table.end())
    throw std::invalid_argument("unknown unit '" + unit + "' in '" + trim(text) + "': expected " +
                                expected_units(kind));
  return value * it->second;
}

std::pair<double, double> parse_latency(std::string_view text) {
  double value = 0;
  std::string unit;
  if (!split_number(text, value, unit))
    throw std::invalid_argument("'" + trim(text) + "' is not a latency such as 4 cycles or 80 ns");
  std::string u = lower(unit);
  if (u == "cycles" || u == "cycle" || u == "clk") return {value, 0};
  if (u == "ns") return {0, value};
  if (u == "us") return {0, value * 1e3};
  if (u == "ms") return {0, value * 1e6};
  if (u == "s") return {0, value * 1e9};
  throw std::invalid_argument("unknown latency unit '" + unit + "': expected cycles or ns");
}

// [SECTION] sysfs and cpuinfo

namespace {

std::string read_first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!in || !std::getline(in, s)) return "";
  return trim(s);
}

}  // namespace

std::vector<memory::CacheConfig> read_sysfs_caches(const std::string& cache_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec))
    throw MachineError(cache_dir, 0, "cache information is not available (no such directory)");
  std::map<int, memory::CacheConfig> by_level;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_dir, ec)) {
    std::string stem = e.path().filename().string();
    if (stem.rfind("index", 0) != 0) continue;
    std::string type = read_first_line(e.path() / "type");
    if (type != "Data" && type != "Unified") continue;  // instruction caches do not see data
    auto field = [&](const char* name) {
      std::string v = read_first_line(e.path() / name);
      if (v.empty()) throw MachineError((e.path() / name).string(), 0, "missing or empty");
      return v;
    };
    int level = 0;
    try {
      level = std::stoi(field("level"));
      memory::CacheConfig c;
      c.name = "L" + std::to_string(level);
      c.size_bytes = static_cast<uint64_t>(parse_quantity(field("size"), Quantity::Bytes));
      c.line_bytes = static_cast<uint32_t>(std::stoul(field("coherency_line_size")));
      c.ways = static_cast<uint32_t>(std::stoul(field("ways_of_associativity")));
      std::string shared = read_first_line(e.path() / "shared_cpu_list");
      // "0-1" or "0,2,4": count CPUs sharing this cache, for the shared_by figure.
      int sharers = 0;
      std::stringstream ss(shared);
      std::string part;
      while (std::getline(ss, part, ',')) {
        size_t dash = part.find('-');
        sharers += dash == std::string::npos
                       ? 1
                       : std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
      }
      c.shared_by = std::max(1, sharers);
      // Not in sysfs: Intel and AMD inclusion and policies vary; the file can override these.
      c.replacement = memory::Replacement::LRU;
      by_level[level] = c;
    } catch (const MachineError&) {
      throw;
    } catch (const std::exception& ex) {
      throw MachineError(e.path().string(), 0,
                         std::string("unreadable cache description: ") + ex.what());
    }
  }
  if (by_level.empty())
    throw MachineError(cache_dir, 0, "no data or unified caches are described there");
  std::vector<memory::CacheConfig> out;
  for (auto& [level, c] : by_level) out.push_back(c);
  return out;
}

std::string host_path(const std::string& absolute) {
  const char* root = std::getenv("TILESCOPE_SYSFS_ROOT");
  return root && *root ? std::string(root) + absolute : absolute;
}

bool host_cpuid_allowed() {
  const char* off = std::getenv("TILESCOPE_NO_CPUID");
  return !(off && *off && std::string(off) != "0");
}

namespace {

// glibc answers _SC_LEVELn_* from CPUID (leaf 4 on Intel, 0x8000001D on AMD); other C libraries
// and architectures answer 0 or -1, and the caller falls back to the generic default.
std::vector<memory::CacheConfig> cpuid_caches() {
  std::vector<memory::CacheConfig> out;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL3_CACHE_LINESIZE)
  struct Query {
    int size, assoc, line;
  };
  const Query q[] = {{_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE},
                     {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE},
                     {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE}};
  const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  for (size_t k = 0; k < 3; ++k) {
    const long size = sysconf(q[k].size), assoc = sysconf(q[k].assoc), line = sysconf(q[k].line);
    if (size <= 0 || line <= 0) break;
    memory::CacheConfig c;
    c.name = "L" + std::to_string(k + 1);
    c.size_bytes = static_cast<uint64_t>(size);
    c.line_bytes = static_cast<uint32_t>(line);
    c.ways = assoc > 0 ? static_cast<uint32_t>(assoc) : 0;
    // CPUID's sharing count is not exposed by sysconf: private L1/L2, and an L3 shared by every
    // online CPU, as on most single-socket machines.
    c.shared_by = k == 2 ? static_cast<int>(cpus) : 1;
    c.replacement = memory::Replacement::LRU;
    if (!c.check().empty()) break;  // a level glibc could not describe consistently
    out.push_back(c);
  }
#endif
  return out;
}

std::vector<memory::CacheConfig> generic_caches() {
  auto level = [](const char* name, uint64_t size, uint32_t ways, int shared_by) {
    memory::CacheConfig c;
    c.name = name;
    c.size_bytes = size;
    c.line_bytes = 64;
    c.ways = ways;
    c.shared_by = shared_by;
    c.replacement = memory::Replacement::LRU;
    return c;
  };
  return {level("L1", 32 << 10, 8, 1), level("L2", 1 << 20, 16, 1), level("L3", 8 << 20, 16, 4)};
}

}  // namespace

HostCaches read_host_caches(const SysfsPaths& sys) {
  std::string why;
  try {
    return {read_sysfs_caches(sys.cache_dir), "sysfs (" + sys.cache_dir + ")"};
  } catch (const MachineError& e) {
    why = e.what();
  }
  if (sys.use_cpuid)
    if (auto levels = cpuid_caches(); !levels.empty())
      return {std::move(levels), "CPUID, as glibc's sysconf reports it (sysfs: " + why + ")"};
  return {generic_caches(),
          "generic default: 32 KiB L1, 1 MiB L2, 8 MiB L3, 64 B lines — not this computer's "
          "(sysfs: " +
              why + (sys.use_cpuid ? "; CPUID gave no cache sizes" : "; CPUID not asked") +
              "). Edit the [level] sections of host.machine with your CPU's figures"};
}

namespace {

struct CpuInfo {
  double mhz = 0;
  int simd_fp32_lanes = 4;  // SSE
  std::string model;
  int logical_cpus = 0;
  bool has_flags = false;
};

CpuInfo read_cpuinfo(const std::string& path, bool ask_cpu = false) {
  CpuInfo info;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(std::string_view(line).substr(0, colon));
    std::string value = trim(std::string_view(line).substr(colon + 1));
    if (key == "processor") ++info.logical_cpus;
    if (key == "cpu MHz" && info.mhz == 0) info.mhz = std::atof(value.c_str());
    if (key == "model name" && info.model.empty()) info.model = value;
    if (key == "flags" && info.logical_cpus <= 1) {
      info.has_flags = true;
      std::set<std::string> flags;
      std::stringstream ss(value);
      std::string f;
      while (ss >> f) flags.insert(f);
      if (flags.count("avx512f"))
        info.simd_fp32_lanes = 16;
      else if (flags.count("avx2") || flags.count("avx"))
        info.simd_fp32_lanes = 8;
    }
  }
#if defined(__x86_64__) || defined(__i386__)
  // No flags line (a container's masked /proc, or none at all): ask the CPU itself.
  if (!info.has_flags && ask_cpu) {
    __builtin_cpu_init();
    info.simd_fp32_lanes = __builtin_cpu_supports("avx512f") ? 16
                           : __builtin_cpu_supports("avx")   ? 8
                                                             : 4;
  }
#endif
  return info;
}

// When /proc/cpuinfo gives no clock (ARM kernels never do; some containers hide /proc) a peak
// still needs one: this assumption is labelled in Machine::notes wherever it is used.
constexpr double kAssumedClockHz = 2.0e9;

}  // namespace

// [SECTION] Parser

namespace {

struct Entry {
  std::string key, value;
  int line = 0;
};
struct Section {
  std::string kind, name;  // kind "" = the header before any section
  int line = 0;
  std::vector<Entry> entries;
};

class Parser {
 public:
  Parser(const std::string& file, const SysfsPaths& sys) : m_file(file), m_sys(sys) {}

  Machine parse(std::string_view text) {
    std::vector<Section> sections = split(text);
    Machine m;
    m.source = m_file;
    bool sysfs = false;
    double fma_units = 2;
    const Entry* cpuinfo_peak = nullptr;
    for (const Entry& e : sections[0].entries) {
      if (e.key == "name")
        m.name = e.value;
      else if (e.key == "kind") {
        if (e.value != "cpu" && e.value != "gpu") fail(e, "kind must be cpu or gpu");
        m.kind = e.value;
      } else if (e.key == "description")
        m.description = e.value;
      else if (e.key == "cores" || e.key == "sms") {
        if (e.value == "sysfs") {
          m.cores = read_cpuinfo(m_sys.cpuinfo).logical_cpus;
          if (m.cores <= 0) {
            m.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
            m.notes.push_back("cores: " + std::to_string(m.cores) + " online CPUs (sysconf; " +
                              m_sys.cpuinfo + " lists no processors)");
          }
        } else {
          m.cores = whole<int>(e, Quantity::Count, 1, 1 << 20);
        }
      } else if (e.key == "clock") {
        if (e.value == "cpuinfo") {
          m.clock_hz = read_cpuinfo(m_sys.cpuinfo).mhz * 1e6;
          if (m.clock_hz <= 0) {
            m.clock_hz = kAssumedClockHz;
            m.notes.push_back("clock: assumed 2.0 GHz (" + m_sys.cpuinfo +
                              " gives no 'cpu MHz'); set 'clock = …' in the machine file");
          }
        } else {
          m.clock_hz = number(e, Quantity::Frequency);
        }
      } else if (e.key == "caches") {
        if (e.value != "sysfs" && e.value != "host")
          fail(e,
               "caches can only be 'host' (this computer's; 'sysfs' is the older name) or "
               "left out");
        sysfs = true;
      } else if (e.key == "fma_units") {
        fma_units = whole<int>(e, Quantity::Count, 1, 16);
      } else if (e.key == "dependent_fma") {
        auto [cy, ns] = latency(e);
        if (ns == 0 && cy > 0 && m.clock_hz > 0) ns = cy / m.clock_hz * 1e9;
        if (ns == 0) fail(e, "dependent_fma: give it in ns, or in cycles after 'clock = …'");
        m.dependent_fma_s = ns * 1e-9;
      } else if (e.key.rfind("peak ", 0) == 0) {
        std::stringstream ss(e.key.substr(5));
        ComputePeak p;
        std::string extra;
        if (!(ss >> p.dtype >> p.unit) || (ss >> extra))
          fail(e,
               "a peak is written 'peak <dtype> <unit> = <rate>', e.g. 'peak fp32 simt = "
               "66.9 TFLOP/s'");
        if (e.value == "cpuinfo") {
          cpuinfo_peak = &e;
        } else {
          p.ops_per_s = number(e, Quantity::Rate);
        }
        m.peaks.push_back(p);
      } else if (e.key == "smem_per_block") {
        m.smem_per_block = whole<int64_t>(e, Quantity::Bytes, 1, int64_t{1} << 40);
      } else if (e.key == "registers_per_thread") {
        m.registers_per_thread = whole<int64_t>(e, Quantity::Count, 1, 1 << 16);
      } else if (e.key == "threads_per_block") {
        m.threads_per_block = whole<int64_t>(e, Quantity::Count, 1, 1 << 20);
      } else if (e.key == "warps_per_sm") {
        m.sm.warps = whole<int64_t>(e, Quantity::Count, 1, 1 << 12);
      } else if (e.key == "blocks_per_sm") {
        m.sm.blocks = whole<int64_t>(e, Quantity::Count, 1, 1 << 12);
      } else if (e.key == "registers_per_sm") {
        m.sm.registers = whole<int64_t>(e, Quantity::Count, 1, int64_t{1} << 24);
      } else if (e.key == "register_unit") {
        m.sm.register_unit = whole<int64_t>(e, Quantity::Count, 1, 1 << 16);
      } else if (e.key == "sub_partitions") {
        m.sm.sub_partitions = whole<int64_t>(e, Quantity::Count, 1, 64);
      } else if (e.key == "smem_reserved_per_block") {
        m.sm.smem_reserved_per_block = whole<int64_t>(e, Quantity::Bytes, 0, int64_t{1} << 30);
      } else if (e.key == "smem_unit") {
        m.sm.smem_unit = whole<int64_t>(e, Quantity::Bytes, 1, int64_t{1} << 20);
      } else if (e.key == "vector") {
        m.vector_bytes = whole<int64_t>(e, Quantity::Bytes, 4, 1 << 12);
      } else if (e.key == "vector_registers") {
        m.vector_registers = whole<int64_t>(e, Quantity::Count, 1, 1 << 12);
      } else {
        fail(e, "unknown key '" + e.key + "' (expected " +
                    expected_keys("machine", "dependent_fma") + ")");
      }
    }
    if (m.name.empty()) fail_at(1, "the machine has no 'name = …' line");
    if (cpuinfo_peak) {
      // Peak of FMA SIMD: cores × clock × fp32 lanes × 2 (an FMA is two flops) × FMA units.
      CpuInfo info = read_cpuinfo(m_sys.cpuinfo, m_sys.use_cpuid);
      if (m.clock_hz == 0) m.clock_hz = info.mhz * 1e6;
      if (m.clock_hz <= 0) {
        m.clock_hz = kAssumedClockHz;
        m.notes.push_back("clock: assumed 2.0 GHz for the peak (" + m_sys.cpuinfo +
                          " gives no 'cpu MHz'); set 'clock = …' in the machine file");
      }
      if (!info.has_flags)
        m.notes.push_back("SIMD width: " + std::to_string(info.simd_fp32_lanes) + " fp32 lanes, " +
                          (m_sys.use_cpuid ? "from CPUID" : "assumed (SSE)") + " (" +
                          m_sys.cpuinfo + " has no flags)");
      if (m.vector_bytes == 0) m.vector_bytes = int64_t{info.simd_fp32_lanes} * 4;
      for (ComputePeak& p : m.peaks)
        if (p.ops_per_s == 0) {
          int lanes = info.simd_fp32_lanes * (p.dtype == "fp64" ? 1 : 2) / 2;
          if (p.dtype == "fp64") lanes = info.simd_fp32_lanes / 2;
          p.ops_per_s = m.cores * m.clock_hz * lanes * 2 * fma_units;
          p.note = std::to_string(m.cores) + " cores x " + std::to_string(m.clock_hz / 1e9) +
                   " GHz x " + std::to_string(lanes) + " lanes x 2 (FMA) x " +
                   std::to_string(static_cast<int>(fma_units)) + " FMA units";
        }
    }

    if (sysfs) {
      HostCaches host = read_host_caches(m_sys);
      m.levels = std::move(host.levels);
      m.notes.insert(m.notes.begin(), "caches: " + host.source);
    }
    size_t level_sections = 0;
    for (const Section& s : sections)
      if (s.kind == "level" && ++level_sections > memory::kMaxLevels)
        fail_at(s.line, "more than " + std::to_string(memory::kMaxLevels) +
                            " [level] sections (real machines have 1 to 4 cache levels)");
    std::set<std::string> level_names;
    for (const Section& s : sections) {
      if (s.kind.empty()) continue;
      if (s.kind == "level") {
        if (!level_names.insert(s.name).second)
          fail_at(s.line, "level " + s.name + " is given twice");
        memory::CacheConfig* c = nullptr;
        if (sysfs) {
          for (auto& l : m.levels)
            if (l.name == s.name) c = &l;
          if (!c)
            fail_at(s.line, "level " + s.name + " is not among this computer's caches (" +
                                m.notes.front().substr(8) + ")");
        } else {
          m.levels.emplace_back();
          c = &m.levels.back();
          c->name = s.name;
          c->size_bytes = 0;
        }
        level(*c, s, sysfs, m.strided_line_s[s.name]);
        if (m.strided_line_s[s.name] == 0) m.strided_line_s.erase(s.name);
      } else if (s.kind == "memory") {
        m.memory.name = s.name;
        for (const Entry& e : s.entries) {
          if (e.key == "size") {
            if (e.value == "meminfo")
              m.memory.size_bytes = meminfo_bytes(m);
            else
              m.memory.size_bytes = whole<uint64_t>(e, Quantity::Bytes, 0, uint64_t{1} << 62);
          } else if (e.key == "bandwidth")
            m.memory.bandwidth_bytes_per_s = number(e, Quantity::Bandwidth);
          else if (e.key == "latency") {
            auto [cy, ns] = latency(e);
            m.memory.latency_ns = ns > 0 ? ns : (m.clock_hz > 0 ? cy / m.clock_hz * 1e9 : 0);
            if (ns == 0 && m.clock_hz == 0) fail(e, "give memory latency in ns (no clock is set)");
          } else if (e.key == "strided_line")
            m.strided_line_s[s.name] = strided_line(e);
          else
            fail(e, "unknown key '" + e.key + "' in [memory] (expected " + expected_keys("memory") +
                        ")");
        }
      } else if (s.kind == "scratchpad") {
        memory::ScratchpadConfig sp;
        sp.name = s.name;
        for (const Entry& e : s.entries) {
          if (e.key == "size")
            sp.size_bytes = whole<uint64_t>(e, Quantity::Bytes, 1, uint64_t{1} << 40);
          else if (e.key == "banks")
            sp.banks = whole<uint32_t>(e, Quantity::Count, 1, 1024);
          else if (e.key == "bank_width")
            sp.bank_width = whole<uint32_t>(e, Quantity::Bytes, 1, 1024);
          else if (e.key == "warp_size")
            sp.warp_size = whole<uint32_t>(e, Quantity::Count, 1, 1024);
          else if (e.key == "bandwidth")
            sp.bandwidth_bytes_per_s = number(e, Quantity::Bandwidth);
          else if (e.key == "latency")
            sp.latency_cycles = latency(e).first;
          else
            fail(e, "unknown key '" + e.key + "' in [scratchpad] (expected " +
                        expected_keys("scratchpad") + ")");
        }
        if (m.scratchpad) fail_at(s.line, "only one [scratchpad] section is supported");
        m.scratchpad = sp;
      } else {
        fail_at(s.line,
                "unknown section kind '" + s.kind + "' (expected level, memory or scratchpad)");
      }
    }
    if (m.levels.empty())
      fail_at(1, "the machine has no [level …] sections and no 'caches = host'");
    if (m.smem_per_block > 0) {
      const Entry* e = nullptr;
      for (const Entry& x : sections[0].entries)
        if (x.key == "smem_per_block") e = &x;
      if (!m.scratchpad)
        fail(*e, "smem_per_block needs a [scratchpad …] section (the shared memory it limits)");
      if (uint64_t(m.smem_per_block) > m.scratchpad->size_bytes)
        fail(*e, "smem_per_block (" + e->value + ") is more than the scratchpad's size (" +
                     std::to_string(m.scratchpad->size_bytes) + " B)");
    }
    memory::HierarchyConfig h = m.hierarchy();
    if (std::string err = h.check(); !err.empty()) {
      int line = 1;
      for (const Section& s : sections)
        if (err.find(" " + s.name + ":") != std::string::npos) line = s.line;
      fail_at(line, err);
    }
    return m;
  }

 private:
  [[noreturn]] void fail(const Entry& e, const std::string& msg) const {
    throw MachineError(m_file, e.line, msg);
  }
  [[noreturn]] void fail_at(int line, const std::string& msg) const {
    throw MachineError(m_file, line, msg);
  }

  double number(const Entry& e, Quantity q, double minimum = 0) const {
    double v = 0;
    try {
      v = parse_quantity(e.value, q);
    } catch (const std::invalid_argument& ex) {
      fail(e, e.key + ": " + ex.what());
    }
    if (v < minimum) fail(e, e.key + " must be at least " + std::to_string(minimum));
    if (q == Quantity::Count && v != std::floor(v)) fail(e, e.key + " must be a whole number");
    // Rates a real machine could have: `clock = 0 Hz` made every cycle free and a peak of
    // 1e308 TFLOP/s every kernel's compute time 0 s (issue #25), yet both were accepted.
    const auto within = [&](double lo, double hi, const char* range) {
      if (!(v >= lo && v <= hi))
        fail(e, e.key + " = " + e.value + " is not a rate a machine has (" + range + ")");
    };
    if (q == Quantity::Frequency) within(1e6, 1e11, "a clock is 1 MHz to 100 GHz");
    if (q == Quantity::Rate) within(1e3, 1e19, "a peak is 1 kFLOP/s to 10 EFLOP/s");
    if (q == Quantity::Bandwidth) within(1e3, 1e16, "a bandwidth is 1 kB/s to 10 PB/s");
    return v;
  }

  // A count or size that must be a whole number in [minimum, maximum]; checked before the
  // conversion, so `ways = 4294967296` or `line = 1e20 B` is an error, not a wrapped integer.
  template <class T>
  T whole(const Entry& e, Quantity q, double minimum, double maximum) const {
    const double v = number(e, q, minimum);
    if (v != std::floor(v)) fail(e, e.key + " must be a whole number (got " + e.value + ")");
    if (v > maximum)
      fail(e, e.key + " = " + e.value + " is more than the largest supported, " +
                  std::to_string(static_cast<uint64_t>(maximum)));
    return static_cast<T>(v);
  }

  // Time per line of a strided (not prefetchable) walk served by this level: "4.4 ns".
  double strided_line(const Entry& e) const {
    auto [cy, ns] = latency(e);
    if (ns == 0)
      fail(e, "strided_line: give the time per line in ns (as tilescope-cli probe writes it)");
    return ns * 1e-9;
  }

  std::pair<double, double> latency(const Entry& e) const {
    try {
      return parse_latency(e.value);
    } catch (const std::invalid_argument& ex) {
      fail(e, std::string("latency: ") + ex.what());
    }
  }

  uint64_t meminfo_bytes(Machine& m) const {
    std::ifstream in(m_sys.meminfo);
    std::string key;
    uint64_t kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
      if (key == "MemTotal:") return kb * 1024;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t bytes = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
    m.notes.push_back("memory size: " + std::to_string(bytes >> 20) + " MiB from sysconf (" +
                      m_sys.meminfo + " has no MemTotal)");
    return bytes;
  }

  static bool yes_no(const std::string& v, bool& out) {
    if (v == "yes" || v == "true" || v == "on") return out = true, true;
    if (v == "no" || v == "false" || v == "off") return out = false, true;
    return false;
  }

  void level(memory::CacheConfig& c, const Section& s, bool sysfs, double& strided_line_s) const {
    bool has_size = sysfs, has_ways = sysfs;
    for (const Entry& e : s.entries) {
      if (e.key == "size") {
        c.size_bytes = whole<uint64_t>(e, Quantity::Bytes, 1, uint64_t{1} << 44);
        has_size = true;
      } else if (e.key == "line")
        c.line_bytes = whole<uint32_t>(e, Quantity::Bytes, 1, memory::kMaxLineBytes);
      else if (e.key == "sector")
        c.sector_bytes = whole<uint32_t>(e, Quantity::Bytes, 1, memory::kMaxLineBytes);
      else if (e.key == "ways") {
        has_ways = true;
        if (e.value == "full")
          c.ways = 0;
        else
          c.ways = whole<uint32_t>(e, Quantity::Count, 1, memory::kMaxWays);
      } else if (e.key == "replacement") {
        std::string v = lower(e.value);
        if (v == "lru")
          c.replacement = memory::Replacement::LRU;
        else if (v == "fifo")
          c.replacement = memory::Replacement::FIFO;
        else if (v == "random")
          c.replacement = memory::Replacement::Random;
        else if (v == "plru" || v == "tree-plru")
          c.replacement = memory::Replacement::TreePLRU;
        else
          fail(e, "replacement '" + e.value + "' is not one of lru, fifo, random, plru");
      } else if (e.key == "write") {
        if (e.value == "back")
          c.write_policy = memory::WritePolicy::WriteBack;
        else if (e.value == "through")
          c.write_policy = memory::WritePolicy::WriteThrough;
        else
          fail(e, "write must be 'back' or 'through'");
      } else if (e.key == "write_allocate") {
        if (!yes_no(e.value, c.write_allocate)) fail(e, "write_allocate must be yes or no");
      } else if (e.key == "inclusion") {
        if (e.value == "inclusive")
          c.inclusion = memory::Inclusion::Inclusive;
        else if (e.value == "non-inclusive")
          c.inclusion = memory::Inclusion::NonInclusive;
        else
          fail(e, "inclusion must be 'inclusive' or 'non-inclusive'");
      } else if (e.key == "seed")
        c.seed = whole<uint64_t>(e, Quantity::Count, 0, 9007199254740992.0);  // 2^53: exact
      else if (e.key == "bandwidth")
        c.bandwidth_bytes_per_s = number(e, Quantity::Bandwidth);
      else if (e.key == "latency")
        std::tie(c.latency_cycles, c.latency_ns) = latency(e);
      else if (e.key == "shared_by")
        c.shared_by = whole<int>(e, Quantity::Count, 1, 1 << 20);
      else if (e.key == "strided_line")
        strided_line_s = strided_line(e);
      else if (e.key == "writebacks") {
        if (e.value == "below")
          c.writebacks_to_next = true;
        else if (e.value == "dropped")
          c.writebacks_to_next = false;
        else
          fail(e,
               "writebacks must be 'below' (the default) or 'dropped' (counted, sent nowhere, "
               "as cachegrind models caches)");
      } else
        fail(e, "unknown key '" + e.key + "' in [level " + s.name + "] (expected " +
                    expected_keys("level") + ")");
    }
    if (!has_size) fail_at(s.line, "level " + s.name + " has no 'size = …'");
    if (!has_ways) fail_at(s.line, "level " + s.name + " has no 'ways = …' (a number or full)");
  }

  std::vector<Section> split(std::string_view text) const {
    std::vector<Section> out(1);
    int line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view raw = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++line_no;
      std::string line = trim(raw.substr(0, raw.find('#')));
      if (line.empty()) continue;
      if (line.front() == '[') {
        if (line.back() != ']') fail_at(line_no, "a section header must end with ']'");
        std::stringstream ss(line.substr(1, line.size() - 2));
        Section s;
        s.line = line_no;
        std::string extra;
        if (!(ss >> s.kind >> s.name) || (ss >> extra))
          fail_at(line_no, "a section header is '[kind name]', e.g. '[level L1]'");
        out.push_back(s);
        continue;
      }
      size_t eq = line.find('=');
      if (eq == std::string::npos) fail_at(line_no, "expected 'key = value', got '" + line + "'");
      Entry e{trim(line.substr(0, eq)), trim(line.substr(eq + 1)), line_no};
      if (e.key.empty()) fail_at(line_no, "missing key before '='");
      if (e.value.empty()) fail_at(line_no, "missing value after '" + e.key + " ='");
      for (const Entry& prev : out.back().entries)
        if (prev.key == e.key)
          fail_at(line_no, "'" + e.key + "' is already set on line " + std::to_string(prev.line));
      out.back().entries.push_back(e);
    }
    return out;
  }

  std::string m_file;
  SysfsPaths m_sys;
};

}  // namespace

Machine parse_machine(std::string_view text, const std::string& file, const SysfsPaths& sys) {
  return Parser(file, sys).parse(text);
}

Machine load_machine_file(const std::string& path, const SysfsPaths& sys) {
  io::TextInput in = io::read_text_input(path, io::kMaxMachineBytes, "a machine file");
  if (!in.ok) throw MachineError(path, 0, in.error);
  return parse_machine(in.text, path, sys);
}

std::string user_machine_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tilescope/machines";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/share/tilescope/machines";
  return ".tilescope/machines";
}

std::vector<std::string> machine_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TILESCOPE_MACHINES")) dirs.push_back(env);
  dirs.push_back("assets/machines");
  dirs.push_back(user_machine_dir());
#ifdef TILESCOPE_SOURCE_DIR
  dirs.push_back(std::string(TILESCOPE_SOURCE_DIR) + "/assets/machines");
#endif
  return dirs;
}

std::vector<std::string> preset_names() {
  std::set<std::string> names;
  std::error_code ec;
  for (const std::string& d : machine_search_path())
    for (const auto& e : std::filesystem::directory_iterator(d, ec))
      if (e.path().extension() == ".machine") names.insert(e.path().stem().string());
  return {names.begin(), names.end()};
}

namespace {

[[noreturn]] void no_such_machine(const std::string& name, const char* what) {
  std::string known;
  for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw MachineError(io::printable(name, 80), 0,
                     std::string(what) +
                         " (presets: " + (known.empty() ? std::string("none found") : known) + ")");
}

bool is_preset_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
}

}  // namespace

Machine load_machine_preset(const std::string& name, const std::string& first_dir) {
  if (!is_preset_name(name))
    no_such_machine(name, "not a preset name (letters, digits, '_', '-' and '.'; no paths)");
  std::vector<std::string> dirs;
  if (!first_dir.empty()) dirs.push_back(first_dir);
  for (const std::string& d : machine_search_path()) dirs.push_back(d);
  std::error_code ec;
  for (const std::string& d : dirs) {
    const std::string p = d + "/" + name + ".machine";
    if (std::filesystem::is_regular_file(p, ec)) return load_machine_file(p);
  }
  no_such_machine(name, "no such machine preset");
}

Machine load_machine(const std::string& name_or_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) return load_machine_file(name_or_path);
  if (name_or_path.find('/') == std::string::npos && is_preset_name(name_or_path))
    return load_machine_preset(name_or_path);
  no_such_machine(name_or_path, "no such machine file or preset");
}

}  // namespace tilescope::predict
