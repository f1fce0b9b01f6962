// The CPU timing harness: warm-up, steady clock, median of repeats, input rotation, verification
// helpers (poisoned outputs, relative error) and measured machine peaks.
//
// Lifecycle of one measurement: poison the output, run once, compare with the reference
// (relative_error); only a verified version is then timed with time_runs().
#pragma once

#include "kernels/bench_types.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tilescope::kernels {

// repeats, min_repeats and max_seconds are the bench's RepeatRule (bench_types.h), which the GPU
// harness follows too; the median and minimum come from summarise_samples().
struct TimingOptions {
  int warmup = 1;            // untimed runs first: page faults, cold caches, lazy allocation
  int repeats = 10;          // timed runs wanted...
  int min_repeats = 3;       // ...but at least this many even when slow...
  double max_seconds = 4.0;  // ...and no more once this much time was spent timing
  int rotations = 1;         // call i uses input/output set i % rotations (DRAM-bound suites)
};

// Times run(rotation) with std::chrono::steady_clock, one call per sample.
Timing time_runs(const std::function<void(int rotation)>& run, const TimingOptions& options);

// Times several runs round-robin (one call of each per round), so load from other processes on a
// shared machine falls on all of them alike and their ratios stay meaningful. Options apply per
// run; the budget max_seconds is per run too.
std::vector<Timing> time_runs_interleaved(
    const std::vector<std::function<void(int rotation)>>& runs, const TimingOptions& options);

// Fills with quiet NaN so a position a kernel forgets to write shows up in relative_error.
void poison(float* data, std::size_t count);

// Deterministic pseudo-random values in [-1, 1) (a fixed LCG: same data on every machine).
void fill_uniform(float* data, std::size_t count, unsigned seed);

// Single-thread peaks, measured: an FMA loop with independent vector accumulators (FLOP/s) and a
// copy of two arrays larger than the last-level cache (bytes read + written per second).
struct Peaks {
  double gflops_fp32 = 0.0;
  double gbps = 0.0;
  // One fp32 multiply-add that must wait for the previous one (a serial sum, `acc += a * b` with a
  // single accumulator): its latency, which bounds a loop whose innermost loop is the reduction.
  double dependent_fma_ns = 0.0;
  std::string source;
};
Peaks measure_peaks(bool quick);

// What the machine is, for the report.
struct HostInfo {
  std::string cpu;            // /proc/cpuinfo "model name"
  int cores = 1;              // hardware threads visible to this process
  std::string caches;         // "L1d 48K, L2 2048K, L3 266240K" from sysfs
  std::size_t llc_bytes = 0;  // size of the last-level cache, 0 if unknown
  std::string vector_isa;     // the widest vector ISA the kernels were compiled for
};
HostInfo host_info();

// "g++ 12.2.0" / "clang++ 14.0.6": the compiler that built the kernels, and its flags.
std::string kernel_compiler();
std::string kernel_flags();

}  // namespace tilescope::kernels
