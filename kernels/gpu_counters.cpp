// The ncu metric table, ncu's CSV parser, the counters report's JSON and its comparison table.
#include "kernels/gpu_counters.h"
#include "sim/io/format.h"
#include "sim/io/json.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace tilescope::kernels {

using json = nlohmann::json;

// [SECTION] Metrics

const std::vector<CounterMetric>& counter_metrics() {
  // Hopper (sm_90) names, Nsight Compute 2025. "srcunit_tex" keeps the L2 counts to requests from
  // the SMs' L1/TEX units (what the simulator's L1 misses are), not the copy engines' or the
  // L2's own fabric traffic between its two partitions.
  static const std::vector<CounterMetric> table = {
      {"dram_read_bytes", "dram__bytes_read.sum", "bytes read from device memory (HBM)"},
      {"dram_write_bytes", "dram__bytes_write.sum", "bytes written to device memory (HBM)"},
      {"l2_read_sectors", "lts__t_sectors_srcunit_tex_op_read.sum",
       "32-byte L2 sectors read by the SMs (L1 misses of loads)"},
      {"l2_write_sectors", "lts__t_sectors_srcunit_tex_op_write.sum",
       "32-byte L2 sectors written by the SMs (stores go through L1 to L2)"},
      {"l2_read_hit_sectors", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
       "of the L2 read sectors, those that hit"},
      {"l1_load_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
       "32-byte sectors of global loads looked up in L1"},
      {"l1_load_hit_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
       "of those, sectors that hit in L1"},
      {"l1_store_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
       "32-byte sectors of global stores"},
      {"l1_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
       "global load instructions (warp requests)"},
      {"ldgsts_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
       "sectors of cp.async global-to-shared copies"},
      {"shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
       "shared-memory load wavefronts (bank passes)"},
      {"shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
       "shared-memory store wavefronts (bank passes)"},
      {"shared_ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
       "shared-memory load bank conflicts (extra wavefronts)"},
      {"shared_st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
       "shared-memory store bank conflicts (extra wavefronts)"},
      {"shared_ld_instructions", "smsp__sass_inst_executed_op_shared_ld.sum",
       "shared-memory load instructions executed (warp level)"},
      {"shared_st_instructions", "smsp__sass_inst_executed_op_shared_st.sum",
       "shared-memory store instructions executed (warp level)"},
      {"time_ns", "gpu__time_duration.sum", "kernel duration under the profiler, ns"},
      {"waves", "launch__waves_per_multiprocessor", "waves of resident blocks per SM",
       Rollup::Max},
      // For the time model (sim/predict/time_model.h): the clock the SMs ran at, how full they
      // were, and how busy their schedulers and their L1/shared data stage were.
      {"sm_clock_hz", "sm__cycles_elapsed.avg.per_second", "SM clock during the kernel, Hz",
       Rollup::TimeWeighted},
      {"achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
       "achieved occupancy: warps resident per active cycle, % of the SM's maximum",
       Rollup::TimeWeighted},
      {"instructions", "smsp__inst_executed.sum", "warp instructions executed"},
      {"issue_active_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active",
       "cycles in which a warp scheduler issued an instruction, % of active cycles",
       Rollup::TimeWeighted},
      {"lsu_wavefronts", "l1tex__data_pipe_lsu_wavefronts.sum",
       "wavefronts through the L1/shared data stage (global and shared accesses)"},
      {"sm_active_cycles", "sm__cycles_active.avg", "cycles an SM had a block resident, mean"},
  };
  return table;
}

const CounterMetric* counter_metric(const std::string& key) {
  for (const CounterMetric& m : counter_metrics())
    if (m.key == key) return &m;
  return nullptr;
}

std::string ncu_base_name(const std::string& ncu_metric) {
  // Base names have no dot; everything after the first is a roll-up or a sub-metric.
  return ncu_metric.substr(0, ncu_metric.find('.'));
}

