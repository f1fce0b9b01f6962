// The central act of tilescope, in one place: this kernel (or program), on this machine — trace
// it through the machine's memory hierarchy, count the bytes every level serves, run the analytic
// model beside it (or say why it does not apply), and predict the time with its binding bound.
//
// The workbench, autotune, `tilescope-cli simulate` and the lesson checker all call simulate_kernel /
// run_program; nothing outside sim/ and tests builds a memory::Hierarchy. The chosen Machine is
// the single source of truth: the trace options (GPU mode, resident blocks, warp and sector size)
// and the schedule's legality target (target_for) are derived from it here, not restated by
// callers.
#pragma once

#include "sim/graph/graph.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/access_pattern.h"
#include "sim/predict/analytic.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"
#include "sim/predict/sampling.h"
#include "sim/schedule/kernel.h"
#include "sim/schedule/trace.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::predict {

// [SECTION] The machine as the schedule's target

// The capacities a schedule's legality checks use, from the machine: shared memory per block and
// per SM, registers per thread, threads per block, warp size, banks and SM count from a GPU
// machine; the L1 a CPU scratchpad tile must fit in and the SIMD width from a CPU machine. What the
// machine does not state keeps schedule::Target's default (an H200-class GPU, a recent x86 core),
// except shared memory, which a machine without a scratchpad does not have (0 B: staging in shared
// memory is refused there).
schedule::Target target_for(const Machine& m);

// Blocks in flight at once when a GPU trace interleaves them: one per SM (at least 1).
int64_t resident_blocks(const Machine& m);

// How the trace walker runs a kernel on this machine: GPU mode on GPU machines, with its resident
// blocks, warp size (from the scratchpad) and sector size (from the L1's sectors).
schedule::TraceOptions trace_options_for(const Machine& m);

// The FLOPs of a kernel: the sum of its ops' costs in the graph's cost table.
double kernel_flops(const schedule::Kernel& k, const graph::Graph& g);

// The machine's fp32 peak for the unit its kernels use (simt on GPUs, simd on CPUs), FLOP/s;
// 0 when the machine file gives none.
double fp32_peak(const Machine& m);

// A machine with peaks measured on this computer in place of what it states: the memory
// bandwidth, the fp32 SIMD peak and the dependent multiply-add latency (each only when > 0; a
// kernel generated for one thread is bounded by one core's peaks, not by every core's). The
// source of the measurement is recorded in the peak's note and in Machine::notes.
Machine with_measured_peaks(Machine m, double fp32_flops_per_s, double memory_bytes_per_s,
                            double dependent_fma_s, const std::string& source);

// [SECTION] One kernel

struct RunOptions {
  // Per-line tables for the 3C miss classes and reuse distances: slower, same counters.
  bool classify_misses = false;
  bool reuse_distance = false;
  // 1: everything on the calling thread; 2: the 3C split and reuse distances on a second thread
  // (HierarchyOptions::analysis_thread); 0: 2 when the computer has two cores or more.
  int threads = 0;
  // Dirty lines still cached at the end are written back (counted), so main-memory traffic
  // includes the kernel's outputs. Off only for raw traces whose end is not a kernel's end.
  bool write_back_all = true;
  // Sampled simulation (sampling.h; callers decide with sampled_by_default). A sampled run keeps
  // neither the 3C split nor reuse distances (they need every access). `sample_budget`: element
  // accesses the sampled walk makes, about.
  bool sample = false;
  double sample_budget = kSampleBudget;
  // The trace simulation, and the analytic model beside it (CPU loop nests only). A sweep that
  // wants a quick answer asks for the analytic model alone and simulates only where it cannot.
  bool simulate = true;
  bool analytic = true;
  // Optional hooks. `wrap` puts a sink in front of the simulation (progress, cancel): it gets the
  // pipeline's sink and returns one that forwards every access to it. `before_write_back` sees
  // the hierarchy after the trace, before the final write-back (snapshots of dirty lines).
  // `phase` names what the pipeline starts next ("analytic model").
  std::function<std::unique_ptr<memory::AccessSink>(memory::AccessSink& next)> wrap;
  std::function<void(const memory::Hierarchy&)> before_write_back;
  std::function<void(const std::string&)> phase;
  // Called on the simulating thread about every `watch_seconds` of the trace with the hierarchy
  // as it stands (counters so far), for a view that shows numbers as they stream. Not called in a
  // sampled run, whose counters become estimates only at the end.
  std::function<void(const memory::Hierarchy&)> watch;
  double watch_seconds = 0.25;
};

struct KernelRun {
  std::string machine;                    // Machine::name
  bool gpu = false;                       // traced in GPU mode
  schedule::TraceOptions trace;           // as used (acc_tensor named in tensor_names)
  std::vector<std::string> tensor_names;  // by graph tensor id, then the accumulator buffer
  schedule::TraceSummary summary;
  double flops = 0;
  // The simulation (when RunOptions::simulate): the hierarchy with its counters after the run,
  // the bytes every level served (strided share noted) and the predicted time on them.
  std::unique_ptr<memory::Hierarchy> hierarchy;
  LevelBytes bytes;
  Roofline roofline;
  std::vector<TensorPattern> patterns;  // line moves per tensor + 1 (AccessPatternSink::by_tensor)
  // A sampled run: how it sampled and how sure its numbers are (the counters are estimates).
  std::optional<SampleInfo> sampled;
  // The analytic model's prediction and its roofline, or why it does not cover this kernel.
  std::optional<AnalyticResult> analytic;
  std::optional<Roofline> analytic_roofline;
  std::string analytic_error;

  bool simulated() const { return hierarchy != nullptr; }
  TensorPattern pattern(int tensor) const;  // of graph tensor `tensor` (-1: untagged accesses)
  uint64_t dram_bytes() const;  // main memory, reads + writes, as simulated (0 when not)
  // The prediction to show: the simulated roofline when there is one, else the analytic one;
  // nullptr when neither ran.
  const Roofline* prediction() const;
};

KernelRun simulate_kernel(const schedule::Kernel& k, const graph::Graph& g, const Machine& m,
                     const RunOptions& options = {});

// [SECTION] A recorded trace

// An address trace from elsewhere (a Dinero din file) through the machine's hierarchy: `source`
// streams its accesses into the sink it is given and returns how many. Counters only: a raw trace
// has no kernel to model or FLOPs to bound.
struct TraceRun {
  std::string machine;
  std::unique_ptr<memory::Hierarchy> hierarchy;
  uint64_t accesses = 0;
};

TraceRun run_trace(const Machine& m, const std::function<uint64_t(memory::AccessSink&)>& source,
                   const RunOptions& options = {});

// [SECTION] A whole program

// Every kernel of a program in one hierarchy, in order, each graph tensor at one global address
// whichever kernel touches it (so a later kernel hits what an earlier one left in cache), scratch
// buffers after them. Counters are summed over the kernels.
struct ProgramRun {
  std::string machine;
  std::unique_ptr<memory::Hierarchy> hierarchy;
  double flops = 0;
  double core_share = 1.0;  // busy_core_share over the kernels (roofline.h)
  LevelBytes bytes;
};

ProgramRun run_program(const schedule::Program& p, const Machine& m,
                       const RunOptions& options = {});

}  // namespace tilescope::predict
