// Reading, writing, checking and printing benchmark reports (schema "tilescope-bench/1").
#include "kernels/cpu/bench_report.h"
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace tilescope::kernels {

using nlohmann::json;

std::string check_bench_report(const json& report) {
  try {
    (void)report.get<BenchReport>();
  } catch (const BenchSchemaError& e) {
    return e.what();
  }
  return "";
}

namespace {

json parse_report_file(const std::string& path) {
  const io::TextInput in = io::read_text_input(path, io::kMaxRecordingBytes, "a benchmark report");
  if (!in.ok) throw BenchReportError(in.error);
  io::JsonInput parsed = io::parse_json(in.text);
  if (!parsed.ok) throw BenchReportError(path + ": not valid JSON (" + parsed.error + ")");
  return std::move(parsed.value);
}

BenchReport report_of(const json& document, const std::string& path) {
  try {
    return document.get<BenchReport>();
  } catch (const BenchSchemaError& e) {
    throw BenchReportError(path + ": not a tilescope benchmark report: " + e.what());
  }
}

}  // namespace

BenchReport load_bench_report(const std::string& path) {
  return report_of(parse_report_file(path), path);
}

json read_bench_report(const std::string& path) {
  json document = parse_report_file(path);
  (void)report_of(document, path);
  return document;
}

void write_bench_report(const BenchReport& report, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  out << json(report).dump(2) << "\n";
  if (!out) throw BenchReportError(path + ": cannot write the benchmark report");
}

namespace {

std::string fixed(const std::optional<double>& value, int decimals) {
  if (!value) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, *value);
  return text;
}

std::string scientific(const std::optional<double>& value) {
  if (!value) return "-";
  if (*value == 0.0) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", *value);
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

std::string format_bench_table(const BenchReport& report) {
  std::ostringstream out;
  if (report.kind == "gpu") {
    const json device = report.device.value_or(json::object());
    out << "GPU: " << device.value("name", "unknown device") << " (cc " << device.value("cc", "?")
        << ")";
  } else {
    const HostDescription host =
        report.host.value_or(HostDescription{"unknown", 0, {}, {}, {}, {}});
    out << "CPU: " << host.cpu << ", " << host.cores << " hardware threads, "
        << host.caches.value_or("caches unknown");
  }
  out << "\n";
  if (report.compiler)
    out << "compiler: " << *report.compiler << "  flags: " << report.flags.value_or("") << "\n";
  out << "date: " << report.date.value_or("unknown") << "\n";
  const auto peak = [&](double PeakRates::*field) {
    return report.peaks ? std::optional<double>((*report.peaks).*field) : std::nullopt;
  };
  out << "peaks: " << fixed(peak(&PeakRates::gflops_fp32), 1) << " GFLOP/s fp32, "
      << fixed(peak(&PeakRates::gbps), 1) << " GB/s";
  if (report.peaks_source) out << " (" << *report.peaks_source << ")";
  out << "\n";

  for (const SuiteResult& suite : report.suites) {
    out << "\n== " << suite.name << ": " << suite.problem << "\n";
    if (suite.error) {
      out << "   not run: " << *suite.error << "\n";
      continue;
    }
    out << "   reference: " << suite.reference << "; % peak against "
        << (suite.bound.value_or("compute") == "memory" ? "the bandwidth peak" : "the FLOP/s peak")
        << "\n";
    out << pad("#", 3, true) << "  " << pad("version", 22, false) << pad("median ms", 11, true)
        << pad("min ms", 10, true) << pad("GFLOP/s", 10, true) << pad("GB/s", 9, true)
        << pad("% ref", 8, true) << pad("% peak", 8, true) << pad("rel err", 9, true) << "  ok\n";
    for (const VersionResult& r : suite.results) {
      const auto timed = [&](double Timing::*field) {
        return r.timing ? std::optional<double>((*r.timing).*field) : std::nullopt;
      };
      out << pad(std::to_string(r.version), 3, true) << "  " << pad(r.name, 22, false)
          << pad(fixed(timed(&Timing::median_ms), 3), 11, true)
          << pad(fixed(timed(&Timing::min_ms), 3), 10, true) << pad(fixed(r.gflops, 1), 10, true)
          << pad(fixed(r.gbps, 1), 9, true) << pad(fixed(r.pct_of_reference, 1), 8, true)
          << pad(fixed(r.pct_of_peak, 1), 8, true) << pad(scientific(r.rel_error), 9, true) << "  "
          << (r.verified ? "yes" : "NO") << "\n";
      if (r.note) {
        std::istringstream note(*r.note);
        std::string line;
        for (int shown = 0; std::getline(note, line) && shown < 12; ++shown)
          out << "     " << (shown == 0 ? "note: " : "      ") << line << "\n";
      }
      if (r.jit_command)
        out << "     compiled with: " << *r.jit_command
            << (r.cache_hit.value_or(false) ? "  (cache hit)" : "") << "\n";
    }
    for (const Comparison& c : suite.comparisons) {
      out << "   " << c.label << ": time ratio " << fixed(c.time_ratio, 2);
      // A GPU report recorded before comparisons existed has the median ratio only.
      if (c.min_time_ratio || !c.time_ratio)
        out << " (medians; " << fixed(c.min_time_ratio, 2) << " of the fastest runs)";
      else
        out << " (medians)";
      if (c.byte_ratio || !c.time_ratio)
        out << ", byte ratio " << fixed(c.byte_ratio, 2) << " (compulsory traffic)";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace tilescope::kernels
