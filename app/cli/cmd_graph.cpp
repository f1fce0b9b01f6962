// `tilescope-cli graph FILE`: parses a model and prints every op's shapes, FLOPs, bytes and
// intensity.
#include "commands.h"

#include "sim/graph/autodiff.h"
#include "sim/io/format.h"
#include "sim/pipeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

using namespace tilescope::graph;

struct GraphFlags {
  std::string file;
  bool json = false;
  bool train = false;
  std::string loss = "mse";
  double learning_rate = 0.01;
};

constexpr const char* kFlopConvention =
    "FLOPs: a multiply-add counts 2, any other arithmetic 1 per output element per operation; "
    "bytes: every input read once and the output written once (the minimum traffic).";

std::string with_separators(int64_t value) {
  std::string digits = std::to_string(value);
  size_t first = digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, first);
  for (size_t i = first; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// "x [64, 1024], W.T [1024, 512] → [64, 512]": operands as the op reads them.
std::string shapes_text(const Graph& g, const Op& op) {
  std::string out;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor& t = g.tensor(op.inputs[i]);
    bool trans = op.kind == OpKind::MatMul && (i == 0 ? op.attrs.trans_a : op.attrs.trans_b);
    Shape shape = t.shape;
    if (trans) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    out += (i ? ", " : "") + t.name + (trans ? ".T " : " ") + shape_to_string(shape);
  }
  return out + " \xE2\x86\x92 " + shape_to_string(g.tensor(op.outputs[0]).shape);
}

Graph load(const GraphFlags& flags) {
  Graph g = *pipeline::parse(pipeline::read_model(flags.file));
  if (!flags.train) return g;
  TrainingOptions options;
  options.loss = flags.loss == "ce" ? LossKind::CrossEntropy : LossKind::MSE;
  options.learning_rate = flags.learning_rate;
  return build_training_graph(g, options);
}

struct Row {
  OpId id;
  OpCost cost;
};

// Ops sorted by FLOPs, most first; equal FLOPs keep graph order so the output is stable.
std::vector<Row> sorted_rows(const Graph& g) {
  std::vector<Row> rows;
  for (OpId i = 0; i < static_cast<OpId>(g.ops().size()); ++i) rows.push_back({i, g.op_cost(i)});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.cost.flops > b.cost.flops; });
  return rows;
}

struct Totals {
  OpCost cost;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
};

Totals totals(const Graph& g) {
  Totals t;
  t.cost = g.total_cost();
  for (const Tensor& tensor : g.tensors()) {
    if (tensor.role == Role::Weight && tensor.producer < 0) {
      t.parameters += tensor.numel();
      t.parameter_bytes += tensor.bytes();
    }
  }
  return t;
}

double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void print_table(const Graph& g, const GraphFlags& flags, std::ostream& os) {
  const std::vector<Row> rows = sorted_rows(g);
  const Totals total = totals(g);
  const std::vector<std::string> header = {
      "op", "kind", "inputs \xE2\x86\x92 output", "FLOPs", "bytes", "FLOP/byte", "share"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    const Op& op = g.op(r.id);
    cells.push_back({op.name, op_kind_name(op.kind), shapes_text(g, op),
                     with_separators(r.cost.flops), with_separators(r.cost.bytes()),
                     fixed(r.cost.intensity(), 2),
                     fixed(share(r.cost.flops, total.cost.flops), 1) + "%"});
  }
  // Column widths in characters; the arrow is one character but three bytes.
  auto width = [](const std::string& s) { return io::text_columns(s); };
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    widths[c] = width(header[c]);
    for (const auto& row : cells) widths[c] = std::max(widths[c], width(row[c]));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(widths[c] - width(row[c]), ' ');
      bool numeric = c >= 3;  // right-align the numbers
      line += numeric ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
      if (c + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  };
  os << (flags.file == "-" ? "<stdin>" : flags.file) << ": " << g.ops().size() << " ops"
     << (flags.train ? " (training step: forward, loss, backward, SGD update)" : "") << "\n\n";
  print_row(header);
  for (const auto& row : cells) print_row(row);
  os << "\n";
  os << "total: " << with_separators(total.cost.flops) << " FLOPs, "
     << with_separators(total.cost.bytes()) << " bytes (" << with_separators(total.cost.bytes_read)
     << " read, " << with_separators(total.cost.bytes_written) << " written), "
     << fixed(total.cost.intensity(), 2) << " FLOP/byte\n";
  os << "parameters: " << with_separators(total.parameters) << " ("
     << with_separators(total.parameter_bytes) << " bytes)\n";
  os << kFlopConvention << "\n";
}

