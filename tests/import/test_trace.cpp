// Profiler traces (sim/import/trace.h): a Kineto GPU trace written here event by event, with the
// time shares counted by hand; the CPU traces recorded with Debian's torch
// (assets/recorded/traces); the kernel-name explainer on names as cuBLAS, cuDNN and PyTorch write
// them.
#include "sim/import/trace.h"
#include "sim/lang/parser.h"
#include "sim/pipeline.h"
#include "sim/predict/machine.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using namespace tilescope;
using nlohmann::json;

// The seed's quiz CNN as model text, one line per node (lines 5-9).
constexpr const char* kQuizModel =
    "x: [1, 3, 224, 224]\n"
    "w: [16, 3, 3, 3] weight\n"
    "W: [10, 200704] weight\n"
    "b: [10] weight\n"
    "c = conv2d(x, w, padding=1)\n"
    "r = relu(c)\n"
    "p = max_pool2d(r, kernel_size=2, stride=2)\n"
    "f = flatten(p, 1)\n"
    "y = f @ W.T + b\n";

json cpu_op(const std::string& name, double ts, double dur, json dims = json::array()) {
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1},
          {"tid", 7},  {"ts", ts},        {"dur", dur},   {"args", {{"Input Dims", dims}}}};
}
json launch(double ts, int correlation) {
  return {{"ph", "X"},
          {"cat", "cuda_runtime"},
          {"name", "cudaLaunchKernel"},
          {"pid", 1},
          {"tid", 7},
          {"ts", ts},
          {"dur", 2},
          {"args", {{"correlation", correlation}}}};
}
json kernel(const std::string& name, double ts, double dur, int correlation) {
  return {{"ph", "X"},
          {"cat", "kernel"},
          {"name", name},
          {"pid", 0},
          {"tid", 7},
          {"ts", ts},
          {"dur", dur},
          {"args", {{"correlation", correlation}, {"grid", {56, 1, 1}}, {"block", {128, 1, 1}}}}};
}

// A forward pass of the quiz CNN on a GPU as Kineto writes it: conv (cuDNN, then a separate
// ReLU kernel), pooling, a flatten with no kernel, Linear as cuBLAS GEMV plus a bias kernel; and
// one kernel that no operator launched (a memset, say).
std::string quiz_gpu_trace() {
  json events = json::array();
  events.push_back(cpu_op("aten::conv2d", 100, 50, {{1, 3, 224, 224}, {16, 3, 3, 3}, {}}));
  events.push_back(cpu_op("aten::convolution", 101, 48, {{1, 3, 224, 224}, {16, 3, 3, 3}}));
  events.push_back(launch(110, 1));
  events.push_back(cpu_op("aten::relu", 160, 10, {{1, 16, 224, 224}}));
  events.push_back(launch(162, 2));
  events.push_back(cpu_op("aten::max_pool2d", 180, 10, {{1, 16, 224, 224}}));
  events.push_back(launch(182, 3));
  events.push_back(cpu_op("aten::flatten", 200, 5, {{1, 16, 112, 112}}));
  events.push_back(cpu_op("aten::linear", 210, 20, {{1, 200704}, {10, 200704}, {10}}));
  events.push_back(launch(212, 4));
  events.push_back(launch(220, 5));
  events.push_back(kernel(
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x64x32_stage4",
      300, 40, 1));
  events.push_back(
      kernel("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
             "namespace)::launch_clamp_scalar(at::TensorIteratorBase&)>",
             341, 10, 2));
  events.push_back(
      kernel("void at::native::(anonymous namespace)::max_pool_forward_nchw<float>", 352, 20, 3));
  events.push_back(
      kernel("void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4>", 373, 5, 4));
  events.push_back(
      kernel("void at::native::vectorized_elementwise_kernel<4, "
             "at::native::CUDAFunctor_add<float>>",
             379, 2, 5));
  events.push_back(kernel("void at::native::memset_kernel", 400, 3, 99));
  return json{{"traceEvents", events}}.dump();
}

