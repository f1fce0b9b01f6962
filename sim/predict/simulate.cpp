// The shared pipeline (run.h): machine → trace options → hierarchy → trace → write-back → level
// bytes, analytic model, roofline.
#include "sim/predict/simulate.h"

#include "sim/schedule/trace_size.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

namespace tilescope::predict {

// [SECTION] The machine as the schedule's target

schedule::Target target_for(const Machine& m) {
  schedule::Target t;
  if (m.scratchpad) {
    t.smem_bytes_per_sm = int64_t(m.scratchpad->size_bytes);
    t.smem_bytes_per_block = m.smem_per_block > 0 ? m.smem_per_block : t.smem_bytes_per_sm;
    t.warp_size = m.scratchpad->warp_size;
    t.smem_banks = m.scratchpad->banks;
  } else {
    t.smem_bytes_per_sm = 0;
    t.smem_bytes_per_block = 0;
  }
  if (m.kind == "gpu") t.sm_count = resident_blocks(m);
  if (m.registers_per_thread > 0) t.register_bytes_per_thread = m.registers_per_thread * 4;
  if (m.threads_per_block > 0) t.max_threads_per_block = m.threads_per_block;
  if (m.kind == "cpu" && !m.levels.empty()) t.cpu_l1_bytes = int64_t(m.levels.front().size_bytes);
  if (m.kind == "gpu" && !m.levels.empty()) t.gpu_l1_bytes = int64_t(m.levels.front().size_bytes);
  t.machine = m.name;
  if (m.vector_bytes > 0) t.cpu_vector_bytes = m.vector_bytes;
  if (m.vector_registers > 0) t.cpu_vector_registers = m.vector_registers;
  return t;
}

int64_t resident_blocks(const Machine& m) {
  return std::max(1, m.cores);
}

schedule::TraceOptions trace_options_for(const Machine& m) {
  schedule::TraceOptions o;
  o.gpu = m.kind == "gpu";
  if (o.gpu) {
    o.resident_blocks = resident_blocks(m);
    if (m.scratchpad) o.warp_size = m.scratchpad->warp_size;
    if (!m.levels.empty()) o.sector_bytes = m.levels.front().sector_size();
  }
  return o;
}

double kernel_flops(const schedule::Kernel& k, const graph::Graph& g) {
  if (k.flops >= 0) return double(k.flops);
  double flops = 0;
  for (graph::OpId op : k.ops) flops += double(g.op_cost(op).flops);
  return flops;
}

double fp32_peak(const Machine& m) {
  const double simt = m.peak("fp32", "simt");
  return simt > 0 ? simt : m.peak("fp32", "simd");
}

Machine with_measured_peaks(Machine m, double fp32_flops_per_s, double memory_bytes_per_s,
                            double dependent_fma_s, const std::string& source) {
  if (memory_bytes_per_s > 0) m.memory.bandwidth_bytes_per_s = memory_bytes_per_s;
  if (dependent_fma_s > 0) m.dependent_fma_s = dependent_fma_s;
  if (fp32_flops_per_s > 0) {
    bool set = false;
    for (ComputePeak& cp : m.peaks)
      if (cp.dtype == "fp32") {
        cp.ops_per_s = fp32_flops_per_s;
        cp.note = source;
        set = true;
      }
    if (!set)
      m.peaks.push_back({"fp32", m.kind == "gpu" ? "simt" : "simd", fp32_flops_per_s, source});
  }
  m.notes.push_back("peaks: measured on this computer (" + source + ")");
  return m;
}

// [SECTION] One kernel

uint64_t KernelRun::dram_bytes() const {
  if (!hierarchy) return 0;
  const memory::Counters c = hierarchy->counters(hierarchy->level_count());
  return c.read_bytes + c.write_bytes;
}

TensorPattern KernelRun::pattern(int tensor) const {
  const size_t i = tensor < 0 ? 0 : size_t(tensor) + 1;
  return i < patterns.size() ? patterns[i] : TensorPattern{};
}

const Roofline* KernelRun::prediction() const {
  if (hierarchy) return &roofline;
  return analytic_roofline ? &*analytic_roofline : nullptr;
}

namespace {

// Passes every access on and, between batches, hands the hierarchy to RunOptions::watch about
// every watch_seconds (one clock read a batch of ~4096 accesses).
class WatchSink final : public memory::AccessSink {
 public:
  WatchSink(memory::AccessSink& next, const memory::Hierarchy& h, const RunOptions& o)
      : m_next(next), m_h(h), m_o(o), m_due(std::chrono::steady_clock::now() + period()) {}
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    m_next.access_batch(a, n);
    if (const auto now = std::chrono::steady_clock::now(); now >= m_due) {
      m_o.watch(m_h);
      m_due = now + period();
    }
  }
  void step_boundary(uint64_t step) override { m_next.step_boundary(step); }

 private:
  std::chrono::steady_clock::duration period() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(m_o.watch_seconds));
  }
  memory::AccessSink& m_next;
  const memory::Hierarchy& m_h;
  const RunOptions& m_o;
  std::chrono::steady_clock::time_point m_due;
};