std::vector<std::string> parse_ncu_metric_list(const std::string& text) {
  // `ncu --query-metrics` prints a header ("Device TU102 (...)", a dashed rule, "Metric Name
  // Metric Description") and then one metric a line, its name first.
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first.find("__") == std::string::npos) continue;  // every metric name has a unit__ prefix
    names.push_back(first);
  }
  return names;
}

// [SECTION] ncu CSV

namespace {

struct CsvField {
  std::string text;
  int column = 1;  // 1-based, where the field starts
};

// One CSV line into fields ("a","b,c",d); throws on an unterminated quote.
std::vector<CsvField> split_csv(const std::string& line, const std::string& where, int line_no) {
  std::vector<CsvField> fields;
  size_t i = 0;
  while (true) {
    CsvField f;
    f.column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      size_t j = i + 1;
      while (true) {
        if (j >= line.size()) {
          throw CountersParseError(where + ":" + std::to_string(line_no) + ":" +
                                   std::to_string(f.column) + ": unterminated quoted field");
        }
        if (line[j] == '"') {
          if (j + 1 < line.size() && line[j + 1] == '"') {
            f.text += '"';
            j += 2;
            continue;
          }
          break;
        }
        f.text += line[j++];
      }
      i = j + 1;
    } else {
      const size_t j = line.find(',', i);
      f.text = line.substr(i, j == std::string::npos ? std::string::npos : j - i);
      i = j == std::string::npos ? line.size() : j;
    }
    fields.push_back(std::move(f));
    if (i >= line.size()) break;
    if (line[i] != ',') {
      throw CountersParseError(where + ":" + std::to_string(line_no) + ":" + std::to_string(i + 1) +
                               ": expected ',' after a quoted field");
    }
    ++i;
  }
  return fields;
}

// A number as ncu prints it ("1,234,567", "12.5", "1e+06"); nullopt for "n/a" and empty fields.
std::optional<double> parse_value(std::string text) {
  std::string clean;
  for (char c : text)
    if (c != ',' && c != ' ') clean += c;
  if (clean.empty() || clean == "n/a" || clean == "N/A") return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (end == clean.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::vector<NcuKernel> parse_ncu_csv(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  int name_col = -1;
  std::vector<NcuKernel> kernels;
  bool units_checked = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (header.empty()) {
      if (line.rfind("\"ID\"", 0) != 0) continue;  // chatter before the table
      for (const CsvField& f : split_csv(line, where, line_no)) header.push_back(f.text);
      for (size_t c = 0; c < header.size(); ++c)
        if (header[c] == "Kernel Name") name_col = static_cast<int>(c);
      if (name_col < 0) {
        throw CountersParseError(where + ":" + std::to_string(line_no) +
                                 ":1: the header has no \"Kernel Name\" column");
      }
      continue;
    }
    if (line.empty() || line.rfind("==", 0) == 0) continue;  // ncu's own messages
    const std::vector<CsvField> fields = split_csv(line, where, line_no);
    if (!units_checked) {
      units_checked = true;
      // The units row has an empty ID and units ("byte", "sector", "nsecond") in metric columns.
      if (!fields.empty() && fields[0].text.empty()) continue;
    }
    if (fields.size() != header.size()) {
      throw CountersParseError(where + ":" + std::to_string(line_no) +
                               ":1: " + std::to_string(fields.size()) +
                               " fields where the header has " + std::to_string(header.size()));
    }
    NcuKernel k;
    k.name = fields[static_cast<size_t>(name_col)].text;
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c].find("__") == std::string::npos) continue;  // ID, Process, Kernel Name, ...
      if (const std::optional<double> v = parse_value(fields[c].text)) k.metrics[header[c]] = *v;
    }
    kernels.push_back(std::move(k));
  }
  if (header.empty()) throw CountersParseError(where + ":1:1: no ncu CSV table (no \"ID\" header)");
  return kernels;
}

// [SECTION] Report