TEST_CASE("trace: a Kineto GPU trace's kernels belong to the operators that launched them") {
  const import::ProfilerTrace t = import::read_profiler_trace(quiz_gpu_trace(), "quiz.json");
  CHECK(t.format == "kineto");
  CHECK(t.gpu);
  REQUIRE(t.ops.size() == 5);  // aten::convolution is conv2d's callee, not an operator of its own
  CHECK(t.ops[0].callees == std::vector<std::string>{"aten::convolution"});
  CHECK(t.ops[0].inputs.at(0) == graph::Shape{1, 3, 224, 224});
  REQUIRE(t.kernels.size() == 6);
  CHECK(t.kernels[0].op == 0);
  CHECK(t.kernels[0].grid == std::array<int64_t, 3>{56, 1, 1});
  CHECK(t.ops[4].kernels == std::vector<int>{3, 4});
  CHECK(t.kernels[5].op == -1);  // correlation 99: no launch in the trace
  CHECK(t.notes == std::vector<std::string>{
                       "1 kernel (3 µs) launched by no operator in the trace: not mapped"});

  const graph::Graph g = lang::parse_model(kQuizModel);
  const import::TraceMapping m = import::map_trace(g, kQuizModel, t, predict::load_machine("h200"));
  CHECK(m.time_basis == "GPU kernel time");
  // Hand count: kernels 40 + 10 + 20 + 5 + 2 + 3 = 80 µs; all but the memset mapped.
  CHECK(m.total_us == doctest::Approx(80));
  CHECK(m.mapped_us == doctest::Approx(77));
  CHECK(m.mapped_time_share == doctest::Approx(77.0 / 80.0));
  REQUIRE(m.nodes.size() == 5);
  CHECK(m.nodes[0].tensor == "c");
  CHECK(m.nodes[0].measured_us == doctest::Approx(40));
  CHECK(m.nodes[4].tensor == "y");  // the GEMV and its bias kernel: both Linear's
  CHECK(m.nodes[4].measured_us == doctest::Approx(7));
  CHECK(m.nodes[3].trace_ops == std::vector<int>{3});  // flatten: an operator, no kernel
  CHECK(m.nodes[3].measured_us == 0);
  // ReLU ran as its own kernel after the convolution: one round trip of c (16·224·224 floats).
  REQUIRE(m.fusions.size() == 1);
  CHECK(m.fusions[0].after == "c");
  CHECK(m.fusions[0].chain == std::vector<std::string>{"r"});
  CHECK(m.fusions[0].launches == 1);
  CHECK(m.fusions[0].round_trip_bytes == doctest::Approx(2.0 * 16 * 224 * 224 * 4));
  // Predicted shares add up to one; the convolution dominates them as it dominates the kernels.
  double predicted = 0;
  for (const auto& n : m.nodes) predicted += n.predicted_share;
  CHECK(predicted == doctest::Approx(1.0));
  CHECK(m.nodes[0].predicted_share > 0.5);
}

TEST_CASE("trace: an operator matches a node by its input shape, not only its kind") {
  // Two ReLUs of different sizes; the trace runs the second one's shape first.
  const std::string model = "x: [4, 8]\nz: [2, 2]\na = relu(x)\nb = relu(z)\n";
  json events =
      json::array({cpu_op("aten::relu", 0, 5, {{2, 2}}), cpu_op("aten::relu", 10, 7, {{4, 8}})});
  const import::ProfilerTrace t = import::read_profiler_trace(events.dump(), "t.json");
  CHECK(t.format == "legacy");
  const graph::Graph g = lang::parse_model(model);
  const import::TraceMapping m = import::map_trace(g, model, t, predict::load_machine("host"));
  CHECK(m.nodes[0].measured_us == doctest::Approx(7));
  CHECK(m.nodes[1].measured_us == doctest::Approx(5));
}

