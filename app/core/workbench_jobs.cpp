// The workbench's jobs sized before they start: accesses, seconds at the measured rate and memory
// of a simulation, a CPU run and a Tiles walk, and the hold that asks the learner before a long
// one (workbench.h's [SECTION] Sizing).
#include "app/core/workbench.h"

#include "sim/io/format.h"
#include "sim/predict/work_size.h"
#include "sim/schedule/trace_size.h"

#include <cmath>
#include <cstdio>

namespace tilescope::core {

namespace {

// A job that walks `k`'s trace: its accesses and their formula, the seconds at `accesses_per_s`,
// the memory it holds, and the memory there is.
JobSize trace_job(const schedule::Kernel& k, double accesses_per_s, uint64_t bytes) {
  JobSize s;
  const schedule::TraceSize t = schedule::estimate_trace_size(k);
  s.accesses = t.accesses;
  s.formula = t.formula;
  s.seconds = t.accesses / accesses_per_s;
  s.bytes = bytes;
  s.budget = predict::memory_budget();
  return s;
}

}  // namespace

JobSize size_simulation(const schedule::Kernel& k, const predict::Machine& m) {
  // simulate_kernel classifies misses (3C) and keeps no reuse histogram.
  return trace_job(k, predict::typical_simulation_rate(true, false),
                   predict::simulation_bytes(k, m.hierarchy(), true, false));
}

JobSize size_cpu_run(const schedule::Kernel& k) {
  // The interpreter's walk dominates: the compiled kernel and its timing take far less. It holds
  // the buffers and the interpreter's copy.
  return trace_job(k, predict::kInterpreterRate, 2 * predict::kernel_buffer_bytes(k));
}

JobSize size_tiles_walk(const schedule::Kernel& k) {
  // The walk alone, counting into bins: about the rate of a plain simulation; bins and frames are
  // bounded (kTileBins, kMaxTileFrames).
  return trace_job(k, predict::kSimulationRatePlain, 64ull << 20);
}

namespace {

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f trillion", n / 1e12);
  else if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f billion", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f million", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string duration_text(double seconds) {
  char buf[48];
  if (seconds >= 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.0f days", seconds / 86400);
  else if (seconds >= 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.0f hours", seconds / 3600);
  else if (seconds >= 120)
    std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(seconds));
  return buf;
}

}  // namespace

std::optional<HeldJob> hold_for(const JobSize& s, const std::string& what, bool anyway) {
  HeldJob h;
  if (!s.fits()) {
    h.refused = true;
    h.message = what + " would need about " + io::format_bytes(double(s.bytes)) +
                " of memory, more than the " + io::format_bytes(double(s.budget.bytes)) +
                " available (" + s.budget.source +
                "). Make the model smaller: the same schedule shows the same pattern at a "
                "smaller size.";
    return h;
  }
  if (anyway || s.seconds <= kLongJobSeconds) return std::nullopt;
  h.message = what + " makes about " + count_text(s.accesses) + " accesses (" + s.formula +
              "): about " + duration_text(s.seconds) +
              " at this simulator's typical rate. Run it anyway, or make the model smaller "
              "(the same schedule shows the same pattern at a smaller size).";
  return h;
}

}  // namespace tilescope::core
