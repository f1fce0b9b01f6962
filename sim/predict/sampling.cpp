// Sampled simulation (sampling.h): the unit loop, the walk's decisions and the estimate.
#include "sim/predict/sampling.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace tilescope::predict {

namespace {

using memory::Counters;
using schedule::TraceSummary;

constexpr std::array<uint64_t Counters::*, 14> kCounterFields = {
    &Counters::accesses,   &Counters::reads,      &Counters::writes,
    &Counters::hits,       &Counters::misses,     &Counters::compulsory,
    &Counters::capacity,   &Counters::conflict,   &Counters::sector_misses,
    &Counters::evictions,  &Counters::writebacks, &Counters::back_invalidations,
    &Counters::read_bytes, &Counters::write_bytes};
constexpr size_t kAccesses = 0, kHits = 3, kReadBytes = 12, kWriteBytes = 13;

constexpr std::array<uint64_t memory::ScratchpadStats::*, 7> kScratchpadFields = {
    &memory::ScratchpadStats::requests,   &memory::ScratchpadStats::lane_accesses,
    &memory::ScratchpadStats::reads,      &memory::ScratchpadStats::writes,
    &memory::ScratchpadStats::wavefronts, &memory::ScratchpadStats::ideal_wavefronts,
    &memory::ScratchpadStats::bytes};

constexpr std::array<uint64_t TraceSummary::*, 12> kSummaryFields = {
    &TraceSummary::global_reads,
    &TraceSummary::global_writes,
    &TraceSummary::shared_reads,
    &TraceSummary::shared_writes,
    &TraceSummary::acc_reads,
    &TraceSummary::acc_writes,
    &TraceSummary::steps,
    &TraceSummary::global_instructions,
    &TraceSummary::global_lines,
    &TraceSummary::global_load_instructions,
    &TraceSummary::shared_instructions,
    &TraceSummary::shared_wavefronts};

uint64_t summary_accesses(const TraceSummary& s) {
  return s.global_reads + s.global_writes + s.shared_reads + s.shared_writes;
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t to_count(double v) {
  return v <= 0 ? 0 : uint64_t(std::llround(v));
}

}  // namespace

SamplePlan plan_sample(const schedule::Kernel& k, const schedule::TraceOptions& o, double accesses,
                       double budget) {
  const std::vector<schedule::UnitLoop> chain = schedule::unit_chain(k, o.gpu, o.resident_blocks);
  SamplePlan p;
  if (chain.empty()) return p;
  p.loop = chain.back();
  for (const schedule::UnitLoop& l : chain)
    if (l.units > 0 && accesses * l.work_share / l.units <= budget / 256) {
      p.loop = l;
      break;
    }
  const double per_unit = accesses * p.loop.work_share / std::max(1.0, p.loop.units);
  const double outside = accesses * (1 - p.loop.work_share);
  p.budget_units = std::max(budget - outside, budget / 2) / std::max(1.0, per_unit);
  return p;
}

UnitSampler::UnitSampler(memory::Hierarchy& h, double units, double budget_units,
                         size_t tensor_rows, uint64_t seed)
    : m_h(h),
      m_units_planned(std::max(1.0, units)),
      m_budget_units(std::max(2.0, budget_units)),
      m_rows(std::max<size_t>(1, tensor_rows)),
      m_rng(seed) {
  const int last = h.level_count() - 1;
  if (last >= 0) {
    const memory::CacheConfig& c = h.config().levels[size_t(last)];
    m_warm_lines = double(c.size_bytes) / double(std::max<uint32_t>(1, c.line_bytes));
  }
  m_warm_cap = uint64_t(std::max(1.0, std::floor(m_budget_units / kCycles) - 1));
  m_last = snapshot(TraceSummary{});
  m_always.assign(m_last.size(), 0.0);
  m_warm_delta.assign(m_last.size(), 0.0);
}

std::vector<double> UnitSampler::snapshot(const TraceSummary& s) const {
  std::vector<double> v;
  v.reserve(size_t(m_h.level_count() + 1) * m_rows * kCounterFields.size() + 64);
  for (int k = 0; k <= m_h.level_count(); ++k) {
    std::vector<Counters> rows = m_h.counters_by_tensor(k);
    rows.resize(std::max(rows.size(), m_rows));
    for (size_t r = 0; r < m_rows; ++r)
      for (auto f : kCounterFields) v.push_back(double(rows[r].*f));
  }
  const memory::ScratchpadStats sp =
      m_h.scratchpad() ? m_h.scratchpad()->stats() : memory::ScratchpadStats{};
  for (auto f : kScratchpadFields) v.push_back(double(sp.*f));
  for (uint64_t d : sp.degree_histogram) v.push_back(double(d));
  for (auto f : kSummaryFields) v.push_back(double(s.*f));
  v.push_back(double(m_h.trace_accesses()));
  return v;
}

// The counters' change since the last accounting point, added to `into` (nullptr: dropped).
void UnitSampler::account(const TraceSummary& s, std::vector<double>* into) {
  std::vector<double> now = snapshot(s);
  if (into)
    for (size_t i = 0; i < now.size(); ++i) (*into)[i] += now[i] - m_last[i];
  m_last = std::move(now);
  m_last_accesses = summary_accesses(s);
}

uint64_t UnitSampler::last_level_misses() const {
  const int last = m_h.level_count() - 1;
  return last < 0 ? 0 : m_h.counters(last).misses;
}

bool UnitSampler::begin_unit(const TraceSummary& so_far) {
  // Accesses since the last unit were made outside units: counted once.
  if (summary_accesses(so_far) != m_last_accesses) account(so_far, &m_always);
  ++m_unit;
  if (m_state == State::Skip) {
    if (m_skip_left > 0) {
      --m_skip_left;
      return false;
    }
    m_state = State::Warm;
    m_warm_in_cycle = 0;
    m_warm_start_misses = last_level_misses();
  }
  if (m_state == State::Warm) {
    const bool refilled = double(last_level_misses() - m_warm_start_misses) >= m_warm_lines;
    if (m_warm_in_cycle == 0 || (!refilled && m_warm_in_cycle < m_warm_cap)) {
      ++m_warm_in_cycle;
      ++m_warm;
      ++m_walked;
      m_unit_state = State::Warm;
      return true;
    }
    m_cycle_capped = !refilled;
    m_state = State::Measure;
  }
  ++m_walked;
  m_unit_state = State::Measure;
  return true;
}

void UnitSampler::end_unit(const TraceSummary& so_far) {
  if (m_unit_state == State::Warm) {
    account(so_far, &m_warm_delta);
    return;
  }
  std::vector<double> y(m_last.size(), 0.0);
  account(so_far, &y);
  m_measured.push_back(std::move(y));
  m_weight.push_back(double(m_unit - m_cycle_start));
  m_cycle_start = m_unit;
  if (m_cycle_capped) ++m_capped;
  m_cycle_capped = false;
  plan_next_cycle();
}

// The skip before the next warm-up: the units left shared among the cycles the budget left pays
// for, at the warm-up length seen so far, varied at random by ±50 %.
void UnitSampler::plan_next_cycle() {
  const double left = m_budget_units - double(m_walked);
  const double cycles = double(m_measured.size());
  const double warm_per_cycle = cycles > 1 ? double(m_warm) / (cycles - 1) : 1.0;
  const double cycle_cost = warm_per_cycle + 1;
  const double units_left = std::max(0.0, m_units_planned - double(m_unit));
  if (left < cycle_cost) {  // the budget is spent: skip the rest
    m_state = State::Skip;
    m_skip_left = UINT64_MAX;
    return;
  }
  const double stride = units_left / std::floor(left / cycle_cost);
  if (stride <= 1.0 + 1e-9) {  // the budget covers every unit left: walk them all, measured
    m_state = State::Measure;
    return;
  }
  const double skip = std::max(0.0, stride - cycle_cost);
  const double jitter = 0.5 + double(splitmix(m_rng) >> 11) / double(1ull << 53);
  m_skip_left = uint64_t(std::llround(skip * jitter));
  m_state = m_skip_left == 0 && warm_per_cycle <= 1 ? State::Measure : State::Skip;
}

SampleInfo UnitSampler::finish(TraceSummary& summary, std::vector<TensorPattern>& patterns) {
  account(summary, &m_always);  // the tail, and the final write-back
  if (!m_weight.empty()) m_weight.back() += double(m_unit - m_cycle_start);
  // A tensor the walked units never access (an output written after the loop the units come
  // from): what happens to its lines during units — a dirty line evicted, written below — is
  // the consequence of accesses outside units, and happens once whichever unit it falls in: its
  // rows count once, from measured and warm-up units alike.
  const size_t levels = size_t(m_h.level_count()) + 1, nf = kCounterFields.size();
  for (size_t r = 0; r < m_rows; ++r) {
    double touched = m_warm_delta[r * nf + kAccesses];
    for (const auto& y : m_measured) touched += y[r * nf + kAccesses];
    if (touched != 0) continue;
    for (size_t k = 0; k < levels; ++k)
      for (size_t f = 0; f < nf; ++f) {
        const size_t i = (k * m_rows + r) * nf + f;
        m_always[i] += m_warm_delta[i];
        for (auto& y : m_measured) {
          m_always[i] += y[i];
          y[i] = 0;
        }
      }
  }
  std::vector<double> est = m_always;
  for (size_t h = 0; h < m_measured.size(); ++h)
    for (size_t i = 0; i < est.size(); ++i) est[i] += m_weight[h] * m_measured[h][i];

  // The estimate in place of the counters.
  std::vector<std::vector<Counters>> rows(levels, std::vector<Counters>(m_rows));
  size_t i = 0;
  for (size_t k = 0; k < levels; ++k)
    for (size_t r = 0; r < m_rows; ++r)
      for (auto f : kCounterFields) rows[k][r].*f = to_count(est[i++]);
  for (auto& level : rows)
    for (Counters& c : level) c.misses = std::min(c.misses, c.reads + c.writes);
  memory::ScratchpadStats sp =
      m_h.scratchpad() ? m_h.scratchpad()->stats() : memory::ScratchpadStats{};
  for (auto f : kScratchpadFields) sp.*f = to_count(est[i++]);
  for (uint64_t& d : sp.degree_histogram) d = to_count(est[i++]);
  const double simulated_accesses = double(m_h.trace_accesses());
  for (auto f : kSummaryFields) summary.*f = to_count(est[i++]);
  const double accesses = est[i];
  m_h.set_estimate(rows, sp, to_count(accesses));
  const double scale = simulated_accesses > 0 ? accesses / simulated_accesses : 1.0;
  for (TensorPattern& p : patterns) {
    p.line_moves = to_count(double(p.line_moves) * scale);
    p.strided_moves = to_count(double(p.strided_moves) * scale);
  }

  SampleInfo info;
  info.units = m_unit;
  info.measured = m_measured.size();
  info.warm = m_warm;
  info.warm_capped = m_capped;
  info.warm_target_lines = m_warm_lines;
  info.walked_fraction = m_unit ? double(m_walked) / double(m_unit) : 1.0;
  const int last = m_h.level_count() - 1;
  if (last >= 0) info.last_level = m_h.config().levels[size_t(last)].name;

  // Per measured cycle: its DRAM bytes, last-level hits and accesses, each × its weight.
  const auto field = [&](size_t level, size_t f, const std::vector<double>& v) {
    double sum = 0;
    for (size_t r = 0; r < m_rows; ++r) sum += v[(level * m_rows + r) * nf + f];
    return sum;
  };
  const size_t mem = levels - 1;
  const auto dram = [&](const std::vector<double>& v) {
    return field(mem, kReadBytes, v) + field(mem, kWriteBytes, v);
  };
  info.dram_bytes = dram(est);
  const double llc_acc = last >= 0 ? field(size_t(last), kAccesses, est) : 0;
  const double llc_hits = last >= 0 ? field(size_t(last), kHits, est) : 0;
  info.last_level_hit_rate = llc_acc > 0 ? llc_hits / llc_acc : 0;
  // Successive differences over the sampled cycles (the first unit, exact, has no error).
  const size_t n = m_measured.size();
  if (n >= 4) {
    double vd = 0, vr = 0;
    for (size_t h = 2; h < n; ++h) {
      const auto z = [&](size_t c, bool rate) {
        const std::vector<double>& y = m_measured[c];
        if (!rate) return m_weight[c] * dram(y);
        const double a = last >= 0 ? field(size_t(last), kAccesses, y) : 0;
        const double hits = last >= 0 ? field(size_t(last), kHits, y) : 0;
        return m_weight[c] * (hits - info.last_level_hit_rate * a);
      };
      vd += std::pow(z(h, false) - z(h - 1, false), 2);
      vr += std::pow(z(h, true) - z(h - 1, true), 2);
    }
    const double H = double(n - 1);
    const double factor = H / (2 * (H - 1));
    info.dram_bytes_error = 1.96 * std::sqrt(factor * vd);
    info.last_level_hit_rate_error = llc_acc > 0 ? 1.96 * std::sqrt(factor * vr) / llc_acc : 0;
    info.error_known = true;
  }
  return info;
}

}  // namespace tilescope::predict
