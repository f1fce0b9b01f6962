// Reading, writing, checking and printing benchmark reports (bench_schema "tilescope-bench/1").
#include "kernels/cpu/bench_report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace tilescope::kernels {

using nlohmann::json;

std::string check_bench_report(const json& report) {
  if (!report.is_object()) return "the report is not a JSON object";
  if (report.value("schema", "") != "tilescope-bench/1")
    return "field \"schema\" must be \"tilescope-bench/1\"";
  const std::string kind = report.value("kind", "");
  if (kind != "cpu" && kind != "gpu") return "field \"kind\" must be \"cpu\" or \"gpu\"";
  if (!report.contains("suites") || !report["suites"].is_array())
    return "field \"suites\" must be an array";
  for (std::size_t i = 0; i < report["suites"].size(); ++i) {
    const json& suite = report["suites"][i];
    const std::string where = "suites[" + std::to_string(i) + "]";
    if (!suite.is_object() || !suite.contains("name") || !suite["name"].is_string())
      return where + " needs a string \"name\"";
    if (!suite.contains("results") || !suite["results"].is_array())
      return where + " (" + suite["name"].get<std::string>() + ") needs an array \"results\"";
    for (std::size_t j = 0; j < suite["results"].size(); ++j) {
      const json& r = suite["results"][j];
      const std::string rwhere = where + ".results[" + std::to_string(j) + "]";
      if (!r.is_object() || !r.contains("version") || !r["version"].is_number_integer())
        return rwhere + " needs an integer \"version\"";
      if (!r.contains("name") || !r["name"].is_string()) return rwhere + " needs a string \"name\"";
      if (!r.contains("verified") || !r["verified"].is_boolean())
        return rwhere + " needs a boolean \"verified\"";
      if (r["verified"].get<bool>() && !(r.contains("median_ms") && r["median_ms"].is_number()))
        return rwhere + " is verified but has no number \"median_ms\"";
    }
  }
  return "";
}

json read_bench_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BenchReportError(path + ": cannot open the benchmark report");
  json report;
  try {
    report = json::parse(in);
  } catch (const json::parse_error& e) {
    throw BenchReportError(path + ": not valid JSON (" + e.what() + ")");
  }
  if (const std::string problem = check_bench_report(report); !problem.empty())
    throw BenchReportError(path + ": not a tilescope benchmark report: " + problem);
  return report;
}

void write_bench_report(const json& report, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  out << report.dump(2) << "\n";
  if (!out) throw BenchReportError(path + ": cannot write the benchmark report");
}

namespace {

std::string fixed(const json& value, int decimals) {
  if (!value.is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value.get<double>());
  return text;
}

std::string scientific(const json& value) {
  if (!value.is_number()) return "-";
  const double v = value.get<double>();
  if (v == 0.0) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", v);
  return text;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  // Width in code points, so "×" and "·" do not break the columns.
  std::size_t length = 0;
  for (unsigned char ch : text) length += (ch & 0xC0) != 0x80;
  if (length >= width) return text;
  const std::string fill(width - length, ' ');
  return right ? fill + text : text + fill;
}

}  // namespace

std::string format_bench_table(const json& report) {
  std::ostringstream out;
  const json host = report.value("host", json::object());
  if (report.value("kind", "") == "gpu") {
    const json device = report.value("device", json::object());
    out << "GPU: " << device.value("name", "unknown device") << " (cc " << device.value("cc", "?")
        << ")";
  } else {
    out << "CPU: " << host.value("cpu", "unknown") << ", " << host.value("cores", 0)
        << " hardware threads, " << host.value("caches", "caches unknown");
  }
  out << "\n";
  if (report.contains("compiler"))
    out << "compiler: " << report.value("compiler", "") << "  flags: " << report.value("flags", "")
        << "\n";
  out << "date: " << report.value("date", "unknown") << "\n";
  const json peaks = report.value("peaks", json::object());
  out << "peaks: " << fixed(peaks.value("gflops_fp32", json()), 1) << " GFLOP/s fp32, "
      << fixed(peaks.value("gbps", json()), 1) << " GB/s";
  if (report.contains("peaks_source")) out << " (" << report.value("peaks_source", "") << ")";
  out << "\n";

  for (const json& suite : report.value("suites", json::array())) {
    out << "\n== " << suite.value("name", "?") << ": " << suite.value("problem", "") << "\n";
    out << "   reference: " << suite.value("reference", "?") << "; % peak against "
        << (suite.value("bound", "compute") == "memory" ? "the bandwidth peak" : "the FLOP/s peak")
        << "\n";
    out << pad("#", 3, true) << "  " << pad("version", 22, false) << pad("median ms", 11, true)
        << pad("min ms", 10, true) << pad("GFLOP/s", 10, true) << pad("GB/s", 9, true)
        << pad("% ref", 8, true) << pad("% peak", 8, true) << pad("rel err", 9, true) << "  ok\n";
    for (const json& r : suite.value("results", json::array())) {
      const bool verified = r.value("verified", false);
      out << pad(std::to_string(r.value("version", -1)), 3, true) << "  "
          << pad(r.value("name", "?"), 22, false)
          << pad(fixed(r.value("median_ms", json()), 3), 11, true)
          << pad(fixed(r.value("min_ms", json()), 3), 10, true)
          << pad(fixed(r.value("gflops", json()), 1), 10, true)
          << pad(fixed(r.value("gbps", json()), 1), 9, true)
          << pad(fixed(r.value("pct_of_reference", json()), 1), 8, true)
          << pad(fixed(r.value("pct_of_peak", json()), 1), 8, true)
          << pad(scientific(r.value("rel_error", json())), 9, true) << "  "
          << (verified ? "yes" : "NO") << "\n";
      if (r.contains("note") && r["note"].is_string()) {
        std::istringstream note(r["note"].get<std::string>());
        std::string line;
        for (int shown = 0; std::getline(note, line) && shown < 12; ++shown)
          out << "     " << (shown == 0 ? "note: " : "      ") << line << "\n";
      }
      if (r.contains("jit_command") && r["jit_command"].is_string())
        out << "     compiled with: " << r["jit_command"].get<std::string>()
            << (r.value("cache_hit", false) ? "  (cache hit)" : "") << "\n";
    }
    for (const json& c : suite.value("comparisons", json::array())) {
      out << "   " << c.value("label", "?") << ": time ratio "
          << fixed(c.value("time_ratio", json()), 2) << " (medians; "
          << fixed(c.value("min_time_ratio", json()), 2) << " of the fastest runs), byte ratio "
          << fixed(c.value("byte_ratio", json()), 2) << " (compulsory traffic)\n";
    }
  }
  return out.str();
}

}  // namespace tilescope::kernels