void sum_kernel_metrics(CounterRun& run, const std::vector<CounterMetric>& metrics) {
  run.measured.clear();
  const CounterMetric* time = counter_metric("time_ns");
  for (const CounterMetric& m : metrics) {
    bool any = false;
    double total = 0, weight = 0;
    for (const NcuKernel& k : run.kernels) {
      const auto it = k.metrics.find(m.ncu);
      if (it == k.metrics.end()) continue;
      any = true;
      switch (m.rollup) {
        case Rollup::Sum: total += it->second; break;
        case Rollup::Max: total = std::max(total, it->second); break;
        case Rollup::TimeWeighted: {
          const auto t = k.metrics.find(time->ncu);
          const double w = t == k.metrics.end() ? 1.0 : t->second;
          total += w * it->second;
          weight += w;
          break;
        }
      }
    }
    if (any) run.measured[m.key] = m.rollup == Rollup::TimeWeighted && weight > 0 ? total / weight : total;
  }
}

// [SECTION] JSON

namespace {

json kernel_json(const NcuKernel& k) {
  return {{"name", k.name}, {"metrics", k.metrics}};
}

void need(bool ok, const std::string& what) {
  if (!ok) throw CountersSchemaError("counters report: " + what);
}

std::map<std::string, double> number_map(const json& j, const std::string& where) {
  need(j.is_object(), where + " must be an object");
  std::map<std::string, double> m;
  for (const auto& [key, value] : j.items()) {
    need(value.is_number(), where + "." + key + " must be a number");
    m[key] = value.get<double>();
  }
  return m;
}

}  // namespace

void to_json(json& j, const CounterReport& r) {
  j = json::object();
  j["schema"] = kCountersSchema;
  j["tool"] = r.tool;
  j["date"] = r.date;
  j["device"] = r.device;
  j["ncu_version"] = r.ncu_version;
  j["ncu_command"] = r.ncu_command;
  j["metrics"] = json::array();
  for (const CounterMetric& m : r.metrics)
    j["metrics"].push_back({{"key", m.key}, {"ncu", m.ncu}, {"meaning", m.meaning}});
  j["metrics_unavailable"] = r.metrics_unavailable;
  j["runs"] = json::array();
  for (const CounterRun& run : r.runs) {
    json o = {{"suite", run.suite}, {"version", run.version},
              {"name", run.name},   {"M", run.m},
              {"N", run.n},         {"K", run.k}};
    o["kernels"] = json::array();
    for (const NcuKernel& k : run.kernels) o["kernels"].push_back(kernel_json(k));
    o["measured"] = run.measured;
    if (run.error) o["error"] = *run.error;
    if (run.predicted) {
      const CounterPrediction& p = *run.predicted;
      o["predicted"] = {
          {"values", p.values}, {"twin", p.twin}, {"method", p.method}, {"causes", p.causes}};
      if (!p.no_twin_reason.empty()) o["predicted"]["no_twin_reason"] = p.no_twin_reason;
      if (!p.out_of_step.empty()) o["predicted"]["out_of_step"] = p.out_of_step;
      if (!p.time_limiter.empty()) o["predicted"]["time_limiter"] = p.time_limiter;
      if (!p.time_summary.empty()) o["predicted"]["time_summary"] = p.time_summary;
    }
    j["runs"].push_back(std::move(o));
  }
  if (!r.details.empty()) j["details"] = r.details;
}

bool is_counters_document(const json& j) {
  return j.is_object() && j.contains("schema") && j["schema"] == kCountersSchema;
}