memory::HierarchyOptions hierarchy_options(const RunOptions& o) {
  memory::HierarchyOptions h;
  h.classify_misses = o.classify_misses;
  h.reuse_distance = o.reuse_distance;
  h.analysis_thread = o.threads == 0 ? std::thread::hardware_concurrency() >= 2 : o.threads >= 2;
  return h;
}

}  // namespace

KernelRun simulate_kernel(const schedule::Kernel& k, const graph::Graph& g, const Machine& m,
                          const RunOptions& options) {
  KernelRun r;
  r.machine = m.name;
  r.trace = trace_options_for(m);
  r.gpu = r.trace.gpu;
  for (const graph::Tensor& t : g.tensors()) r.tensor_names.push_back(t.name);
  schedule::name_accumulator_buffer(r.trace, r.tensor_names);  // a stack accumulator tile's row
  schedule::name_scratch_tensors(r.trace, r.tensor_names, k);  // im2col's, split_k's
  r.flops = kernel_flops(k, g);
  const ReductionChain chain = reduction_chain(k);

  if (options.simulate) {
    const bool sample = options.sample;
    memory::HierarchyOptions ho = hierarchy_options(options);
    if (sample) ho.classify_misses = ho.reuse_distance = false;
    r.hierarchy = std::make_unique<memory::Hierarchy>(m.hierarchy(), ho);
    // The pattern sink passes every access on unchanged and notes which line moves a prefetcher
    // could follow; the roofline charges the others at the machine's strided-line time.
    AccessPatternSink pattern(*r.hierarchy);
    std::unique_ptr<WatchSink> watch;
    if (options.watch && !sample)
      watch = std::make_unique<WatchSink>(pattern, *r.hierarchy, options);
    memory::AccessSink& inner = watch ? static_cast<memory::AccessSink&>(*watch) : pattern;
    std::unique_ptr<memory::AccessSink> front = options.wrap ? options.wrap(inner) : nullptr;
    schedule::TraceOptions to = r.trace;
    std::unique_ptr<UnitSampler> sampler;
    SamplePlan plan;
    if (sample) {
      const double estimate = schedule::estimate_trace_size(k, to.gpu).accesses;
      plan = plan_sample(k, to, estimate, options.sample_budget);
      sampler = std::make_unique<UnitSampler>(*r.hierarchy, plan.loop.units, plan.budget_units,
                                              r.tensor_names.size() + 1);
      to.sampler = sampler.get();
      to.unit_loop = plan.loop.loop;
    }
    r.summary = schedule::trace_kernel(k, front ? *front : inner, to);
    r.hierarchy->finish();
    if (options.before_write_back) options.before_write_back(*r.hierarchy);
    if (options.write_back_all) r.hierarchy->write_back_all();
    r.patterns = pattern.by_tensor();
    if (sampler) {
      r.sampled = sampler->finish(r.summary, r.patterns);
      r.sampled->unit_loop = plan.loop.name;
      r.sampled->unit_work_share = plan.loop.work_share;
    }
    r.bytes = level_bytes(m, *r.hierarchy, pattern);
    r.roofline = roofline(m, r.flops, r.bytes, "fp32", "", chain, busy_core_share(k, m));
  }

  // The analytic model describes CPU loop nests (element accesses); a GPU trace interleaves warps
  // and coalesces their accesses into sectors, which its per-loop footprints do not describe.
  if (r.gpu) {
    r.analytic_error =
        "it covers CPU loop nests only; a GPU trace interleaves warps and coalesces their "
        "accesses, which its per-loop footprints do not describe";
  } else if (options.analytic) {
    if (options.phase) options.phase("analytic model");
    try {
      AnalyticOptions ao;
      ao.alignment = r.trace.alignment;
      ao.acc_tensor = r.trace.acc_tensor;
      ao.scratch_tensor = r.trace.scratch_tensor;
      r.analytic = analyze_kernel(k, m.hierarchy(), ao);
      r.analytic_roofline = roofline(m, r.flops, level_bytes(m, *r.analytic), "fp32", "", chain);
    } catch (const std::invalid_argument& e) {  // too large to enumerate, or not a nest it models
      r.analytic_error = e.what();
    }
  }
  return r;
}

// [SECTION] A recorded trace

TraceRun run_trace(const Machine& m, const std::function<uint64_t(memory::AccessSink&)>& source,
                   const RunOptions& options) {
  TraceRun r;
  r.machine = m.name;
  r.hierarchy = std::make_unique<memory::Hierarchy>(m.hierarchy(), hierarchy_options(options));
  std::unique_ptr<memory::AccessSink> front = options.wrap ? options.wrap(*r.hierarchy) : nullptr;
  r.accesses = source(front ? *front : *r.hierarchy);
  r.hierarchy->finish();
  if (options.before_write_back) options.before_write_back(*r.hierarchy);
  if (options.write_back_all) r.hierarchy->write_back_all();
  return r;
}

// [SECTION] A whole program

