// The check language's functions as a table (check_functions.h's FunctionSpec): the checker
// evaluates a call by its row's function, the validator reads the argument kinds, the reference
// the group, example and help.
#include "sim/lesson/check_functions.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tilescope::lesson {

namespace detail {

using namespace kinds;

// A profiler trace (torch.profiler's Chrome trace) mapped onto the block's model: each line of the
// model text is a node; the time is GPU kernel time, or CPU operator time in a trace with no GPU
// kernels (check_trace.cpp).
std::vector<FunctionSpec> trace_rows() {
  return {
      {"trace_time", eval_trace, {kString, kOp}, 1, true, false, "traces",
       "trace_time(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "seconds a trace measured for the model line holding the op; without an op, the whole trace's (mapped or not)"},
      {"trace_share", eval_trace, {kString, kOp}, 2, true, false, "traces",
       "trace_share(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "that line's share of the trace's time, 0 to 1"},
      {"trace_predicted_share", eval_trace, {kString, kOp}, 2, true, true, "traces",
       "trace_predicted_share(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "that line's share of the model's roofline time on the machine, 0 to 1"},
      {"trace_launches", eval_trace, {kString, kOp}, 1, true, false, "traces",
       "trace_launches(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "kernels the framework launched for the line (operators, in a CPU trace); without an op, for the whole trace"},
      {"trace_kernel", eval_trace, {kString, kOp}, 2, true, false, "traces",
       "trace_kernel(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "the name of the line's longest kernel (its working operator's, in a CPU trace)"},
      {"trace_library", eval_trace, {kString, kOp}, 2, true, false, "traces",
       "trace_library(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", conv0, model=quiz)",
       "the library that kernel comes from (\"cuDNN\", \"cuBLAS\", \"PyTorch\"; \"\" when not recognised)"},
      {"trace_heaviest", eval_trace, {kString}, 1, true, false, "traces",
       "trace_heaviest(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", model=quiz)",
       "the first op of the line that took the most measured time"},
      {"trace_mapped", eval_trace, {kString}, 1, true, false, "traces",
       "trace_mapped(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", model=quiz)",
       "the share of the trace's time mapped to lines of the model, 0 to 1"},
      {"trace_gpu", eval_trace, {kString}, 1, false, false, "traces",
       "trace_gpu(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\")",
       "1 when the trace holds GPU kernels, 0 for a CPU-only recording"},
      {"trace_fusions", eval_trace, {kString}, 1, true, false, "traces",
       "trace_fusions(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", model=quiz)",
       "GEMMs and convolutions followed by element-wise kernels run separately (a bias, a BatchNorm, an activation)"},
      {"trace_extra_launches", eval_trace, {kString}, 1, true, false, "traces",
       "trace_extra_launches(\"assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json\", model=quiz)",
       "the separate launches after them (what fusing each into its GEMM's or convolution's epilogue removes)"},
  };
}

// The check language's functions, one row each: its evaluation (check_eval.cpp, curriculum.cpp,
// check_trace.cpp),
// the argument kinds the validator reads, and the group, example and help of the reference
// (check_function_reference, `tilescope-cli lesson functions`).
const std::vector<FunctionSpec>& functions() {
  static const std::vector<FunctionSpec> kFunctions = [] {
    std::vector<FunctionSpec> rows = {
      {"flops", eval_cost, {kOpOrSubject}, 1, true, false, "graph", "flops(matmul0)",
       "FLOPs of an op, of a model (the sum over its ops) or of a steps id"},
      {"bytes", eval_cost, {kOpOrSubject}, 1, true, false, "graph", "bytes(plan)",
       "bytes read and written: an op's own, a model's sum, or a steps id's minimum traffic "
       "(each kernel reads its inputs and writes its outputs once; a fused intermediate costs "
       "nothing)"},
      {"bytes_read", eval_cost, {kOpOrSubject}, 1, true, false, "graph", "bytes_read(add0)",
       "the read half of bytes(X)"},
      {"bytes_written", eval_cost, {kOpOrSubject}, 1, true, false, "graph", "bytes_written(add0)",
       "the written half of bytes(X)"},
      {"intensity", eval_cost, {kOpOrSubject}, 1, true, false, "graph", "intensity(matmul0)",
       "flops(X) / bytes(X), FLOP per byte"},
      {"heaviest", eval_heaviest, {kNumber}, 1, true, false, "graph", "heaviest(2)",
       "the names of the N ops with the most FLOPs, heaviest first (a list)"},
      {"kinds", eval_model_counts, {kSubject}, 0, true, false, "graph", "kinds(m)",
       "the op kinds of a model, in order"},
      {"ops", eval_model_counts, {kSubject}, 0, true, false, "graph", "ops(m)", "the number of ops of a model"},
      {"params", eval_model_counts, {kSubject}, 0, true, false, "graph", "params(m)",
       "the number of weight elements of a model (weights no op produces)"},
      {"kind", eval_op, {kOp}, 1, true, false, "graph", "kind(matmul0)", "an op's kind (\"MatMul\")"},
      {"share", eval_op, {kOp}, 1, true, false, "graph", "share(matmul0)",
       "an op's share of its model's FLOPs, 0 to 1"},
      {"numel", eval_tensor, {kTensor}, 1, true, false, "graph", "numel(W)", "a tensor's elements"},
      {"tensor_bytes", eval_tensor, {kTensor}, 1, true, false, "graph", "tensor_bytes(W)",
       "a tensor's bytes in its dtype"},
      {"shape", eval_tensor, {kTensor}, 1, true, false, "graph", "shape(W)", "a tensor's shape, a list"},
      {"kernels", eval_program, {kSubject}, 1, false, false, "schedule", "kernels(plan)",
       "the number of kernels of a steps id's program"},
      {"refused", eval_program, {kSubject}, 1, false, false, "schedule", "refused(bad)",
       "1 when a step of the steps block was refused (where the lesson expected it), else 0"},
      {"refusal", eval_program, {kSubject}, 1, false, false, "schedule", "refusal(bad)",
       "the refused step's explanation (an error when none was refused)"},
      {"applied", eval_program, {kSubject}, 1, false, false, "schedule", "applied(plan)",
       "the number of steps applied"},
      {"explanation", eval_program, {kSubject, kNumber}, 2, false, false, "schedule", "explanation(plan, 1)",
       "what step N (from 1) said when it was applied"},
      {"blocks", eval_launch, {kSubject, kString}, 1, false, false, "schedule", "blocks(plan, \"matmul0.sum\")",
       "blocks of the current kernel's launch, or of the kernel named"},
      {"threads", eval_launch, {kSubject}, 1, false, false, "schedule", "threads(plan)",
       "threads per block of the current kernel"},
      {"smem_bytes", eval_launch, {kSubject}, 1, false, false, "schedule", "smem_bytes(plan)",
       "shared memory per block of the current kernel, bytes"},
      {"conflicts", eval_launch, {kSubject, kString}, 2, false, false, "schedule",
       "conflicts(plan, \"x_shared\")",
       "the passes a warp's read of a shared buffer takes (1 = conflict-free or a broadcast)"},
      {"sectors", eval_sectors, {kSubject, kString}, 2, false, true, "warp", "sectors(plan, \"W\")",
       "32-byte sectors of warp 0's first load of a tensor (needs a GPU machine)"},
      {"dram_bytes", eval_dram, {kSubject}, 1, false, true, "simulated", "dram_bytes(plan)",
       "bytes main memory serves, reads and writes, simulated on the machine"},
      {"dram_reads", eval_dram, {kSubject}, 1, false, true, "simulated", "dram_reads(plan)",
       "the read bytes of dram_bytes"},
      {"dram_writes", eval_dram, {kSubject}, 1, false, true, "simulated", "dram_writes(plan)",
       "the written bytes of dram_bytes"},
      {"accesses", eval_level, {kSubject, kLevel, kTensorOfSubject}, 2, false, true, "simulated",
       "accesses(plan, L1, W)", "accesses a level serves (a third argument: of that tensor alone)"},
      {"hits", eval_level, {kSubject, kLevel, kTensorOfSubject}, 2, false, true, "simulated", "hits(plan, L2)",
       "hits at a level (of one tensor with a third argument)"},
      {"misses", eval_level, {kSubject, kLevel, kTensorOfSubject}, 2, false, true, "simulated",
       "misses(plan, L1)", "misses at a level (of one tensor with a third argument)"},
      {"miss_rate", eval_level, {kSubject, kLevel, kTensorOfSubject}, 2, false, true, "simulated",
       "miss_rate(plan, L1)", "misses / accesses at a level, 0 to 1"},
      {"peak", eval_peak, {kMachine, kString, kString}, 2, false, false, "machines",
       "peak(h200, \"fp32\", \"simt\")", "a machine's peak for a dtype (and unit), FLOP/s"},
      {"bandwidth", eval_bandwidth, {kMachine}, 1, false, false, "machines", "bandwidth(h200)",
       "a machine's main-memory bandwidth, bytes/s"},
      {"latency", eval_latency, {kMachine}, 1, false, false, "machines", "latency(h200)",
       "a machine's main-memory latency, seconds (one load with nothing else in flight)"},
      {"cache_bytes", eval_cache_bytes, {kMachine, kString}, 2, false, false, "machines",
       "cache_bytes(h200, \"L2\")", "the size of a machine's cache level, bytes"},
      {"scratchpad_bytes", eval_scratchpad, {kMachine}, 1, false, false, "machines", "scratchpad_bytes(h200)",
       "shared memory (scratchpad) per block, bytes"},
      {"recorded", eval_recorded, {kString, kString}, 2, false, false, "recorded",
       "recorded(\"assets/recorded/gpu-h200-2026-12-02.json\", "
       "\"suites/name=conv2d/results/name=implicit_gemm_fused/gflops\")",
       "a number from a recording, by a path of keys and name= selections"},
      {"abs", eval_arithmetic, {kNumber}, 1, false, false, "helpers", "abs(-2)", "|x|"},
      {"min", eval_arithmetic, {kNumber, kNumber}, 2, false, false, "helpers", "min(1, 2)", "the smaller"},
      {"max", eval_arithmetic, {kNumber, kNumber}, 2, false, false, "helpers", "max(1, 2)", "the larger"},
      {"len", eval_len, {kAny}, 1, false, false, "helpers", "len(shape(W))",
       "the items of a list, the bytes of a string"},
      {"contains", eval_contains, {kString, kString}, 2, false, false, "helpers",
       "contains(refusal(bad), \"reduction\")", "1 when the text holds the part, else 0"},
      // Curriculum functions (lessons 07 onward): curriculum.cpp.
      {"strides", eval_strides, {kSubject, kTensorOfSubject}, 2, false, false, "layout", "strides(plan, W)",
       "a tensor's strides in elements, as the program stores it"},
      {"waves", eval_grid, {kSubject, kMachine}, 2, false, false, "GPU grid", "waves(plan, h200)",
       "waves of one block per SM the current kernel's grid takes"},
      {"first_wave", eval_grid, {kSubject, kMachine}, 2, false, false, "GPU grid", "first_wave(plan, h200)",
       "[rows, columns] of output tiles the first wave covers"},
      {"cores", eval_grid, {kMachine}, 1, false, false, "GPU grid", "cores(h200)",
       "a machine's cores (SMs on a GPU)"},
      {"occupancy", eval_occupancy, {kSubject, kMachine}, 2, false, false, "GPU grid",
       "occupancy(plan, h200)",
       "theoretical occupancy of the current kernel's block, 0 to 1: warps one SM holds over its "
       "maximum (its threads and shared memory, 32 registers a thread)"},
      {"warps_per_sm", eval_occupancy, {kSubject, kMachine}, 2, false, false, "GPU grid",
       "warps_per_sm(plan, h200)",
       "warps resident on an SM that has work: the blocks one SM holds (occupancy) or the grid's "
       "share of blocks per SM, whichever is fewer, times the warps of a block"},
      {"dtype", eval_dtype, {kTensor}, 1, true, false, "dtypes", "dtype(W)", "a tensor's dtype (\"fp16\")"},
      {"dtype_bytes", eval_format, {kString}, 1, false, false, "dtypes", "dtype_bytes(\"fp16\")",
       "bytes per element"},
      {"dtype_max", eval_format, {kString}, 1, false, false, "dtypes", "dtype_max(\"bf16\")",
       "the largest finite value"},
      {"dtype_eps", eval_format, {kString}, 1, false, false, "dtypes", "dtype_eps(\"fp16\")",
       "the gap between 1 and the next value"},
      {"dtype_min_normal", eval_format, {kString}, 1, false, false, "dtypes", "dtype_min_normal(\"fp16\")",
       "the smallest normal value"},
      {"dtype_min_subnormal", eval_format, {kString}, 1, false, false, "dtypes",
       "dtype_min_subnormal(\"fp16\")", "the smallest subnormal value"},
      {"to_dtype", eval_stored, {kNumber, kString}, 2, false, false, "dtypes", "to_dtype(1e-8, \"fp16\")",
       "x as the format stores it (nearest, subnormals, saturating fp8)"},
      {"overflows", eval_stored, {kNumber, kString}, 2, false, false, "dtypes", "overflows(70000, \"fp16\")",
       "1 when x becomes infinity in the format"},
      {"quantize", eval_stored, {kNumber, kNumber, kString}, 3, false, false, "dtypes",
       "quantize(0.3, 0.01, \"int8\")", "x / scale stored (int8: rounded, -128..127) times scale"},
      {"clock", eval_clock, {kMachine}, 1, false, false, "machines", "clock(h200)", "a machine's clock, Hz"},
      {"predicted_time", eval_time, {kSubject}, 1, false, true, "time", "predicted_time(plan)",
       "the roofline over the simulated traffic, seconds (a GPU kernel's compute bound counts "
       "the SMs its blocks reach)"},
      {"bound", eval_time, {kSubject}, 1, false, true, "time", "bound(plan)",
       "the roofline's binding bound (\"compute\", \"L2\", \"DRAM\")"},
      {"fastest", eval_fastest, {kSubjectList}, 1, false, true, "time", "fastest([plan, plan_t])",
       "the id whose predicted time is least"},
      {"source", eval_source, {kSubject, kString}, 2, false, false, "code", "source(plan, \"cuda\")",
       "the current kernel's generated code: \"cuda\", \"cpp\" or \"pseudo\""},
      {"count", eval_count, {kString, kString}, 2, false, false, "code",
       "count(source(plan, \"cuda\"), \"__syncthreads\")", "occurrences of the part in the text"},
      {"depends", eval_dependencies, {kOp, kOp}, 2, true, false, "graph", "depends(relu0, matmul0)",
       "1 when op A reads, through any path, what op B writes"},
      {"critical_flops", eval_dependencies, {kSubject}, 0, true, false, "graph", "critical_flops(m)",
       "FLOPs on the heaviest dependency chain of a model"},
      {"passes", eval_passes, {kSubject}, 1, false, false, "compilers", "passes(plan)",
       "the compiler pass of each applied step, runs of one pass merged"},
    };
    for (FunctionSpec& f : trace_rows()) rows.push_back(std::move(f));
    return rows;
  }();
  return kFunctions;
}

const FunctionSpec* find_function(const std::string& name) {
  for (const FunctionSpec& f : functions())
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace detail

std::vector<CheckFunctionInfo> check_functions() {
  std::vector<CheckFunctionInfo> out;
  for (const detail::FunctionSpec& f : detail::functions())
    out.push_back({f.name, f.group, f.example, f.help, f.required, f.args.size(), f.model_kw,
                   f.machine_kw});
  return out;
}

std::string check_function_reference() {
  std::vector<std::string> groups;  // in the table's order
  for (const detail::FunctionSpec& f : detail::functions())
    if (std::find(groups.begin(), groups.end(), f.group) == groups.end()) groups.push_back(f.group);
  size_t width = 0;
  for (const detail::FunctionSpec& f : detail::functions()) width = std::max(width, std::string(f.example).size());
  width = std::min<size_t>(width, 34);
  std::string out =
      "The check language's functions (a check is EXPR OP EXPR [within TOL], OP one of == != < "
      "<= > >=):\n";
  for (const std::string& g : groups) {
    out += "\n" + g + "\n";
    for (const detail::FunctionSpec& f : detail::functions()) {
      if (f.group != g) continue;
      std::string ex = f.example;
      out += "  " + ex;
      out += ex.size() < width ? std::string(width - ex.size(), ' ') : "\n  " + std::string(width, ' ');
      out += "  " + std::string(f.help);
      if (f.model_kw || f.machine_kw)
        out += std::string(" [") + (f.model_kw ? "model=" : "") +
               (f.model_kw && f.machine_kw ? ", " : "") + (f.machine_kw ? "machine=" : "") + "]";
      out += "\n";
    }
  }
  return out;
}

}  // namespace tilescope::lesson
