// A forward pass of the seed's quiz CNN as a PyTorch profiler on a GPU records it (Kineto's Chrome
// trace, written here event by event), and the model text it maps onto: shared by the import
// room's trace tests and the lesson room's trace functions, which count its times by hand.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tilescope::test {

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

inline json cpu_op(const std::string& name, double ts, double dur, json dims = json::array()) {
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1},
          {"tid", 7},  {"ts", ts},        {"dur", dur},   {"args", {{"Input Dims", dims}}}};
}
inline json launch(double ts, int correlation) {
  return {{"ph", "X"},
          {"cat", "cuda_runtime"},
          {"name", "cudaLaunchKernel"},
          {"pid", 1},
          {"tid", 7},
          {"ts", ts},
          {"dur", 2},
          {"args", {{"correlation", correlation}}}};
}
inline json kernel(const std::string& name, double ts, double dur, int correlation) {
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
inline std::string quiz_gpu_trace() {
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

}  // namespace tilescope::test
