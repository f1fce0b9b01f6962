// The time model (time_model.h): one term per unit a kernel keeps busy, the largest is the time.
#include "sim/predict/time_model.h"

#include "sim/io/format.h"
#include "sim/predict/parallelism.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilescope::predict {

namespace {

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

// 2.15 G, 402 M, 12.5 k: the counts in a term's explanation.
std::string count(double n) {
  if (n >= 1e9) return fmt("%.3g G", n / 1e9);
  if (n >= 1e6) return fmt("%.3g M", n / 1e6);
  if (n >= 1e3) return fmt("%.3g k", n / 1e3);
  return fmt("%.3g", n);
}

std::string ghz(double hz) {
  return fmt("%.3g GHz", hz / 1e9);
}

std::string duration(double s) {
  if (s >= 1e-3) return fmt("%.3g ms", s * 1e3);
  return fmt("%.3g µs", s * 1e6);
}

}  // namespace

TimePrediction predict_time(const Machine& m, const KernelWork& w) {
  TimePrediction p;
  if (m.kind != "gpu" || m.sm.warps <= 0) {
    p.error = "machine " + m.name + " states no per-SM limits (warps_per_sm, …): no GPU time model";
    return p;
  }
  p.occupancy = occupancy(m, w.resources);
  if (!p.occupancy.error.empty()) {
    p.error = w.name + ": " + p.occupancy.error;
    return p;
  }
  if (w.blocks <= 0) {
    p.error = w.name + ": a grid of no blocks";
    return p;
  }
  p.waves = waves(m, p.occupancy, w.blocks);
  p.clock_hz = m.clock_hz;
  const double sms = double(m.cores);
  const int64_t busy_sms = std::min<int64_t>(m.cores, w.blocks);
  // The busiest SM runs ceil(blocks / SMs) blocks where the mean is blocks / SMs.
  p.tail_factor = std::ceil(double(w.blocks) / sms) / (double(w.blocks) / sms);
  const double sm_cycles = sms * p.clock_hz / p.tail_factor;  // SM-cycles per second, all SMs
  const std::string clock = ghz(p.clock_hz);
  const std::string tail =
      p.tail_factor > 1.0005 ? fmt(", × %.3f for the tail", p.tail_factor) : std::string();

  const double instructions = w.fp32_fmas / 32 + w.memory_instructions;
  if (instructions > 0) {
    const double per_cycle = double(std::max<int64_t>(m.sm.sub_partitions, 1));
    p.terms.push_back({"issue", instructions / (sm_cycles * per_cycle),
                       count(instructions) + " warp instructions (" + count(w.fp32_fmas / 32) +
                           " FFMA + " + count(w.memory_instructions) + " memory) / (" +
                           std::to_string(m.cores) + " SMs × " + fmt("%.0f", per_cycle) +
                           " a cycle × " + clock + ")" + tail});
  }
  if (w.tensor_flops > 0) {
    const double peak = m.peak(w.tensor_dtype, "tensor");
    if (peak > 0)
      p.terms.push_back({"tensor", w.tensor_flops / peak * p.tail_factor,
                         count(w.tensor_flops) + "FLOP / " + fmt("%.4g", peak / 1e12) +
                             " TFLOP/s " + w.tensor_dtype + " tensor peak" + tail});
  }
  if (w.data_stage_wavefronts > 0) {
    p.terms.push_back({"data stage", w.data_stage_wavefronts / sm_cycles,
                       count(w.data_stage_wavefronts) + " wavefronts / (" +
                           std::to_string(m.cores) + " SMs × 1 a cycle × " + clock + ")" + tail});
  }
  for (const memory::CacheConfig& level : m.levels) {
    if (level.name != "L2" || level.bandwidth_bytes_per_s <= 0 || w.l2_bytes <= 0) continue;
    p.terms.push_back({"L2", w.l2_bytes / level.bandwidth_bytes_per_s,
                       count(w.l2_bytes) + "B / " + io::format_rate(level.bandwidth_bytes_per_s)});
  }
  if (w.dram_bytes > 0 && m.memory.bandwidth_bytes_per_s > 0) {
    double bw = m.memory.bandwidth_bytes_per_s;
    std::string why = count(w.dram_bytes) + "B / " + io::format_rate(bw);
    if (m.memory.latency_ns > 0 && w.loads_in_flight_per_warp > 0 && w.bytes_per_load > 0) {
      const ParallelismBound b =
          memory_parallelism(m, busy_sms,
                             {resident_warps(m, p.occupancy, w.blocks),
                              std::max<int64_t>(1, std::llround(w.loads_in_flight_per_warp)),
                              std::llround(w.bytes_per_load)});
      // The predicted bandwidth (a warp's whole round, the memory's queue), under the bound.
      bw = b.predicted_bandwidth;
      why = count(w.dram_bytes) + "B / " + io::format_rate(bw) + " (" + b.summary +
            "; a warp's round " + fmt("%.0f ns", b.round_s * 1e9) + ")";
    }
    p.terms.push_back({"DRAM", w.dram_bytes / bw, why});
  }
  if (p.terms.empty()) {
    p.error = w.name + ": no work to time (no instructions, FLOPs or bytes)";
    return p;
  }
  // The largest unit, except that the SM's issue and data stage overlap only in part (see
  // kPipeOverlap): their share is the longer plus a part of the shorter.
  const TimeTerm* issue = nullptr;
  const TimeTerm* data = nullptr;
  const TimeTerm* top = &p.terms.front();
  for (const TimeTerm& t : p.terms) {
    if (t.name == "issue") issue = &t;
    if (t.name == "data stage") data = &t;
    if (t.seconds > top->seconds) top = &t;
  }
  p.seconds = top->seconds;
  p.limiter = top->name;
  p.summary = top->name + "-bound, " + duration(top->seconds) + ": " + top->why;
  if (issue && data) {
    const TimeTerm& longer = issue->seconds >= data->seconds ? *issue : *data;
    const TimeTerm& shorter = issue->seconds >= data->seconds ? *data : *issue;
    const double sm = longer.seconds + (1 - kPipeOverlap) * shorter.seconds;
    if (sm >= p.seconds) {
      p.seconds = sm;
      p.limiter = longer.name;
      p.summary = longer.name + "-bound, " + duration(sm) + ": " + longer.why + ", plus " +
                  fmt("%.0f %%", 100 * (1 - kPipeOverlap)) + " of the " + shorter.name + "'s " +
                  duration(shorter.seconds) + " (the two overlap only in part)";
    }
  }

  const double flops = 2 * w.fp32_fmas;
  const double fp32 = m.peak("fp32", "simt");
  const double tensor = m.peak(w.tensor_dtype, "tensor");
  double bound = 0;
  if (flops > 0 && fp32 > 0) bound = std::max(bound, flops / fp32);
  if (w.tensor_flops > 0 && tensor > 0) bound = std::max(bound, w.tensor_flops / tensor);
  if (w.dram_bytes > 0 && m.memory.bandwidth_bytes_per_s > 0)
    bound = std::max(bound, w.dram_bytes / m.memory.bandwidth_bytes_per_s);
  p.bound_seconds = bound;
  return p;
}

