// Exports: the views' tables as CSV or JSON, and the centre view as a PNG (exports.h).
#include "app/core/exports.h"

#include "app/core/autotune_jobs.h"
#include "app/core/lesson_grade.h"
#include "app/core/session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace tilescope::core {

// [SECTION] Tables

namespace {

std::string csv_field(const nlohmann::json& v) {
  std::string s;
  if (v.is_null()) return s;
  if (v.is_string()) {
    s = v.get<std::string>();
  } else if (v.is_number_integer() || v.is_number_unsigned() || v.is_boolean()) {
    s = v.dump();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    char buf[40];
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 1e15)
      std::snprintf(buf, sizeof buf, "%.0f", d);
    else
      std::snprintf(buf, sizeof buf, "%.17g", d);
    s = buf;
  } else {
    s = v.dump();
  }
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string table_csv(const Table& t) {
  std::ostringstream o;
  for (size_t c = 0; c < t.columns.size(); ++c) o << (c ? "," : "") << csv_field(t.columns[c]);
  o << "\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) o << (c ? "," : "") << csv_field(row[c]);
    o << "\n";
  }
  return o.str();
}

nlohmann::json table_json(const Table& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json r = nlohmann::json::object();
    for (size_t c = 0; c < row.size() && c < t.columns.size(); ++c) r[t.columns[c]] = row[c];
    out.push_back(std::move(r));
  }
  return out;
}

Table memory_levels_table(const MemoryResult& r) {
  Table t{{"level", "size_bytes", "accesses", "hits", "misses", "hit_rate", "read_bytes",
           "write_bytes", "compulsory", "capacity", "conflict"},
          {}};
  for (const LevelResult& l : r.levels) {
    const memory::Counters& c = l.total;
    t.rows.push_back({l.name, l.size_bytes, c.accesses, c.hits, c.misses, c.hit_rate(),
                      c.read_bytes, c.write_bytes, c.compulsory, c.capacity, c.conflict});
  }
  return t;
}

Table memory_tensors_table(const MemoryResult& r) {
  Table t{{"tensor", "level", "accesses", "hits", "misses", "read_bytes", "write_bytes"}, {}};
  for (size_t id = 0; id <= r.tensor_names.size(); ++id) {
    // Row 0 of by_tensor is the unlabelled accesses; then graph tensor ids.
    const std::string name = id == 0 ? "(other)" : r.tensor_names[id - 1];
    for (const LevelResult& l : r.levels) {
      if (id >= l.by_tensor.size()) continue;
      const memory::Counters& c = l.by_tensor[id];
      if (c.accesses == 0 && c.read_bytes + c.write_bytes == 0) continue;
      t.rows.push_back({name, l.name, c.accesses, c.hits, c.misses, c.read_bytes, c.write_bytes});
    }
  }
  return t;
}

Table comparison_table(const Comparison& c) {
  Table t{{"level", "tensor", "what", "a", "b", "delta", "relative"}, {}};
  const auto add = [&](const CompareRow& r) {
    const double rel = r.relative();
    t.rows.push_back({r.level, r.tensor, r.what, r.a, r.b, r.delta(),
                      std::isinf(rel) ? nlohmann::json(nullptr) : nlohmann::json(rel)});
  };
  for (const CompareRow& r : c.levels) add(r);
  if (c.time) add(*c.time);
  for (const CompareRow& r : c.tensors) add(r);
  return t;
}