nlohmann::json tensor_json(const Tensor& t) {
  return {{"name", t.name},
          {"shape", t.shape},
          {"dtype", dtype_name(t.dtype)},
          {"layout", layout_name(t.layout)},
          {"role", role_name(t.role)}};
}

nlohmann::json to_json(const Graph& g, const GraphFlags& flags) {
  const Totals total = totals(g);
  nlohmann::json ops = nlohmann::json::array();
  for (const Row& r : sorted_rows(g)) {
    const Op& op = g.op(r.id);
    nlohmann::json inputs = nlohmann::json::array();
    for (TensorId id : op.inputs) inputs.push_back(tensor_json(g.tensor(id)));
    nlohmann::json row = {{"name", op.name},
                          {"kind", op_kind_name(op.kind)},
                          {"inputs", inputs},
                          {"output", tensor_json(g.tensor(op.outputs[0]))},
                          {"flops", r.cost.flops},
                          {"bytes_read", r.cost.bytes_read},
                          {"bytes_written", r.cost.bytes_written},
                          {"bytes", r.cost.bytes()},
                          {"intensity", r.cost.intensity()},
                          {"flop_share", share(r.cost.flops, total.cost.flops) / 100.0}};
    if (op.kind == OpKind::MatMul) {
      row["trans_a"] = op.attrs.trans_a;
      row["trans_b"] = op.attrs.trans_b;
    }
    if (!op.origin.empty()) row["origin"] = op.origin;
    if (op.loc.line > 0) row["line"] = op.loc.line;
    ops.push_back(std::move(row));
  }
  nlohmann::json out = {{"file", flags.file},
                        {"training", flags.train},
                        {"ops", ops},
                        {"totals",
                         {{"ops", g.ops().size()},
                          {"flops", total.cost.flops},
                          {"bytes_read", total.cost.bytes_read},
                          {"bytes_written", total.cost.bytes_written},
                          {"bytes", total.cost.bytes()},
                          {"intensity", total.cost.intensity()},
                          {"parameters", total.parameters},
                          {"parameter_bytes", total.parameter_bytes}}},
                        {"flop_convention", kFlopConvention}};
  if (flags.train) {
    out["loss"] = flags.loss;
    out["learning_rate"] = flags.learning_rate;
  }
  return out;
}

int run_graph(const GraphFlags& flags) {
  try {
    Graph g = load(flags);
    if (flags.json) {
      std::cout << to_json(g, flags).dump(2) << "\n";
    } else {
      print_table(g, flags, std::cout);
    }
    return 0;
  } catch (const GraphError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

const CommandRegistrar kRegistrar{
    "graph", "Parse a model and list every op with shapes, FLOPs, bytes and intensity",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<GraphFlags>();
      sub.add_option("FILE", flags->file, pipeline::kModelSpecHelp)->required();
      sub.add_flag("--json", flags->json, "print JSON instead of a table");
      CLI::Option* train =
          sub.add_flag("--train", flags->train, "build the training graph (loss, backward, SGD)");
      sub.add_option("--loss", flags->loss, "loss for --train: mse or ce (cross-entropy)")
          ->check(CLI::IsMember({"mse", "ce"}))
          ->needs(train);
      sub.add_option("--lr", flags->learning_rate, "learning rate for --train's SGD update")
          ->check(CLI::PositiveNumber)
          ->needs(train);
      sub.callback([flags, &exit_code] { exit_code = run_graph(*flags); });
    }};

}  // namespace
}  // namespace tilescope::cli
