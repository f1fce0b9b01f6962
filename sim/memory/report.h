// Text tables and JSON for a Hierarchy's results: per level, per tensor, traffic between levels,
// reuse-distance histograms and scratchpad bank conflicts. Shared by the CLI and the app.
#pragma once

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

// "48 KiB", "2 MiB", "1.5 GB" style: exact binary units when they divide, else 3 significant
// digits.
std::string format_bytes(double bytes);

}  // namespace tilescope::memory
