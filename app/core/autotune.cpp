// Autotune sweeps: tile-size grids of the current kernel, predicted (analytic model + roofline,
// or the trace simulation where the model does not apply) and measured (JIT-compiled on this CPU).
#include "app/core/autotune.h"

#include "app/core/verify_tolerance.h"
#include "kernels/cpu/harness.h"
#include "kernels/cpu/jit.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/analytic.h"
#include "sim/predict/roofline.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/interpreter.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tilescope::core {

// [SECTION] Grid shape and loop choice

std::pair<double, double> AutotuneGrid::time_range() const {
  double lo = 0, hi = 0;
  for (const AutotunePoint& p : points) {
    if (!p.ok()) continue;
    lo = lo == 0 ? p.seconds : std::min(lo, p.seconds);
    hi = std::max(hi, p.seconds);
  }
  return {lo, hi};
}

double AutotuneGrid::run_spread() const {
  std::vector<double> spreads;
  for (const AutotunePoint& p : points)
    if (p.ok() && p.seconds > 0 && p.min_seconds > 0)
      spreads.push_back((p.seconds - p.min_seconds) / p.seconds);
  if (spreads.empty()) return 0;
  std::sort(spreads.begin(), spreads.end());
  return spreads[spreads.size() / 2];
}

std::vector<int64_t> autotune_tile_sizes(int64_t extent, int max_count) {
  std::vector<int64_t> all;
  for (int64_t t = 4; t <= extent; t *= 2) all.push_back(t);
  if (max_count <= 0 || all.size() <= size_t(max_count)) return all;
  if (max_count == 1) return {all.back()};
  // Evenly spread indices 0 … n-1 (rounded), so both ends stay in the smaller grid and the
  // hardware grid's points are also points of the simulator's.
  std::vector<int64_t> out;
  const double step = double(all.size() - 1) / double(max_count - 1);
  for (int i = 0; i < max_count; ++i) {
    const size_t idx = size_t(std::lround(step * i));
    if (out.empty() || out.back() != all[idx]) out.push_back(all[idx]);
  }
  return out;
}

schedule::TileStep autotune_step(const std::string& loop_a, const std::string& loop_b,
                                 int64_t tile_a, int64_t tile_b) {
  return schedule::TileStep{.loops = {loop_a, loop_b}, .factors = {tile_a, tile_b}};
}

namespace {

constexpr int64_t kMinSweepExtent = 8;  // at least two tile sizes (4 and 8)

bool sweepable(const schedule::Loop& l) {
  return l.kind == schedule::LoopKind::Serial && l.extent >= kMinSweepExtent;
}

std::string loop_list(const schedule::Kernel& k) {
  std::string s;
  for (const schedule::Loop& l : k.loops)
    s += (s.empty() ? "" : ", ") + l.name + " (" + std::to_string(l.extent) + ")";
  return s;
}

}  // namespace

AutotuneLoops choose_autotune_loops(const schedule::Kernel& k, const std::string& want_a,
                                    const std::string& want_b) {
  AutotuneLoops r;
  std::vector<int> picked;
  if (!want_a.empty() || !want_b.empty()) {
    if (want_a == want_b) {
      r.error = "autotune: the two loops must differ (got " + want_a + " twice)";
      return r;
    }
    for (const std::string& name : {want_a, want_b}) {
      const int li = k.find_loop(name);
      if (li < 0) {
        r.error = "autotune: kernel " + k.name + " has no loop named '" + name +
                  "'; its loops are " + loop_list(k);
        return r;
      }
      const schedule::Loop& l = k.loops[size_t(li)];
      if (!sweepable(l)) {
        r.error = "autotune: loop " + name + " cannot be swept: " +
                  (l.kind != schedule::LoopKind::Serial
                       ? std::string("it is already ") + schedule::loop_kind_name(l.kind)
                       : "it has only " + std::to_string(l.extent) + " iterations (at least " +
                             std::to_string(kMinSweepExtent) + " needed)");
        return r;
      }
      picked.push_back(li);
    }
  } else {
    // The two innermost: a tile of outer loops alone leaves the innermost walk whole — each
    // inner pass still runs its full length — so such a sweep is often flat (a 64³ GEMM on
    // `tiny` over i and j: 2.20–2.22 ms at every point; over j and k: 1.05–2.20 ms).
    for (size_t i = k.loops.size(); i-- > 0 && picked.size() < 2;)
      if (sweepable(k.loops[i])) picked.push_back(int(i));
    if (picked.size() < 2) {
      r.error = "autotune: kernel " + k.name + " needs two serial loops of at least " +
                std::to_string(kMinSweepExtent) + " iterations to sweep; its loops are " +
                loop_list(k);
      return r;
    }
  }
  std::sort(picked.begin(), picked.end());
  r.a = k.loops[size_t(picked[0])].name;
  r.b = k.loops[size_t(picked[1])].name;
  r.extent_a = k.loops[size_t(picked[0])].extent;
  r.extent_b = k.loops[size_t(picked[1])].extent;
  return r;
}

