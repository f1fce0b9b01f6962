// `tilescope-cli import-trace trace.json --model FILE [--machine NAME] [--json]`: a PyTorch
// profiler trace mapped onto a model's nodes (sim/import/trace.h): which framework operators and
// kernels ran for each node, their measured share of the time beside tilescope's predicted
// share, the vendor kernels' names explained, and the element-wise chains a fusion would remove.
#include "commands.h"

#include "sim/import/trace.h"
#include "sim/io/format.h"
#include "sim/pipeline.h"
#include "sim/predict/machine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace tilescope::cli {
namespace {

struct TraceFlags {
  std::string trace;
  std::string model;
  std::string machine;
  bool json = false;
};

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * share);
  return buf;
}

std::string us(double v) {
  return io::format_ms(v / 1000);
}  // v in microseconds

nlohmann::json to_json(const import::ProfilerTrace& t, const import::TraceMapping& m) {
  nlohmann::json j;
  j["format"] = t.format;
  j["time_basis"] = m.time_basis;
  j["total_us"] = m.total_us;
  j["mapped_us"] = m.mapped_us;
  j["mapped_time_share"] = m.mapped_time_share;
  j["machine"] = m.machine;
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : m.nodes) {
    nlohmann::json ops = nlohmann::json::array();
    for (int ti : n.trace_ops) {
      const auto& op = t.ops[size_t(ti)];
      nlohmann::json kernels = nlohmann::json::array();
      for (int k : op.kernels) {
        const auto& tk = t.kernels[size_t(k)];
        const import::KernelName e = import::explain_kernel(tk.name);
        kernels.push_back({{"name", tk.name},
                           {"dur_us", tk.dur_us},
                           {"grid", tk.grid},
                           {"block", tk.block},
                           {"library", e.library},
                           {"what", e.what}});
      }
      ops.push_back({{"name", op.name},
                     {"dur_us", op.dur_us},
                     {"worker", op.worker()},
                     {"folded", n.folded(ti)},
                     {"kernels", kernels}});
    }
    nodes.push_back({{"line", n.line},
                     {"tensor", n.tensor},
                     {"text", n.text},
                     {"framework_ops", ops},
                     {"shared_with", n.shared_with},
                     {"measured_us", n.measured_us},
                     {"measured_share", n.measured_share},
                     {"predicted_share", n.predicted_share}});
  }
  j["nodes"] = nodes;
  nlohmann::json unmapped = nlohmann::json::array();
  for (int ti : m.unmapped_ops) unmapped.push_back(t.ops[size_t(ti)].name);
  j["unmapped_ops"] = unmapped;
  nlohmann::json fusions = nlohmann::json::array();
  for (const auto& f : m.fusions)
    fusions.push_back({{"after", f.after},
                       {"chain", f.chain},
                       {"steps", f.steps},
                       {"launches", f.launches},
                       {"round_trip_bytes", f.round_trip_bytes},
                       {"text", f.text}});
  j["fusions"] = fusions;
  j["notes"] = t.notes;
  return j;
}

void print(const import::ProfilerTrace& t, const import::TraceMapping& m) {
  std::cout << t.source << ": " << t.ops.size() << " framework operators"
            << (t.gpu ? ", " + std::to_string(t.kernels.size()) + " GPU kernels" : "") << " ("
            << t.format << " trace); shares of " << m.time_basis << ", " << us(m.total_us)
            << "\n\n";
  std::printf("%-28s %-10s %-10s %-10s  %s\n", "node", "measured", "share", "predicted",
              "what ran");
  for (const auto& n : m.nodes) {
    std::string ran;
    for (int ti : n.trace_ops) {
      const auto& op = t.ops[size_t(ti)];
      ran += (ran.empty() ? "" : "; ") + op.name;
      if (n.folded(ti)) ran += " (folded into this node by the exporter, run on its own)";
      if (!t.gpu && !op.worker().empty()) {
        const import::KernelName e = import::explain_kernel(op.worker());
        ran +=
            " → " + op.worker() + (e.library.empty() ? "" : " [" + e.library + ": " + e.what + "]");
      }
      for (int k : op.kernels) {
        const import::KernelName e = import::explain_kernel(t.kernels[size_t(k)].name);
        ran += " [" +
               (e.library.empty() ? t.kernels[size_t(k)].name.substr(0, 40)
                                  : e.library + ": " + e.what) +
               "]";
      }
    }
    if (!n.shared_with.empty()) ran = "(in " + n.shared_with + "'s operator)";
    std::cout << io::pad_right(n.tensor, 28) << " "
              << io::pad_right(n.trace_ops.empty() ? "-" : us(n.measured_us), 10) << " "
              << io::pad_right(n.trace_ops.empty() ? "-" : pct(n.measured_share), 10) << " "
              << io::pad_right(pct(n.predicted_share), 10) << "  " << ran << "\n";
  }
  std::cout << "\nmapped to the model's nodes: " << pct(m.mapped_time_share) << " of "
            << m.time_basis << "; predicted shares: roofline time per node on " << m.machine
            << "\n";
  if (!m.unmapped_ops.empty()) {
    std::cout << "operators matched to no node:";
    for (int ti : m.unmapped_ops) std::cout << " " << t.ops[size_t(ti)].name;
    std::cout << "\n";
  }
  for (const auto& f : m.fusions) std::cout << "fusion: " << f.text << "\n";
  for (const auto& n : t.notes) std::cout << "note: " << n << "\n";
}

int run_import_trace(const TraceFlags& flags) {
  try {
    const import::ProfilerTrace trace = import::read_profiler_trace_file(flags.trace);
    const pipeline::ModelText model = pipeline::read_model(flags.model);
    const auto graph = pipeline::parse(model);
    const std::string machine_name = !flags.machine.empty() ? flags.machine
                                     : trace.gpu            ? "h200"
                                                            : "host";
    const predict::Machine machine = predict::load_machine(machine_name);
    const import::TraceMapping m = import::map_trace(*graph, model.text, trace, machine);
    if (flags.json) {
      std::cout << to_json(trace, m).dump(2) << "\n";
    } else {
      print(trace, m);
    }
    return 0;
  } catch (const graph::GraphError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

const CommandRegistrar kRegistrar{
    "import-trace",
    "Map a PyTorch profiler trace onto a model's nodes: what ran for each, measured vs predicted",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<TraceFlags>();
      sub.add_option("TRACE", flags->trace,
                     "a Chrome trace from torch.profiler (export_chrome_trace)")
          ->required();
      sub.add_option("--model", flags->model, "the model that ran: an .onnx file or model text")
          ->required();
      sub.add_option("--machine", flags->machine,
                     "machine for the predicted shares (default: h200 for a GPU trace, host)");
      sub.add_flag("--json", flags->json, "print JSON (mapped_time_share, nodes, fusions)");
      sub.callback([flags, &exit_code] { exit_code = run_import_trace(*flags); });
    }};

}  // namespace
}  // namespace tilescope::cli