namespace {

// Maps each kernel's own trace addresses (every kernel's layout starts its tensors at the same
// base) to one address per graph tensor, so a tensor one kernel writes is the one the next reads:
// without it a fused and an unfused program would differ by where the trace happened to put an
// input, and a cache would "hit" data it never held.
class ProgramAddressSink final : public memory::AccessSink {
 public:
  ProgramAddressSink(memory::AccessSink& out, uint64_t scratch_base, uint64_t align)
      : m_out(out), m_scratch(scratch_base), m_align(align) {}

  void set_kernel(const schedule::Kernel& k, const schedule::TraceLayout& local,
                  const std::map<graph::TensorId, uint64_t>& global) {
    const auto up = [&](uint64_t x) { return (x + m_align - 1) / m_align * m_align; };
    m_ranges.clear();
    // A tensor of no graph id (im2col's unfolded matrix) lives after every graph tensor; the
    // kernel's accumulator and scratch areas (which start after its tensors) follow it.
    uint64_t cursor = m_scratch, end = uint64_t(1) << 20;
    for (size_t i = 0; i < k.tensors.size(); ++i) {
      const uint64_t bytes = k.tensors[i].buffer_bytes();
      const auto g = global.find(k.tensors[i].id);
      uint64_t at = 0;
      if (k.tensors[i].id >= 0 && g != global.end()) {
        at = g->second;
      } else {
        at = cursor = up(cursor);
        cursor += bytes;
      }
      m_ranges.push_back({local.tensor_base[i], bytes, at});
      end = std::max(end, local.tensor_base[i] + bytes);
    }
    m_local_after = up(end);
    m_other = up(cursor);
  }
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* as, size_t n) override {
    m_buf.assign(as, as + n);
    for (memory::Access& a : m_buf) {
      if (a.space != memory::AddressSpace::Global) continue;
      bool mapped = false;
      for (const Range& r : m_ranges)
        if (a.addr >= r.local && a.addr < r.local + r.bytes) {
          a.addr = r.global + (a.addr - r.local);
          mapped = true;
          break;
        }
      // The accumulator buffer and packing tiles come after the tensors, in both layouts.
      if (!mapped) a.addr = m_other + (a.addr >= m_local_after ? a.addr - m_local_after : a.addr);
    }
    m_out.access_batch(m_buf.data(), m_buf.size());
  }
  void step_boundary(uint64_t step) override { m_out.step_boundary(step); }

 private:
  struct Range {
    uint64_t local, bytes, global;
  };
  memory::AccessSink& m_out;
  uint64_t m_scratch, m_align;
  uint64_t m_local_after = 0, m_other = 0;
  std::vector<Range> m_ranges;
  std::vector<memory::Access> m_buf;
};

}  // namespace

ProgramRun run_program(const schedule::Program& p, const Machine& m, const RunOptions& options) {
  ProgramRun r;
  r.machine = m.name;
  r.hierarchy = std::make_unique<memory::Hierarchy>(m.hierarchy(), hierarchy_options(options));
  const schedule::TraceOptions o = trace_options_for(m);
  // One global address per graph tensor, sized for the largest layout any kernel gives it, laid
  // out as trace_layout lays out a kernel (from 1 MiB, 4 KiB-aligned) in order of first use: the
  // first kernel's tensors keep their own addresses, so a one-kernel program is traced exactly as
  // simulate_kernel traces that kernel, and the two give the same counters.
  std::map<graph::TensorId, uint64_t> size;
  std::vector<graph::TensorId> order;
  for (const auto& k : p.kernels)
    for (const auto& t : k.tensors)
      if (t.id >= 0) {
        const uint64_t bytes = t.buffer_bytes();
        auto [it, fresh] = size.emplace(t.id, bytes);
        if (fresh) order.push_back(t.id);
        it->second = std::max(it->second, bytes);
      }
  const uint64_t align = std::max<uint64_t>(o.alignment, 64);
  std::map<graph::TensorId, uint64_t> global;
  uint64_t next = uint64_t(1) << 20;
  for (graph::TensorId id : order) {
    next = (next + align - 1) / align * align;
    global[id] = next;
    next += size[id];
  }
  ProgramAddressSink sink(*r.hierarchy, (next + align - 1) / align * align, align);
  std::unique_ptr<memory::AccessSink> front = options.wrap ? options.wrap(sink) : nullptr;
  std::vector<double> flops, shares;
  for (const auto& k : p.kernels) {
    sink.set_kernel(k, schedule::trace_layout(k, o), global);
    schedule::trace_kernel(k, front ? *front : sink, o);
    flops.push_back(p.graph ? kernel_flops(k, *p.graph) : 0.0);
    shares.push_back(busy_core_share(k, m));
    r.flops += flops.back();
  }
  r.core_share = busy_core_share(flops, shares);
  r.hierarchy->finish();
  if (options.before_write_back) options.before_write_back(*r.hierarchy);
  if (options.write_back_all) r.hierarchy->write_back_all();
  r.bytes = level_bytes(m, *r.hierarchy);
  return r;
}

}  // namespace tilescope::predict