Table counters_over_time_table(const CountersOverTime& r) {
  Table t{{"frame", "step", "accesses"}, {}};
  for (const std::string& l : r.level_names)
    for (const char* what : {"_accesses", "_hits", "_hit_rate", "_bytes"})
      t.columns.push_back(l + what);
  for (size_t f = 0; f < r.frame_counters.size(); ++f) {
    std::vector<nlohmann::json> row = {f, r.frame_step[f], r.frame_accesses[f]};
    for (const LevelWindow& w : counters_window(r, f)) {
      row.push_back(w.accesses);
      row.push_back(w.hits);
      row.push_back(w.hit_rate());
      row.push_back(w.bytes);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table autotune_table(const AutotuneGrid& g) {
  Table t{{g.loop_a, g.loop_b, "step", "status", "seconds", "min_seconds", "best", "detail"}, {}};
  for (size_t i = 0; i < g.points.size(); ++i) {
    const AutotunePoint& p = g.points[i];
    t.rows.push_back(
        {p.tile_a, p.tile_b, p.step,
         p.refused  ? "refused"
         : p.failed ? "failed"
                    : "ok",
         p.ok() ? nlohmann::json(p.seconds) : nlohmann::json(nullptr),
         p.ok() && p.min_seconds > 0 ? nlohmann::json(p.min_seconds) : nlohmann::json(nullptr),
         int(i) == g.best, p.ok() ? p.detail : p.why});
  }
  return t;
}

Table timings_table(const nlohmann::json& report) {
  Table t{{"suite", "version", "name", "median_ms", "min_ms", "gflops", "gbps", "pct_of_reference",
           "verified"},
          {}};
  const auto field = [](const nlohmann::json& j, const char* k) {
    const auto it = j.find(k);
    return it == j.end() ? nlohmann::json(nullptr) : *it;
  };
  for (const auto& suite : report.value("suites", nlohmann::json::array()))
    for (const auto& res : suite.value("results", nlohmann::json::array()))
      t.rows.push_back({field(suite, "name"), field(res, "version"), field(res, "name"),
                        field(res, "median_ms"), field(res, "min_ms"), field(res, "gflops"),
                        field(res, "gbps"), field(res, "pct_of_reference"),
                        field(res, "verified")});
  return t;
}

Table measured_table(const std::vector<CounterLevelRow>& rows) {
  Table t{{"level", "what", "measured", "predicted", "error_pct", "bound_pct", "within", "cause"},
          {}};
  for (const CounterLevelRow& r : rows)
    t.rows.push_back({r.level, r.what, r.measured, optional_number(r.predicted),
                      optional_number(r.error_pct), optional_number(r.bound_pct), r.within,
                      r.cause});
  return t;
}

Table measured_report_table(const kernels::CounterReport& report) {
  Table t = measured_table({});
  t.columns.insert(t.columns.begin(), {"run", "kernel"});
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const kernels::CounterRun& run = report.runs[i];
    for (std::vector<nlohmann::json>& row : measured_table(counter_level_rows(report, run)).rows) {
      row.insert(row.begin(), {nlohmann::json(i), nlohmann::json(counter_run_label(run))});
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// [SECTION] What can be exported

const std::vector<ExportEntry>& export_entries() {
  static const std::vector<ExportEntry> entries = {
      {"memory-levels", "Memory: each level (CSV)"},
      {"memory-tensors", "Memory: each tensor at each level (CSV)"},
      {"baseline", "Baseline A against B (CSV)"},
      {"counters", "Counters over time (CSV)"},
      {"autotune", "Autotune sweep points (CSV)"},
      {"timings", "Recorded timings shown (CSV)"},
      {"measured", "Predicted vs measured (CSV)"},
      {"grade", "Your grade (CSV)"},
      {"view", "This view as a picture (PNG)"},
  };
  return entries;
}

std::string export_names() {
  std::string out;
  for (const ExportEntry& e : export_entries())
    out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::string export_default_name(const AppState& state, const std::string& name) {
  if (name == "view") return std::string("view-") + view_tab_name(state.workbench.tab) + ".png";
  return name + ".csv";
}

namespace {

const AutotuneGrid* shown_autotune(const Workbench& wb) {
  if (const AutotuneGrid* cpu = autotune_cpu_result(wb)) return cpu;
  return autotune_sim_result(wb);
}

}  // namespace

namespace {

// The counters recording the Memory view shows for the current machine, if any.
const std::pair<std::string, kernels::CounterReport>* shown_counters(const Workbench& wb) {
  const auto* rec =
      counters_for_machine_kind(wb.counters_recorded, wb.machine ? wb.machine->kind : "cpu",
                                wb.machine ? wb.machine->name : "");
  return rec && !rec->second.runs.empty() ? rec : nullptr;
}

// The GPU mode's wave for the current pick, when it has counters over time.
const GpuTilesResult* gpu_counters_shown(const Workbench& wb) {
  return wb.gpu_tiles && wb.gpu_tiles_key == wb.gpu_tiles_key_now() &&
                 wb.gpu_tiles->frame_counters.size() > 1
             ? &*wb.gpu_tiles
             : nullptr;
}

}  // namespace

bool export_ready(const AppState& state, const std::string& name, std::string& why) {
  const Workbench& wb = state.workbench;
  if (name == "memory-levels" || name == "memory-tensors") {
    if (wb.memory_result()) return true;
    why = "the current schedule is not simulated yet (open the Memory view)";
  } else if (name == "baseline") {
    if (wb.baseline && wb.baseline->ready() && wb.memory_result()) return true;
    why = wb.baseline ? "baseline A or the current schedule is still being simulated"
                      : "no baseline is pinned (Memory view: Pin as baseline A)";
  } else if (name == "counters") {
    if (wb.tiles_gpu
            ? gpu_counters_shown(wb) != nullptr
            : wb.tiles && wb.tiles_key == wb.tiles_key_now() && wb.tiles->frame_counters.size() > 1)
      return true;
    why = wb.tiles_gpu ? "the GPU mode has not recorded this pick's wave yet (the Tiles view)"
                       : "no counters over time for this schedule (the Tiles view records them "
                         "on a CPU machine, or in its GPU mode)";
  } else if (name == "autotune") {
    if (shown_autotune(wb)) return true;
    why = "no autotune sweep of this kernel yet (Timings view: Autotune sweep)";
  } else if (name == "timings") {
    if (!wb.recorded.empty()) return true;
    why = "no recorded measurements are loaded";
  } else if (name == "measured") {
    if (shown_counters(wb)) return true;
    why = "no counters recording for this machine";
  } else {
    why = "unknown table '" + name + "'";
  }
  return false;
}

std::optional<Table> export_table(const AppState& state, const std::string& name,
                                  std::string& why) {
  if (!export_ready(state, name, why)) return std::nullopt;
  const Workbench& wb = state.workbench;
  if (name == "memory-levels") return memory_levels_table(*wb.memory_result());
  if (name == "memory-tensors") return memory_tensors_table(*wb.memory_result());
  if (name == "baseline") {
    if (std::optional<Comparison> c = workbench_comparison(wb)) return comparison_table(*c);
    why = "baseline A or the current schedule is still being simulated";
    return std::nullopt;
  }
  if (name == "counters")
    return counters_over_time_table(wb.tiles_gpu ? *gpu_counters_shown(wb)
                                                 : static_cast<const CountersOverTime&>(*wb.tiles));
  if (name == "autotune") return autotune_table(*shown_autotune(wb));
  if (name == "timings") {
    const size_t i =
        size_t(std::clamp(state.controls.views.timings_report, 0, int(wb.recorded.size()) - 1));
    return timings_table(wb.recorded[i].second);
  }
  // measured
  const auto& [file, report] = *shown_counters(wb);
  const size_t i =
      size_t(std::clamp(state.controls.views.measured_run, 0, int(report.runs.size()) - 1));
  return measured_table(counter_level_rows(report, report.runs[i]));
}

std::string export_to_file(AppState& state, const std::string& name, const std::string& path) {
  if (path.empty()) return "export: needs a file name";
  if (name == "grade")
    return "export grade: the grade is written by save_grade_file (files.h: File > Export)";
  if (name == "view") {
    state.requests.view_png_path = path;
    state.notice =
        "saved the " + std::string(view_tab_title(state.workbench.tab)) + " view as " + path;
    return {};
  }
  std::string why;
  const std::optional<Table> t = export_table(state, name, why);
  if (!t) return "export " + name + ": " + why;
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  const std::string text = json ? table_json(*t).dump(2) + "\n" : table_csv(*t);
  if (std::string e = write_file_atomically(text, path, name); !e.empty()) return e;
  state.notice = "exported " + name + " (" + std::to_string(t->rows.size()) + " rows) to " + path;
  return {};
}

}  // namespace tilescope::core
