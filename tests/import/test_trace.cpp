// Profiler traces (sim/import/trace.h): a Kineto GPU trace written here event by event, with the
// time shares counted by hand; the CPU traces recorded with Debian's torch
// (assets/recorded/traces); the kernel-name explainer on names as cuBLAS, cuDNN and PyTorch write
// them.
#include "sim/import/trace.h"
#include "sim/lang/parser.h"
#include "sim/pipeline.h"
#include "sim/predict/machine.h"
#include "tests/support/quiz_trace.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

using namespace tilescope;
using nlohmann::json;
using test::cpu_op;
using test::kQuizModel;
using test::quiz_gpu_trace;

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
  // ReLU ran as its own kernel after the convolution: one round trip of c (16·224·224 floats);
  // and the Linear's bias as its own kernel after the GEMV: one round trip of y (10 floats).
  REQUIRE(m.fusions.size() == 2);
  CHECK(m.fusions[0].after == "c");
  CHECK(m.fusions[0].chain == std::vector<std::string>{"r"});
  CHECK(m.fusions[0].steps == std::vector<std::string>{"ReLU"});
  CHECK(m.fusions[0].launches == 1);
  CHECK(m.fusions[0].round_trip_bytes == doctest::Approx(2.0 * 16 * 224 * 224 * 4));
  CHECK(m.fusions[1].after == "y");
  CHECK(m.fusions[1].chain.empty());
  CHECK(m.fusions[1].steps == std::vector<std::string>{"bias"});
  CHECK(m.fusions[1].round_trip_bytes == doctest::Approx(2.0 * 10 * 4));
  // Predicted shares add up to one; the convolution dominates them as it dominates the kernels.
  double predicted = 0;
  for (const auto& n : m.nodes) predicted += n.predicted_share;
  CHECK(predicted == doctest::Approx(1.0));
  CHECK(m.nodes[0].predicted_share > 0.5);
}

