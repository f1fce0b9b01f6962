// `tilescope-cli simulate`: runs an address trace through a machine's memory hierarchy and prints
// per-level and per-tensor tables (or JSON).
//
// The trace source is a function that streams accesses into a sink, so other sources (a model
// file with `--apply "…"` walked by the schedule room) plug in beside the din reader.
#include "commands.h"

#include "sim/memory/din.h"
#include "sim/memory/hierarchy.h"
#include "sim/memory/report.h"
#include "sim/memory/tensor_regions.h"
#include "sim/model/machine.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

struct SimulateFlags {
  std::string trace;
  std::string machine = "tiny";
  bool json = false;
  bool no_3c = false;
  bool no_reuse = false;
  bool write_back_all = false;
  std::vector<std::string> tensors;
};

// A trace source streams its accesses into the sink and returns how many it produced.
using TraceSource = std::function<uint64_t(memory::AccessSink&)>;

int simulate(const SimulateFlags& f, const std::string& trace_label, const TraceSource& source,
             const std::vector<std::string>& tensor_names) {
  model::Machine machine = model::load_machine(f.machine);
  memory::HierarchyOptions options;
  options.classify_misses = !f.no_3c;
  options.reuse_distance = !f.no_reuse;
  memory::Hierarchy hierarchy(machine.hierarchy(), options);
  uint64_t n = source(hierarchy);
  hierarchy.finish();
  if (f.write_back_all) hierarchy.write_back_all();

  memory::ReportOptions ro;
  ro.tensor_names = tensor_names;
  if (f.json) {
    nlohmann::json j;
    j["machine"] = {{"name", machine.name}, {"source", machine.source}};
    j["trace"] = {{"source", trace_label}, {"accesses", n}};
    j["write_back_all"] = f.write_back_all;
    j["report"] = memory::report_json(hierarchy, ro);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "machine " << machine.name << " (" << machine.source << "), trace " << trace_label
              << ": " << n << " accesses"
              << (f.write_back_all ? ", dirty lines written back at the end" : "") << "\n\n"
              << memory::format_report(hierarchy, ro);
  }
  return 0;
}

int run_simulate(const SimulateFlags& f) {
  if (f.trace.empty()) {
    std::cerr << "simulate: give a trace with --trace FILE.din\n";
    return 1;
  }
  std::vector<memory::TensorRegion> regions;
  for (const std::string& t : f.tensors) regions.push_back(memory::parse_tensor_region(t));
  std::vector<std::string> names;
  for (const auto& r : regions) names.push_back(r.name);
  TraceSource din = [&](memory::AccessSink& sink) {
    if (regions.empty()) return memory::read_din_file(f.trace, sink);
    memory::TensorRegionSink labelled(regions, sink);
    return memory::read_din_file(f.trace, labelled);
  };
  return simulate(f, f.trace, din, names);
}

const CommandRegistrar registrar{
    "simulate", "Run an address trace through a machine's simulated memory hierarchy",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<SimulateFlags>();
      sub.add_option("--trace", flags->trace, "Dinero IV din trace (label address [size])");
      sub.add_option("--machine", flags->machine,
                     "Preset name (tiny, host, h100, h200, a100, rtx4090) or a .machine file")
          ->capture_default_str();
      sub.add_flag("--json", flags->json, "Print JSON instead of tables");
      sub.add_flag("--no-3c", flags->no_3c, "Skip the compulsory/capacity/conflict split (faster)");
      sub.add_flag("--no-reuse", flags->no_reuse, "Skip the reuse-distance histogram (faster)");
      sub.add_flag("--write-back-all", flags->write_back_all,
                   "At the end, write every dirty line down to memory");
      sub.add_option("--tensor", flags->tensors,
                     "Label an address range as a tensor: NAME=BASE+BYTES (repeatable)");
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_simulate(*flags);
        } catch (const memory::TraceError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const model::MachineError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const std::invalid_argument& e) {
          std::cerr << "simulate: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli
