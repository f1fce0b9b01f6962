// The check language's functions as one table (check_functions.cpp): each row's name, the
// function that evaluates it, argument kinds, group, example and help. The checker validates calls
// against it and evaluates a call by its row's function; the reference a lesson writer reads
// (`tilescope-cli lesson functions`) is generated from it.
#pragma once

#include "sim/lesson/value.h"

#include <string>
#include <vector>

namespace tilescope::lesson {

// A function of the check language, as its table row describes it.
struct CheckFunctionInfo {
  std::string name, group, example, help;
  size_t min_args = 0, max_args = 0;  // positional arguments
  bool model_kw = false, machine_kw = false;
};
std::vector<CheckFunctionInfo> check_functions();
// The reference of the check language, generated from the table: each group's functions with an
// example, what it returns and the keywords it takes.
std::string check_function_reference();

namespace detail {

namespace kinds {

// What a function's positional argument must be (checked when the lesson loads).
enum ArgKind {
  kNumber,
  kString,
  kSubject,
  kOpOrSubject,
  kOp,
  kTensor,
  kMachine,
  kLevel,
  kAny,
  kSubjectList,      // [a, b, c]: model or steps ids (curriculum functions)
  kTensorOfSubject,  // a tensor of the model the previous argument (a subject) schedules
};

}  // namespace kinds

// One call being evaluated (checker_impl.h), and a row's evaluation: the call's value, or
// EvalError (the check fails with its text).
struct CheckCall;
using CheckEval = Value (*)(CheckCall&);

// The evaluations, one per family of rows that share their reading. check_eval.cpp: graph costs,
// schedules, simulated traffic, machines, recordings, helpers.
Value eval_cost(CheckCall&);          // flops, bytes, bytes_read, bytes_written, intensity
Value eval_heaviest(CheckCall&);      // heaviest
Value eval_model_counts(CheckCall&);  // kinds, ops, params
Value eval_op(CheckCall&);            // kind, share
Value eval_tensor(CheckCall&);        // numel, tensor_bytes, shape
Value eval_program(CheckCall&);       // kernels, refused, refusal, applied, explanation
Value eval_launch(CheckCall&);        // blocks, threads, smem_bytes, conflicts
Value eval_sectors(CheckCall&);       // sectors
Value eval_dram(CheckCall&);          // dram_bytes, dram_reads, dram_writes
Value eval_level(CheckCall&);         // accesses, hits, misses, miss_rate
Value eval_peak(CheckCall&);          // peak
Value eval_bandwidth(CheckCall&);     // bandwidth
Value eval_latency(CheckCall&);       // latency
Value eval_cache_bytes(CheckCall&);   // cache_bytes
Value eval_scratchpad(CheckCall&);    // scratchpad_bytes
Value eval_recorded(CheckCall&);      // recorded
Value eval_arithmetic(CheckCall&);    // abs, min, max
Value eval_len(CheckCall&);           // len
Value eval_contains(CheckCall&);      // contains
// curriculum.cpp: the functions of lessons 07 onward.
Value eval_count(CheckCall&);         // count
Value eval_strides(CheckCall&);       // strides
Value eval_grid(CheckCall&);          // waves, first_wave, cores
Value eval_occupancy(CheckCall&);     // occupancy, warps_per_sm
Value eval_clock(CheckCall&);         // clock
Value eval_dtype(CheckCall&);         // dtype
Value eval_stored(CheckCall&);        // to_dtype, quantize, overflows
Value eval_format(CheckCall&);        // dtype_bytes, dtype_max, dtype_eps, dtype_min_*
Value eval_time(CheckCall&);          // predicted_time, bound
Value eval_fastest(CheckCall&);       // fastest
Value eval_source(CheckCall&);        // source
Value eval_dependencies(CheckCall&);  // depends, critical_flops
Value eval_passes(CheckCall&);        // passes
// check_trace.cpp: a profiler trace mapped onto the model.
Value eval_trace(CheckCall&);  // trace_time, trace_share, trace_predicted_share, trace_launches,
                               // trace_kernel, trace_library, trace_heaviest, trace_mapped,
                               // trace_gpu, trace_fusions, trace_extra_launches

// A row of the check language's table (check_functions.cpp).
struct FunctionSpec {
  const char* name;
  CheckEval eval;         // its value
  std::vector<int> args;  // kinds of positional arguments
  size_t required;        // how many of them must be given
  bool model_kw;          // accepts model=
  bool machine_kw;        // accepts machine=
  const char* group;      // the reference's heading: "graph", "schedule", ...
  const char* example;    // a call as a lesson writes it
  const char* help;       // one line: what it returns
};

// The table, and its row for `name` (nullptr when there is none).
const std::vector<FunctionSpec>& functions();
const FunctionSpec* find_function(const std::string& name);

}  // namespace detail
}  // namespace tilescope::lesson