TEST_CASE("trace: the CPU traces recorded with Debian's torch map onto the imported models") {
  // Each node's operator, and 100 % of the operator time mapped (a CPU trace: its operators).
  const std::string dir = std::string(TILESCOPE_SOURCE_DIR) + "/assets/";
  const auto model = pipeline::read_model_file(dir + "models/quiz_cnn.onnx");
  const auto g = pipeline::parse(model);
  const import::ProfilerTrace t = import::read_profiler_trace_file(
      dir + "recorded/traces/quiz_cnn-cpu-xeon2-2026-12-05.trace.json");
  CHECK_FALSE(t.gpu);
  REQUIRE(t.notes.size() == 1);
  CHECK(t.notes[0].find("no GPU kernels in the trace") == 0);
  const import::TraceMapping m =
      import::map_trace(*g, model.text, t, predict::load_machine("host"));
  CHECK(m.mapped_time_share == doctest::Approx(1.0));
  REQUIRE(m.nodes.size() == 5);
  CHECK(t.ops[size_t(m.nodes[0].trace_ops.at(0))].name == "aten::conv2d");
  CHECK(t.ops[size_t(m.nodes[0].trace_ops.at(0))].worker() == "aten::mkldnn_convolution");
  CHECK(t.ops[size_t(m.nodes[4].trace_ops.at(0))].worker() == "aten::addmm");
  REQUIRE(m.fusions.size() == 1);
  CHECK(m.fusions[0].text.find("1 extra round trip of 6.12 MiB") != std::string::npos);

  const auto r = test::run_cli("import-trace " + dir +
                               "recorded/traces/transformer_block-cpu-xeon2-2026-12-05.trace.json "
                               "--model " +
                               dir + "models/transformer_block.onnx --json");
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  // Eager PyTorch transposes k twice where the exported graph transposes it once: one
  // transpose (4 µs of 54.8 ms) and a view of no time are left unmapped.
  CHECK(j["mapped_time_share"].get<double>() > 0.9999);
  CHECK(j["unmapped_ops"] == json::array({"aten::as_strided", "aten::transpose"}));
  CHECK(j["fusions"].size() == 4);  // the attention scale, the residual, GELU, the residual
}

TEST_CASE("trace: kernel names explained") {
  using import::explain_kernel;
  CHECK(
      explain_kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1"
                     "_execute_segment_k_off_kernel__5x_cublas")
          .what == "matrix product (GEMM), tiles 128 × 128 × 32");
  CHECK(explain_kernel("ampere_sgemm_128x64_tn").library == "cuBLAS");
  CHECK(explain_kernel("ampere_sgemm_128x64_tn").what == "matrix product (GEMM), tiles 128 × 64");
  CHECK(explain_kernel("void gemv2T_kernel_val<int, int, float>").what ==
        "matrix-vector product (GEMV)");
  CHECK(explain_kernel("void cudnn::engines_precompiled::nchwToNhwcKernel").library == "cuDNN");
  CHECK(explain_kernel("sm80_xmma_fprop_implicit_gemm_indexed_f32f32_tf32f32_f32_nhwckrsc_nchw_"
                       "tilesize64x32x64_stage5")
            .what == "convolution as an implicit GEMM, tiles 64 × 32 × 64");
  CHECK(explain_kernel(
            "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>")
            .what == "element-wise: GELU");
  CHECK(explain_kernel("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>")
            .what == "softmax (a row reduction)");
  CHECK(explain_kernel("my_own_kernel").library.empty());
}

TEST_CASE("trace: what is not a profiler trace says so") {
  auto error = [](const std::string& text) {
    try {
      import::read_profiler_trace(text, "t.json");
    } catch (const graph::GraphError& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  CHECK(error("{").find("t.json: error: not a profiler trace: the JSON does not parse") == 0);
  CHECK(error("{\"a\": 1}").find("expected a list of events or {\"traceEvents\"") !=
        std::string::npos);
  CHECK(error("{\"traceEvents\": []}").find("no framework operators") != std::string::npos);
  // Found by fuzz_trace: a number past int64 in the JSON, fields of other types, a negative
  // duration: messages or skipped events, never an escaped exception.
  CHECK(error("[-65e995e9]").find("not a profiler trace: the JSON does not parse") !=
        std::string::npos);
  CHECK(error("[{\"ph\": 1, \"name\": 2, \"ts\": 0}]").find("no framework operators") !=
        std::string::npos);
  CHECK(error("[{\"ph\": \"X\", \"name\": \"aten::relu\", \"ts\": 0, \"dur\": -5}]")
            .find("no framework operators") != std::string::npos);
  const auto r = test::run_cli("import-trace /nonexistent.json --model default");
  CHECK(r.code == 1);
  CHECK(r.out.find("/nonexistent.json") != std::string::npos);
}

}  // namespace