// [SECTION] Grids and ranking

const AutotunePoint* AutotuneGrid::find(int64_t tile_a, int64_t tile_b) const {
  for (const AutotunePoint& p : points)
    if (p.tile_a == tile_a && p.tile_b == tile_b) return &p;
  return nullptr;
}

std::string AutotuneGrid::point_name(const AutotunePoint& p) const {
  return "tile(" + loop_a + ", " + std::to_string(p.tile_a) + "), tile(" + loop_b + ", " +
         std::to_string(p.tile_b) + ")";
}

AutotuneHint autotune_flat_hint(const AutotuneGrid& g, const schedule::Kernel& k) {
  AutotuneHint h;
  const auto [lo, hi] = g.time_range();
  const auto ok = std::count_if(g.points.begin(), g.points.end(),
                                [](const AutotunePoint& p) { return p.ok(); });
  if (ok < 2 || !(lo > 0) || hi > lo * (1 + kAutotuneNearlyFlat)) return h;
  const int ia = k.find_loop(g.loop_a), ib = k.find_loop(g.loop_b);
  if (ia < 0 || ib < 0) return h;  // the kernel changed since the sweep
  int inner = -1;
  for (int i = int(k.loops.size()) - 1; i >= 0 && inner < 0; --i)
    if (sweepable(k.loops[size_t(i)])) inner = i;
  if (inner < 0 || inner == ia || inner == ib) return h;
  const int near = std::max(ia, ib);
  const schedule::Loop& in = k.loops[size_t(inner)];
  h.a = k.loops[size_t(std::min(near, inner))].name;
  h.b = k.loops[size_t(std::max(near, inner))].name;
  const double spread = (hi / lo - 1) * 100;
  std::ostringstream t;
  t.precision(spread < 0.1 ? 1 : 2);
  t << "Every point is within " << spread << "% of the fastest. Tiles of " << g.loop_a << " and "
    << g.loop_b << " leave the innermost loop, " << in.name << " (" << in.extent
    << " iterations), whole: each pass of it still walks its full length, so no tile of these "
       "two loops changes which level serves that walk on this machine. Sweep a pair that cuts "
    << in.name << ": " << h.a << " and " << h.b << ".";
  h.text = t.str();
  return h;
}

int autotune_best(const std::vector<AutotunePoint>& points) {
  int best = -1;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].ok() && (best < 0 || points[i].seconds < points[size_t(best)].seconds))
      best = int(i);
  return best;
}

namespace {

// 1-based ranks, ties sharing the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double avg = (double(i) + double(j)) / 2.0 + 1.0;
    for (size_t t = i; t <= j; ++t) rank[order[t]] = avg;
    i = j + 1;
  }
  return rank;
}

}  // namespace

double spearman_rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.size() != b.size() || a.size() < 3) return nan;
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = double(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa <= 0 || sbb <= 0) return nan;
  return sab / std::sqrt(saa * sbb);
}

AutotuneAgreement autotune_agreement(const AutotuneGrid& sim, const AutotuneGrid& hw) {
  AutotuneAgreement r;
  r.spearman = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> s, h;
  std::vector<const AutotunePoint*> hw_points;
  for (const AutotunePoint& hp : hw.points) {
    const AutotunePoint* sp = sim.find(hp.tile_a, hp.tile_b);
    if (!hp.ok() || !sp || !sp->ok()) continue;
    s.push_back(sp->seconds);
    h.push_back(hp.seconds);
    hw_points.push_back(&hp);
  }
  r.common = s.size();
  if (hw.best >= 0) r.hw_best = hw.point_name(hw.points[size_t(hw.best)]);
  if (s.empty()) return r;
  r.spearman = spearman_rank_correlation(s, h);
  const size_t sim_best = size_t(std::min_element(s.begin(), s.end()) - s.begin());
  r.sim_best = hw.point_name(*hw_points[sim_best]);
  r.sim_best_hw_rank =
      1 + int(std::count_if(h.begin(), h.end(), [&](double t) { return t < h[sim_best]; }));
  return r;
}

