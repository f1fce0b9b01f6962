// Text tables and JSON for a Hierarchy's results: per level, per tensor, traffic between levels,
// reuse-distance histograms and scratchpad bank conflicts. Shared by the CLI and the app.
#pragma once

#include "sim/io/format.h"
#include "sim/memory/hierarchy.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilescope::memory {

struct ReportOptions {
  std::vector<std::string> tensor_names;  // [id] → name; ids beyond it print as "t<id>"
};

std::string format_report(const Hierarchy& h, const ReportOptions& options = {});
nlohmann::json report_json(const Hierarchy& h, const ReportOptions& options = {});

using io::format_bytes;  // "48 KiB", "2 MiB", "1.5 GiB" (sim/io/format.h)

}  // namespace tilescope::memory