void from_json(const json& j, CounterReport& r) {
  need(is_counters_document(j), std::string("\"schema\" must be \"") + kCountersSchema + "\"");
  r = CounterReport{};
  r.tool = j.value("tool", "ncu");
  r.date = j.value("date", "");
  r.device = j.value("device", json::object());
  r.ncu_version = j.value("ncu_version", "");
  r.ncu_command = j.value("ncu_command", "");
  need(j.contains("metrics") && j["metrics"].is_array(), "\"metrics\" must be an array");
  for (size_t i = 0; i < j["metrics"].size(); ++i) {
    const json& m = j["metrics"][i];
    need(m.is_object() && m.contains("key") && m.contains("ncu") && m["key"].is_string() &&
             m["ncu"].is_string(),
         "metrics[" + std::to_string(i) + "] needs strings \"key\" and \"ncu\"");
    r.metrics.push_back({m["key"], m["ncu"], m.value("meaning", "")});
  }
  if (j.contains("metrics_unavailable"))
    r.metrics_unavailable = j["metrics_unavailable"].get<std::vector<std::string>>();
  need(j.contains("runs") && j["runs"].is_array(), "\"runs\" must be an array");
  for (size_t i = 0; i < j["runs"].size(); ++i) {
    const json& o = j["runs"][i];
    const std::string where = "runs[" + std::to_string(i) + "]";
    need(o.is_object() && o.contains("suite") && o["suite"].is_string() && o.contains("version") &&
             o["version"].is_number_integer(),
         where + " needs a string \"suite\" and an integer \"version\"");
    CounterRun run;
    run.suite = o["suite"];
    run.version = o["version"];
    run.name = o.value("name", "");
    run.m = o.value("M", 0);
    run.n = o.value("N", 0);
    run.k = o.value("K", 0);
    for (const json& k : o.value("kernels", json::array())) {
      NcuKernel nk;
      nk.name = k.value("name", "");
      nk.metrics = number_map(k.value("metrics", json::object()), where + ".kernels[].metrics");
      run.kernels.push_back(std::move(nk));
    }
    run.measured = number_map(o.value("measured", json::object()), where + ".measured");
    if (o.contains("error")) run.error = o["error"].get<std::string>();
    if (o.contains("predicted")) {
      const json& p = o["predicted"];
      CounterPrediction cp;
      cp.values = number_map(p.value("values", json::object()), where + ".predicted.values");
      cp.twin = p.value("twin", "");
      cp.method = p.value("method", "");
      cp.no_twin_reason = p.value("no_twin_reason", "");
      cp.causes = p.value("causes", std::map<std::string, std::string>{});
      cp.out_of_step =
          number_map(p.value("out_of_step", json::object()), where + ".predicted.out_of_step");
      cp.time_limiter = p.value("time_limiter", "");
      cp.time_summary = p.value("time_summary", "");
      run.predicted = std::move(cp);
    }
    r.runs.push_back(std::move(run));
  }
  r.details = j.value("details", json::object());
}

CounterReport load_counters_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  io::JsonInput parsed = io::parse_json(text.str());
  if (!parsed.ok) throw std::runtime_error(path + ": not JSON: " + parsed.error);
  const json j = std::move(parsed.value);
  CounterReport r;
  try {
    from_json(j, r);
  } catch (const CountersSchemaError& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return r;
}

// [SECTION] Table

std::optional<double> percent_error(const CounterRun& run, const std::string& key) {
  if (!run.predicted) return std::nullopt;
  const auto m = run.measured.find(key);
  const auto p = run.predicted->values.find(key);
  if (m == run.measured.end() || p == run.predicted->values.end() || m->second == 0)
    return std::nullopt;
  return 100.0 * (p->second - m->second) / m->second;
}