// [SECTION] Sweeps

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

AutotuneGrid empty_grid(AutotuneMode mode, const schedule::Program& base,
                        const AutotuneLoops& loops, int max_per_axis) {
  if (!loops.error.empty()) throw std::invalid_argument(loops.error);
  if (base.kernels.empty()) throw std::invalid_argument("autotune: the program has no kernel");
  AutotuneGrid g;
  g.mode = mode;
  g.kernel = base.kernels[size_t(base.current)].name;
  g.loop_a = loops.a;
  g.loop_b = loops.b;
  g.sizes_a = autotune_tile_sizes(loops.extent_a, max_per_axis);
  g.sizes_b = autotune_tile_sizes(loops.extent_b, max_per_axis);
  for (int64_t ta : g.sizes_a)
    for (int64_t tb : g.sizes_b) {
      AutotunePoint p;
      p.tile_a = ta;
      p.tile_b = tb;
      p.spec = autotune_step(loops.a, loops.b, ta, tb);
      p.step = schedule::to_string(schedule::StepSpec{p.spec});
      g.points.push_back(p);
    }
  return g;
}

// Applies the point's step to a copy of `base`; on refusal marks the point and returns nullopt.
std::optional<schedule::Program> apply_point(const schedule::Program& base, AutotunePoint& p,
                                             const schedule::Target& target) {
  schedule::StepResult r;
  try {
    r = schedule::apply_step(base, schedule::StepSpec{p.spec}, target);
  } catch (const std::exception& e) {
    r.ok = false;
    r.explanation = e.what();
  }
  if (!r.ok) {
    p.refused = true;
    p.why = r.explanation;
    return std::nullopt;
  }
  return std::move(r.program);
}

std::string binding_text(const predict::Roofline& r) {
  return "bound by " + r.binding;
}

std::string remaining_text(double elapsed, size_t done, size_t total) {
  if (done == 0) return "estimating time left";
  const double left = elapsed / double(done) * double(total - done);
  std::ostringstream s;
  s.precision(left < 10 ? 1 : 0);
  s << std::fixed << "about " << left << " s left";
  return s.str();
}

}  // namespace

int autotune_threads(const predict::Machine& machine) {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  uint64_t lines = 0;
  for (const memory::CacheConfig& c : machine.levels) lines += c.lines();
  const double per_thread = 32.0 * double(lines);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0 || per_thread <= 0) return cores;
  const double half = 0.5 * double(pages) * double(page);
  return std::clamp(int(half / per_thread), 1, cores);
}

namespace {

// What one point of a simulator sweep adds to the grid's notes, merged in point order afterwards
// so the notes do not depend on which worker finished first.
struct PointNotes {
  std::vector<std::string> analytic;  // the analytic model's notes for this point
  bool traced = false;                // the point was simulated from its trace
};

// Predicts one point (its prediction fields, and what it has to say in `notes`).
void predict_point(const schedule::Program& base, const predict::Machine& m, JobProgress& progress,
                   AutotunePoint& p, PointNotes& notes) {
  // Legal on the machine predicted on: a tile that needs more than its registers is refused.
  std::optional<schedule::Program> prog = apply_point(base, p, predict::target_for(m));
  if (!prog) return;
  const schedule::Kernel& k = prog->kernels[size_t(prog->current)];
  std::optional<predict::Roofline> roof;
  // The analytic model describes CPU loop nests and answers in a moment; GPU traces (warps,
  // sectors) and nests too large to enumerate go through the trace simulation instead.
  predict::RunOptions quick;
  quick.simulate = false;
  predict::KernelRun run = predict::simulate_kernel(k, *prog->graph, m, quick);
  if (run.analytic_roofline) {
    roof = *run.analytic_roofline;
    p.detail = binding_text(*roof) + " (analytic model)";
    notes.analytic = run.analytic->notes;
  } else {
    predict::RunOptions full;
    full.analytic = false;
    full.wrap = [&](memory::AccessSink& next) {
      // Stops the trace (by throwing) when the user cancels.
      return std::make_unique<memory::CancelSink<JobCancelled>>(next, progress.cancel);
    };
    run = predict::simulate_kernel(k, *prog->graph, m, full);
    roof = run.roofline;
    p.detail = binding_text(*roof) + " (trace simulation)";
    notes.traced = true;
  }
  if (roof->seconds > 0) {
    p.seconds = roof->seconds;
  } else {
    p.failed = true;
    p.why = "machine " + m.name + " gives no bandwidth or peak to predict a time";
  }
}

}  // namespace

