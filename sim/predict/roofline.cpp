// Roofline prediction: max(flops / peak, bytes_level / bandwidth_level) and the binding level.
#include "sim/predict/roofline.h"

#include <sstream>

#include "sim/schedule/codegen.h"
#include "sim/schedule/kernel.h"

#include <algorithm>

namespace tilescope::predict {
namespace {

std::string fmt_time(double s) {
  std::ostringstream o;
  o.precision(3);
  if (s >= 1)
    o << s << " s";
  else if (s >= 1e-3)
    o << s * 1e3 << " ms";
  else
    o << s * 1e6 << " us";
  return o.str();
}

}  // namespace

std::string Roofline::summary() const {
  if (binding.empty()) return "no roofline: the machine gives no peak or bandwidth";
  return fmt_time(seconds) + ", bound by " + binding;
}

ReductionChain reduction_chain(const schedule::Kernel& k) {
  ReductionChain c;
  if (k.loops.empty()) return c;
  const schedule::Loop& inner = k.loops.back();
  // Unrolled or plain serial: still one accumulator, still one chain. Vectorised or bound to
  // threads: the lanes are separate sums.
  if (!inner.reduce ||
      (inner.kind != schedule::LoopKind::Serial && inner.kind != schedule::LoopKind::Unrolled))
    return c;
  bool reduces = false;
  for (const auto& ph : k.phases) reduces = reduces || ph.kind == schedule::PhaseKind::Reduce;
  if (!reduces) return c;
  double steps = 1;
  for (const schedule::Loop& l : k.loops) steps *= double(l.extent);
  c.steps = steps;
  c.loop = inner.name;
  return c;
}

double busy_core_share(const schedule::Kernel& k, const Machine& m) {
  if (m.kind != "gpu" || m.cores <= 0) return 1.0;
  if (!schedule::binds_blocks(k)) return 1.0;
  return std::min(1.0, double(schedule::launch_config(k).blocks()) / double(m.cores));
}

double busy_core_share(const std::vector<double>& flops, const std::vector<double>& shares) {
  double total = 0, at_share = 0;
  for (size_t i = 0; i < flops.size() && i < shares.size(); ++i) {
    total += flops[i];
    at_share += shares[i] > 0 ? flops[i] / shares[i] : 0;
  }
  return at_share > 0 ? total / at_share : 1.0;
}

Roofline roofline(const Machine& m, double flops, const LevelBytes& traffic,
                  const std::string& peak_dtype, const std::string& peak_unit,
                  const ReductionChain& chain, double core_share) {
  Roofline r;
  std::string unit = peak_unit;
  if (unit.empty()) unit = m.kind == "gpu" ? "simt" : "simd";
  double peak = m.peak(peak_dtype, unit);
  RooflineBound c;
  c.name = "compute";
  if (peak > 0 && core_share > 0 && core_share < 1) {
    c.seconds = flops / (peak * core_share);
    c.term = {"t(compute)",
              c.seconds,
              "flops / (peak × share of SMs with a block)",
              {{"flops", flops}, {"peak", peak}, {"share of SMs with a block", core_share}}};
  } else if (peak > 0) {
    c.seconds = flops / peak;
    c.term = {"t(compute)", c.seconds, "flops / peak", {{"flops", flops}, {"peak", peak}}};
  } else {
    c.known = false;
    r.notes.push_back(m.name + " gives no " + peak_dtype + " " + unit + " peak");
  }
  r.bounds.push_back(c);
  if (chain.steps > 0 && m.kind == "cpu") {
    RooflineBound d;
    d.name = "dependence";
    if (m.dependent_fma_s > 0) {
      d.seconds = chain.steps * m.dependent_fma_s;
      d.term = {
          "t(dependence)",
          d.seconds,
          "multiply-adds in one chain (" + chain.loop + " innermost) × t(dependent FMA)",
          {{"multiply-adds in one chain", chain.steps}, {"t(dependent FMA)", m.dependent_fma_s}}};
    } else {
      d.known = false;
      r.notes.push_back(m.name + " gives no dependent_fma latency, so the serial sum over " +
                        chain.loop + " is not bounded");
    }
    r.bounds.push_back(d);
  }
  for (size_t i = 0; i < traffic.bytes.size(); ++i) {
    RooflineBound b;
    b.name = i < traffic.names.size() ? traffic.names[i] : "level " + std::to_string(i);
    const double bw =
        i < m.levels.size() ? m.levels[i].bandwidth_bytes_per_s : m.memory.bandwidth_bytes_per_s;
    const double strided = i > 0 && i < traffic.strided_bytes.size() ? traffic.strided_bytes[i] : 0;
    const auto line_cost = m.strided_line_s.find(b.name);
    if (bw > 0 && strided > 0 && line_cost != m.strided_line_s.end()) {
      // Streamed bytes at the bandwidth; each strided line at its measured time, which no
      // prefetch hides.
      const double line = i < traffic.line_bytes.size() ? traffic.line_bytes[i] : 64;
      const double lines = strided / line;
      b.seconds = (traffic.bytes[i] - strided) / bw + lines * line_cost->second;
      b.term = {"t(" + b.name + ")",
                b.seconds,
                "(bytes − strided bytes) / bandwidth + strided lines × t(strided line)",
                {{"bytes", traffic.bytes[i]},
                 {"strided bytes", strided},
                 {"bandwidth", bw},
                 {"strided lines", lines},
                 {"t(strided line)", line_cost->second}}};
    } else if (bw > 0) {
      b.seconds = traffic.bytes[i] / bw;
      b.term = {"t(" + b.name + ")",
                b.seconds,
                "bytes / bandwidth",
                {{"bytes", traffic.bytes[i]}, {"bandwidth", bw}}};
    } else {
      b.known = false;
      r.notes.push_back(m.name + " gives no bandwidth for " + b.name);
    }
    r.bounds.push_back(b);
  }
  for (const RooflineBound& b : r.bounds)
    if (b.known && (r.binding.empty() || b.seconds > r.seconds)) {
      r.binding = b.name;
      r.seconds = b.seconds;
    }
  return r;
}

LevelBytes level_bytes(const Machine& m, const AnalyticResult& a) {
  LevelBytes lb;
  for (size_t i = 0; i < m.levels.size(); ++i) {
    lb.names.push_back(m.levels[i].name);
    if (i == 0) {
      lb.bytes.push_back(a.access_bytes);
    } else if (i - 1 < a.levels.size()) {
      const LevelTraffic& up = a.levels[i - 1];
      lb.bytes.push_back((up.misses.value + up.writebacks.value) * up.line_bytes);
    } else {
      lb.bytes.push_back(0);
    }
  }
  lb.names.push_back(m.memory.name);
  lb.bytes.push_back(a.levels.empty() ? a.accesses.value * 4
                                      : a.memory_read_bytes.value + a.memory_write_bytes.value);
  return lb;
}

LevelBytes level_bytes(const Machine& m, const memory::Hierarchy& h) {
  LevelBytes lb;
  for (int i = 0; i <= h.level_count(); ++i) {
    lb.names.push_back(i < h.level_count() ? h.config().levels[size_t(i)].name : m.memory.name);
    const memory::Counters c = h.counters(i);
    lb.bytes.push_back(double(c.read_bytes + c.write_bytes));
    // Level i serves the lines of level i - 1 (level 0 serves elements to the core).
    lb.line_bytes.push_back(i > 0 ? h.config().levels[size_t(i - 1)].line_bytes : 0);
  }
  return lb;
}

LevelBytes level_bytes(const Machine& m, const memory::Hierarchy& h,
                       const AccessPatternSink& pattern) {
  LevelBytes lb = level_bytes(m, h);
  lb.strided_bytes.assign(lb.bytes.size(), 0.0);
  for (int i = 1; i <= h.level_count(); ++i)
    for (int t = -1; t <= h.max_tensor(); ++t)
      lb.strided_bytes[size_t(i)] +=
          double(h.counters(i, t).read_bytes) * pattern.pattern(t).strided_fraction();
  return lb;
}

}  // namespace tilescope::predict