TimePrediction predict_time(const Machine& m, const std::vector<KernelWork>& launches) {
  TimePrediction total;
  double longest = -1;
  for (const KernelWork& w : launches) {
    TimePrediction one = predict_time(m, w);
    if (!one.error.empty()) return one;
    if (one.seconds > longest) {
      longest = one.seconds;
      const double so_far = total.seconds, bound_so_far = total.bound_seconds;
      total = one;
      total.seconds = so_far, total.bound_seconds = bound_so_far;
    }
    total.seconds += one.seconds;
    total.bound_seconds += one.bound_seconds;
  }
  if (launches.size() > 1)
    total.summary += " (the longest of " + std::to_string(launches.size()) + " launches; total " +
                     duration(total.seconds) + ")";
  return total;
}

ScheduleLoads schedule_loads(const schedule::Kernel& k, const schedule::TraceSummary& t,
                             int64_t warps, uint32_t sector_bytes) {
  ScheduleLoads l;
  if (t.global_load_instructions == 0 || warps <= 0) return l;
  double serial = 1;
  for (const schedule::Loop& loop : k.loops)
    if (loop.kind == schedule::LoopKind::Serial) serial *= double(loop.extent);
  l.per_warp = std::max(1.0, double(t.global_load_instructions) / (double(warps) * serial));
  l.bytes_per_load = double(t.global_reads) * sector_bytes / double(t.global_load_instructions);
  return l;
}

nlohmann::json time_prediction_json(const TimePrediction& p) {
  nlohmann::json j;
  if (!p.error.empty()) return {{"error", p.error}};
  j["seconds"] = p.seconds;
  j["limiter"] = p.limiter;
  j["summary"] = p.summary;
  j["bound_seconds"] = p.bound_seconds;
  j["clock_hz"] = p.clock_hz;
  j["tail_factor"] = p.tail_factor;
  nlohmann::json terms = nlohmann::json::array();
  for (const TimeTerm& t : p.terms)
    terms.push_back({{"name", t.name}, {"seconds", t.seconds}, {"why", t.why}});
  j["terms"] = terms;
  j["occupancy"] = occupancy_json(p.occupancy);
  return j;
}

}  // namespace tilescope::predict