TEST_CASE("trace: a BatchNorm the exporter folded into the convolution belongs to its node") {
  // Eval-mode ONNX has conv → ReLU (the BatchNorm folded into the conv's weights and bias);
  // eager PyTorch runs conv, batch_norm, relu: three kernels of 30, 6 and 4 µs.
  const std::string model =
      "x: [1, 8, 16, 16]\nw: [8, 8, 3, 3] weight\n"
      "c = conv2d(x, w, padding=1)\nr = relu(c)\n";
  json events = json::array(
      {test::cpu_op("aten::conv2d", 0, 10, {{1, 8, 16, 16}, {8, 8, 3, 3}}), test::launch(2, 1),
       test::cpu_op("aten::batch_norm", 20, 10, {{1, 8, 16, 16}}), test::launch(22, 2),
       test::cpu_op("aten::relu", 40, 10, {{1, 8, 16, 16}}), test::launch(42, 3),
       test::kernel("sm90_xmma_fprop_implicit_gemm_f32f32", 100, 30, 1),
       test::kernel("void cudnn::bn_fw_inf_1C11_kernel_NCHW<float>", 131, 6, 2),
       test::kernel("void at::native::vectorized_elementwise_kernel<4, "
                    "at::native::launch_clamp_scalar>",
                    138, 4, 3)});
  const import::ProfilerTrace t =
      import::read_profiler_trace(json{{"traceEvents", events}}.dump(), "bn.json");
  const graph::Graph g = lang::parse_model(model);
  const import::TraceMapping m = import::map_trace(g, model, t, predict::load_machine("h200"));
  CHECK(m.unmapped_ops.empty());
  CHECK(m.mapped_time_share == doctest::Approx(1.0));
  REQUIRE(m.nodes.size() == 2);
  CHECK(m.nodes[0].trace_ops == std::vector<int>{0, 1});
  CHECK(m.nodes[0].folded_ops == std::vector<int>{1});
  CHECK(m.nodes[0].measured_us == doctest::Approx(36));
  // BatchNorm and ReLU: two separate kernels after the conv, two round trips of c (8·16·16 floats).
  REQUIRE(m.fusions.size() == 1);
  CHECK(m.fusions[0].steps == std::vector<std::string>{"BatchNorm", "ReLU"});
  CHECK(m.fusions[0].launches == 2);
  CHECK(m.fusions[0].round_trip_bytes == doctest::Approx(2 * 2.0 * 8 * 16 * 16 * 4));
  CHECK(m.fusions[0].text.find("BatchNorm + ReLU after 'c' ran separately: 2 kernels") == 0);

  // A batch_norm that follows no convolution stays unmapped, and is listed.
  json lone = json::array({test::cpu_op("aten::relu", 0, 10, {{1, 8, 16, 16}}),
                           test::cpu_op("aten::batch_norm", 20, 10, {{1, 8, 16, 16}})});
  const import::TraceMapping m2 =
      import::map_trace(g, model, import::read_profiler_trace(lone.dump(), "lone.json"),
                        predict::load_machine("host"));
  CHECK(m2.unmapped_ops == std::vector<int>{1});
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

TEST_CASE("trace: every H200 trace maps >= 95 % of its GPU kernel time onto the imported model") {
  // assets/recorded/traces/NAME-h200-{fp32,fp16}-2026-12-06.trace.json: torch 2.11 on an H200,
  // eval forward passes of assets/models/NAME (scripts/onnx/make_models.py --traces). Their kernel
  // counts and summed durations are recorded beside the model in NAME.pytorch.json, written by
  // the script from the trace with its own reader: the two readers agree.
  const std::string dir = std::string(TILESCOPE_SOURCE_DIR) + "/assets/";
  for (const char* name :
       {"quiz_cnn", "resnet_blocks", "depthwise_separable", "transformer_block"}) {
    const auto model = pipeline::read_model_file(dir + "models/" + name + ".onnx");
    const auto g = pipeline::parse(model);
    std::ifstream facts_file(dir + "models/" + name + ".pytorch.json");
    const json facts = json::parse(facts_file);
    REQUIRE(facts["traces"]["device_name"] == "NVIDIA H200");
    for (const char* dtype : {"fp32", "fp16"}) {
      CAPTURE(name);
      CAPTURE(dtype);
      const import::ProfilerTrace t = import::read_profiler_trace_file(
          dir + "recorded/traces/" + name + "-h200-" + dtype + "-2026-12-06.trace.json");
      CHECK(t.gpu);
      const json& run = facts["traces"]["runs"][dtype];
      CHECK(t.kernels.size() == run["kernels"].get<size_t>());
      const import::TraceMapping m =
          import::map_trace(*g, model.text, t, predict::load_machine("h200"));
      CHECK(m.total_us == doctest::Approx(run["kernel_time_us"].get<double>()).epsilon(1e-6));
      CHECK(m.mapped_time_share >= 0.95);
      // What is not mapped is listed, and holds no kernel time.
      double unmapped_us = 0;
      for (int ti : m.unmapped_ops)
        for (int k : t.ops[size_t(ti)].kernels) unmapped_us += t.kernels[size_t(k)].dur_us;
      CHECK(unmapped_us == doctest::Approx(m.total_us - m.mapped_us));
    }
  }
}

TEST_CASE("trace: the quiz CNN on the H200: cuDNN, its bias kernel, ReLU, pooling, cuBLAS GEMV") {
  const std::string dir = std::string(TILESCOPE_SOURCE_DIR) + "/assets/";
  const auto model = pipeline::read_model_file(dir + "models/quiz_cnn.onnx");
  const auto g = pipeline::parse(model);
  const import::ProfilerTrace t = import::read_profiler_trace_file(
      dir + "recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json");
  const import::TraceMapping m =
      import::map_trace(*g, model.text, t, predict::load_machine("h200"));
  REQUIRE(m.nodes.size() == 5);
  auto libraries = [&](const import::NodeTime& n) {
    std::vector<std::string> out;
    for (int ti : n.trace_ops)
      for (int k : t.ops[size_t(ti)].kernels)
        out.push_back(import::explain_kernel(t.kernels[size_t(k)].name).library);
    return out;
  };
  CHECK(libraries(m.nodes[0]) == std::vector<std::string>{"cuDNN", "PyTorch"});  // conv, then bias
  CHECK(libraries(m.nodes[1]) == std::vector<std::string>{"PyTorch"});           // ReLU
  CHECK(libraries(m.nodes[2]) == std::vector<std::string>{"PyTorch"});           // max pooling
  CHECK(libraries(m.nodes[3]).empty());                                          // flatten: a view
  CHECK(libraries(m.nodes[4]) == std::vector<std::string>{"cuBLAS", "cuBLAS"});  // GEMV, 2 kernels
  REQUIRE(m.fusions.size() == 1);
  CHECK(m.fusions[0].steps == std::vector<std::string>{"bias", "ReLU"});
  CHECK(m.fusions[0].round_trip_bytes == doctest::Approx(2 * 2.0 * 16 * 224 * 224 * 4));
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