namespace {

std::string human(double v) {
  std::ostringstream os;
  const double a = std::fabs(v);
  if (a >= 1e9) {
    os << std::fixed << std::setprecision(2) << v / 1e9 << "G";
  } else if (a >= 1e6) {
    os << std::fixed << std::setprecision(2) << v / 1e6 << "M";
  } else if (a >= 1e4) {
    os << std::fixed << std::setprecision(1) << v / 1e3 << "k";
  } else {
    os << std::fixed << std::setprecision(0) << v;
  }
  return os.str();
}

// `text` padded with spaces to `width` columns, counting code points ("µ" and "³" are two bytes,
// one column).
std::string pad(const std::string& text, size_t width) {
  size_t cols = 0;
  for (const unsigned char c : text) cols += (c & 0xC0) != 0x80;
  return cols >= width ? text + " " : text + std::string(width - cols, ' ');
}

// Measured time under ncu beside the time model's (sim/predict/time_model.h), its limiter, and
// what ncu saw of the SMs: theoretical and achieved occupancy, the clock.
std::string format_time_rows(const CounterReport& r) {
  std::ostringstream os;
  os << "\nTime (measured under ncu / predicted by the time model, error) and limiter; "
        "occupancy and SM clock as ncu measured them:\n";
  for (const CounterRun& run : r.runs) {
    if (run.error) continue;
    const auto t = run.measured.find("time_ns");
    if (t == run.measured.end()) continue;
    std::string cell = io::format_ms(t->second * 1e-6) + " / ";
    std::string limiter = "—";
    if (run.predicted && run.predicted->values.count("time_ns")) {
      const double pv = run.predicted->values.at("time_ns");
      std::ostringstream e;
      e << io::format_ms(pv * 1e-6) << " (" << std::showpos << std::fixed << std::setprecision(1)
        << 100.0 * (pv - t->second) / t->second << "%)";
      cell += e.str();
      limiter = run.predicted->time_limiter;
    } else {
      cell += "—";
    }
    os << "  " << pad(run.suite, 14) << pad(std::to_string(run.m) + "³", 6)
       << pad("v" + std::to_string(run.version) + " " + run.name, 26) << pad(cell, 32)
       << pad(limiter, 12);
    // Theoretical occupancy is a launch property: the longest kernel's.
    const std::string& duration = counter_metric("time_ns")->ncu;
    const NcuKernel* longest = nullptr;
    for (const NcuKernel& k : run.kernels) {
      const auto d = k.metrics.find(duration);
      if (d == k.metrics.end()) continue;
      if (!longest || d->second > longest->metrics.at(duration)) longest = &k;
    }
    std::ostringstream occ;
    occ << std::fixed << std::setprecision(1);
    if (longest && longest->metrics.count(kTheoreticalOccupancyMetric))
      occ << "occupancy " << longest->metrics.at(kTheoreticalOccupancyMetric) << " % theoretical";
    if (run.measured.count("achieved_occupancy_pct"))
      occ << ", " << run.measured.at("achieved_occupancy_pct") << " % achieved";
    if (run.measured.count("sm_clock_hz"))
      occ << std::setprecision(3) << "; " << run.measured.at("sm_clock_hz") / 1e9 << " GHz";
    os << occ.str() << "\n";
  }
  return os.str();
}

}  // namespace