AutotuneGrid autotune_sweep_simulator(const schedule::Program& base, const AutotuneLoops& loops,
                                      const predict::Machine& machine, JobProgress& progress,
                                      int max_per_axis, int threads) {
  const auto t0 = Clock::now();
  AutotuneGrid g = empty_grid(AutotuneMode::Simulator, base, loops, max_per_axis);
  g.machine = machine.name;
  const bool gpu = machine.kind == "gpu";
  // The host preset reads its caches and peak from the OS but cannot know its memory bandwidth,
  // and its peak counts every core while the generated kernel runs on one: without a memory bound
  // every tiling would predict the same compute time. Measure this CPU's single-thread peaks
  // instead, as the "Run on this CPU" panel does.
  predict::Machine m = machine;
  if (!gpu && m.name.rfind("host", 0) == 0 && m.memory.bandwidth_bytes_per_s <= 0) {
    progress.set_phase("measuring this CPU's single-thread peaks");
    const kernels::Peaks pk = kernels::measure_peaks(true);
    if (progress.cancel) throw JobCancelled();
    m = predict::with_measured_peaks(std::move(m), pk.gflops_fp32 * 1e9, pk.gbps * 1e9, 0, pk.source);
    std::ostringstream note;
    note.precision(3);
    note << m.name << " states no memory bandwidth: using this CPU's measured single-thread peaks ("
         << pk.gflops_fp32 << " GFLOP/s, " << pk.gbps << " GB/s)";
    g.notes.push_back(note.str());
  }

  // [SECTION] The points, spread over worker threads
  // Each worker takes the next unclaimed point; points are written in place (one per worker at a
  // time), and the first error or cancel stops the others at their next point.
  const size_t n = g.points.size();
  const int workers = int(std::min<size_t>(n, size_t(threads > 0 ? threads : autotune_threads(m))));
  std::vector<PointNotes> notes(n);
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto work = [&] {
    for (;;) {
      if (stop || progress.cancel) return;
      const size_t i = next.fetch_add(1);
      if (i >= n) return;
      AutotunePoint& p = g.points[i];
      try {
        progress.set_phase(std::to_string(done.load()) + " of " + std::to_string(n) +
                           " points done (" + std::to_string(workers) +
                           (workers == 1 ? " thread" : " threads") + "); now " + p.step);
        predict_point(base, m, progress, p, notes[i]);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
        return;
      }
      progress.fraction = double(done.fetch_add(1) + 1) / double(n);
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  if (error) std::rethrow_exception(error);
  if (progress.cancel) throw JobCancelled();
  progress.fraction = 1.0;  // a worker may have stored an older count after the last one

  // Notes in point order, each once: what a one-thread sweep would have collected.
  bool noted_trace = false;
  for (const PointNotes& pn : notes) {
    for (const std::string& note : pn.analytic)
      if (std::find(g.notes.begin(), g.notes.end(), note) == g.notes.end()) g.notes.push_back(note);
    if (pn.traced && !noted_trace) {
      g.notes.push_back(gpu ? "GPU machine: times come from the trace simulation"
                            : "some points were too large for the analytic model and were "
                              "simulated from their trace");
      noted_trace = true;
    }
  }
  g.best = autotune_best(g.points);
  g.wall_seconds = seconds_since(t0);
  return g;
}

AutotuneGrid autotune_sweep_cpu(const schedule::Program& base, const AutotuneLoops& loops,
                                JobProgress& progress, int max_per_axis) {
  const auto t0 = Clock::now();
  AutotuneGrid g = empty_grid(AutotuneMode::Cpu, base, loops, max_per_axis);
  g.machine = "this CPU";
  const schedule::Kernel& base_kernel = base.kernels[size_t(base.current)];
  // Inputs as run_kernel_on_cpu makes them (same seeds), outputs poisoned; the reference is the
  // interpreter on the untouched schedule, computed once: tiling changes no tensor.
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < base_kernel.tensors.size(); ++i) {
    const schedule::KernelTensor& t = base_kernel.tensors[i];
    std::vector<float> b(size_t(std::max<int64_t>(t.alloc_elems(), 1)));
    if (t.role == schedule::TensorRole::Input)
      kernels::fill_uniform(b.data(), b.size(), 17u + unsigned(i));
    else
      kernels::poison(b.data(), b.size());
    inputs.push_back(std::move(b));
  }
  std::vector<std::vector<float>> reference;
  size_t done = 0;
  for (size_t i = 0; i < g.points.size(); ++i) {
    if (progress.cancel) throw JobCancelled();
    AutotunePoint& p = g.points[i];
    const std::string head = "point " + std::to_string(i + 1) + " of " +
                             std::to_string(g.points.size()) + " (" +
                             remaining_text(seconds_since(t0), done, g.points.size()) + "): ";
    std::optional<schedule::Program> prog = apply_point(base, p, schedule::Target{});
    if (prog) {
      const schedule::Kernel& k = prog->kernels[size_t(prog->current)];
      bool same_tensors = k.tensors.size() == base_kernel.tensors.size();
      for (size_t t = 0; same_tensors && t < k.tensors.size(); ++t)
        same_tensors = k.tensors[t].alloc_elems() == base_kernel.tensors[t].alloc_elems();
      if (!same_tensors) {
        p.failed = true;
        p.why = "the tiled kernel's buffers differ from the schedule's; cannot verify it";
      }
      if (!p.failed && reference.empty()) {
        progress.set_phase(head + "running the reference interpreter");
        reference = inputs;
        schedule::interpret_kernel(base_kernel, reference);
        if (progress.cancel) throw JobCancelled();
      }
      if (!p.failed) {
        progress.set_phase(head + "compiling " + p.step);
        const kernels::JitResult jit = kernels::jit_compile(schedule::emit_cpp(k));
        if (progress.cancel) throw JobCancelled();
        if (!jit.ok) {
          p.failed = true;
          p.why = "compile failed: " + jit.error;
        } else {
          progress.set_phase(head + "verifying and timing " + p.step);
          std::vector<std::vector<float>> buffers = inputs;
          std::vector<float*> args;
          for (auto& b : buffers) args.push_back(b.data());
          const kernels::JitKernelFn fn = jit.module->kernel();
          fn(args.data());
          double err = 0;
          for (size_t t = 0; t < k.tensors.size(); ++t)
            if (k.tensors[t].role == schedule::TensorRole::Output)
              err = std::max(err, kernels::relative_error(buffers[t].data(), reference[t].data(),
                                                          buffers[t].size()));
          if (err > kVerifyTolerance) {
            p.failed = true;
            std::ostringstream s;
            s << "not verified: relative error " << err << " against the interpreter";
            p.why = s.str();
          } else {
            kernels::TimingOptions to;
            to.repeats = 5;
            to.max_seconds = 1.0;
            const kernels::Timing t = kernels::time_runs([&](int) { fn(args.data()); }, to);
            p.seconds = t.median_ms / 1000.0;
            p.min_seconds = t.min_ms / 1000.0;
            std::ostringstream d;
            d.precision(3);
            d << "verified, median of " << t.repeats << " runs; fastest " << t.min_ms
              << " ms, median " << t.median_ms << " ms";
            p.detail = d.str();
          }
        }
      }
    }
    ++done;
    progress.fraction = double(i + 1) / double(g.points.size());
  }
  g.best = autotune_best(g.points);
  g.wall_seconds = seconds_since(t0);
  return g;
}

PredictionMachine autotune_prediction_machine(const std::string& name,
                                              const predict::Machine& chosen) {
  PredictionMachine r{chosen, {}};
  if (name != "host") return r;
  // "host" knows its caches but no bandwidths, so only compute and DRAM would bound the
  // prediction and every tiling whose data fits the caches would look alike. When
  // `tilescope-cli probe` has measured this computer, predict with that machine instead.
  const std::vector<std::string> presets = predict::preset_names();
  if (std::find(presets.begin(), presets.end(), "host-measured") == presets.end()) return r;
  try {
    r.machine = predict::load_machine("host-measured");
    r.note =
        "host states no bandwidths: predicted with host-measured (this computer, measured "
        "by tilescope-cli probe) instead";
  } catch (const std::exception& e) {
    r.note = std::string("host-measured could not be read: ") + e.what();
  }
  return r;
}

// [SECTION] Job state

void autotune_poll(AutotuneState& s) {
  std::optional<AutotuneGrid> grid;
  std::string error;
  if (s.sim_job.poll(grid, error)) {
    if (grid)
      s.sim_cache[s.sim_job.key()] = std::move(*grid);
    else
      s.sim_errors[s.sim_job.key()] = error;
  }
  grid.reset();
  if (s.cpu_job.poll(grid, error)) {
    if (grid)
      s.cpu_cache[s.cpu_job.key()] = std::move(*grid);
    else
      s.cpu_errors[s.cpu_job.key()] = error;
  }
}

void autotune_cancel(AutotuneState& s) {
  s.sim_job.cancel();
  s.cpu_job.cancel();
}

}  // namespace tilescope::core
