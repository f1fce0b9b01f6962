// The workbench's recordings: the JSON results of the GPU bench and counters runs under
// assets/recorded, loaded once and listed newest first.
#include "app/core/workbench.h"

#include "kernels/cpu/bench_report.h"
#include "kernels/gpu_counters.h"
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <algorithm>
#include <filesystem>

namespace tilescope::core {

void workbench_load_recorded(Workbench& wb, const std::string& dir) {
  wb.recorded_loaded = true;
  wb.recorded.clear();
  wb.counters_recorded.clear();
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  if (ec) {
    wb.recorded_error = "cannot list '" + dir + "': " + ec.message();
    return;
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    // Hardware-counter recordings (tilescope-counters/1) are not timing reports: the Memory
    // view's predicted-vs-measured table reads them.
    if (const io::TextInput in = io::read_text_input(f, io::kMaxRecordingBytes, "a recording");
        in.ok && kernels::is_counters_document(io::parse_json(in.text).value)) {
      try {
        wb.counters_recorded.emplace_back(f, kernels::load_counters_report(f));
      } catch (const std::exception& e) {
        wb.recorded_error += std::string(e.what()) + "\n";
      }
      continue;
    }
    try {
      wb.recorded.emplace_back(f, kernels::read_bench_report(f));
    } catch (const std::exception& e) {
      wb.recorded_error += std::string(e.what()) + "\n";
    }
  }
  // Newest first (ISO dates compare as text; undated reports last, by file name), so the Timings
  // view opens on the latest recording and the older ones stay a click away.
  std::stable_sort(wb.recorded.begin(), wb.recorded.end(), [](const auto& x, const auto& y) {
    return x.second.value("date", std::string()) > y.second.value("date", std::string());
  });
}

}  // namespace tilescope::core