std::string format_counters_table(const CounterReport& r) {
  std::ostringstream os;
  const bool cpu = r.tool == "cachegrind";
  const std::string device = r.device.is_object() ? r.device.value("name", "?") : "?";
  if (cpu) {
    os << "Cache misses by cachegrind (" << r.ncu_version << ") on " << device;
    if (r.device.is_object() && r.device.contains("caches"))
      os << ", " << r.device["caches"].get<std::string>();
    os << ", " << r.date << "\n";
    os << "the generated C++ of each schedule run once under cachegrind; predicted by the same "
          "schedule's trace through the simulator set up as cachegrind's caches\n";
  } else {
    os << "Hardware counters (Nsight Compute " << r.ncu_version << ") on " << device;
    if (r.device.is_object() && r.device.contains("driver"))
      os << ", driver " << r.device["driver"].get<std::string>();
    os << ", " << r.date << "\n";
    os << "each version profiled once with cold caches (ncu flushes them before every kernel); "
          "predicted by the simulator's trace description of the kernel\n";
  }
  if (!r.metrics_unavailable.empty()) {
    os << "not measured (this ncu does not know the metric):";
    for (const std::string& k : r.metrics_unavailable) os << " " << k;
    os << "\n";
  }
  // The comparison the issue asks for: DRAM bytes, L2 sectors, shared-memory conflicts on a GPU;
  // D1 and LL misses on a CPU.
  struct Col {
    const char* title;
    std::vector<std::string> keys;  // summed
  };
  const std::vector<Col> cols =
      cpu ? std::vector<Col>{{"D1 misses", {"d1_misses"}}, {"LL misses", {"ll_misses"}}}
          : std::vector<Col>{
                {"DRAM bytes", {"dram_read_bytes", "dram_write_bytes"}},
                {"L2 sectors", {"l2_read_sectors", "l2_write_sectors"}},
                {"smem ld conflicts", {"shared_ld_conflicts"}},
                {"smem st conflicts", {"shared_st_conflicts"}},
            };
  auto total = [](const std::map<std::string, double>& m,
                  const std::vector<std::string>& keys) -> std::optional<double> {
    double t = 0;
    for (const std::string& k : keys) {
      const auto it = m.find(k);
      if (it == m.end()) return std::nullopt;
      t += it->second;
    }
    return t;
  };
  std::string last_group;
  for (const CounterRun& run : r.runs) {
    const std::string group = run.suite + " M=" + std::to_string(run.m) +
                              " N=" + std::to_string(run.n) + " K=" + std::to_string(run.k);
    if (group != last_group) {
      os << "\n== " << group << "\n";
      os << std::left << std::setw(26) << "  version";
      for (const Col& c : cols) os << std::setw(30) << (std::string(c.title) + " meas/pred (err)");
      os << "twin\n";
      last_group = group;
    }
    os << "  " << std::left << std::setw(24)
       << ("v" + std::to_string(run.version) + " " + run.name).substr(0, 23);
    if (run.error) {
      os << "ERROR: " << *run.error << "\n";
      continue;
    }
    for (const Col& c : cols) {
      const std::optional<double> m = total(run.measured, c.keys);
      const std::optional<double> p =
          run.predicted ? total(run.predicted->values, c.keys) : std::nullopt;
      const double mv = m.value_or(0.0), pv = p.value_or(0.0);
      std::string s = (m ? human(mv) : "—") + " / " + (p ? human(pv) : "—");
      if (m && p && mv != 0) {
        std::ostringstream e;
        e << " (" << std::showpos << std::fixed << std::setprecision(1) << 100.0 * (pv - mv) / mv
          << "%)";
        s += e.str();
      } else if (m && p && mv == 0 && pv == 0) {
        s += " (=)";
      }
      os << std::setw(30) << s;
    }
    os << (run.predicted ? (run.predicted->twin.empty() ? "none" : run.predicted->twin) : "—")
       << "\n";
    if (run.predicted) {
      if (!run.predicted->no_twin_reason.empty())
        os << "      no prediction: " << run.predicted->no_twin_reason << "\n";
      const std::map<std::string, double>& o = run.predicted->out_of_step;
      if (o.count("dram_read_bytes") && o.count("dram_write_bytes")) {
        const double mv = total(run.measured, {"dram_read_bytes", "dram_write_bytes"}).value_or(0);
        const double pv = o.at("dram_read_bytes") + o.at("dram_write_bytes");
        std::ostringstream e;
        e << "      blocks of an SM out of step: DRAM " << human(pv);
        if (mv > 0)
          e << " (" << std::showpos << std::fixed << std::setprecision(1)
            << 100.0 * (pv - mv) / mv << "%)";
        os << e.str() << "\n";
      }
      for (const auto& [key, cause] : run.predicted->causes)
        os << "      " << key << ": " << cause << "\n";
    }
  }
  if (cpu) return os.str();
  os << "\nL2 hit rate of reads (measured / predicted):\n";
  for (const CounterRun& run : r.runs) {
    if (!run.predicted) continue;
    auto rate = [](const std::map<std::string, double>& m) -> std::string {
      const auto h = m.find("l2_read_hit_sectors"), a = m.find("l2_read_sectors");
      if (h == m.end() || a == m.end() || a->second == 0) return "—";
      std::ostringstream o;
      o << std::fixed << std::setprecision(1) << 100.0 * h->second / a->second << "%";
      return o.str();
    };
    os << "  " << pad(run.suite, 14) << pad(std::to_string(run.m) + "³", 6)
       << pad("v" + std::to_string(run.version) + " " + run.name, 26) << rate(run.measured) << " / "
       << rate(run.predicted->values) << "\n";
  }
  os << format_time_rows(r);
  return os.str();
}

}  // namespace tilescope::kernels
