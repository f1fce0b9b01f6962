// The shared pipeline (sim/predict/simulate.h): the machine as the schedule's legality target, one
// kernel traced, modelled and bounded, and a one-kernel program giving the same counters as that
// kernel. Expected values come from hand counts, the machine files' own figures, or a Hierarchy
// driven directly by the trace walker (the reference the pipeline must not drift from).
#include "sim/lang/parser.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

namespace predict = tilescope::predict;
namespace schedule = tilescope::schedule;
namespace graph = tilescope::graph;
namespace lang = tilescope::lang;
namespace memory = tilescope::memory;

namespace {

// A GPU with 48 KiB of shared memory per block (the default limit of every CUDA GPU without the
// opt-in), 96 KiB per SM, everything else as small as a machine file allows.
const char* kSmallGpu = R"(name = gpu48
kind = gpu
sms = 4
clock = 1 GHz
peak fp32 simt = 1 TFLOP/s
smem_per_block = 48 KiB
[level L1]
size = 16 KiB
line = 128 B
sector = 32 B
ways = 4
write = through
write_allocate = no
[level L2]
size = 1 MiB
line = 128 B
sector = 32 B
ways = 16
[memory HBM]
size = 16 GiB
bandwidth = 1 TB/s
[scratchpad shared]
size = 96 KiB
banks = 32
bank_width = 4 B
warp_size = 32
)";

// y = x @ W.T with 256 × 256 operands, blocks of 64 × 64 outputs, the whole k range (256) at once:
// the staged tile of x holds 64 × 256 fp32 = 65536 B = 64 KiB.
const char* kGemm = "x: [256, 256]\nW: [256, 256] weight\ny = x @ W.T\n";
const char* kSteps64K =
    "tile(i, 64); tile(j, 64); tile(k, 256); reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
    "bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 4); tile(j.i, 4); "
    "reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x)";
const char* kStage = "stage(x, shared, at=k.o)";

schedule::Program lowered(const char* text) {
  return schedule::lower_graph(
      std::make_shared<const graph::Graph>(lang::parse_model(text, "test.model")));
}

}  // namespace

TEST_CASE("target_for: the machine's limits become the schedule's legality target") {
  const predict::Machine h200 = predict::load_machine("h200");
  const schedule::Target t = predict::target_for(h200);
  CHECK(t.smem_bytes_per_block == 227 * 1024);  // the file's smem_per_block (CUDA opt-in limit)
  CHECK(t.smem_bytes_per_sm == 228 * 1024);     // its [scratchpad] size
  CHECK(t.warp_size == 32);
  CHECK(t.smem_banks == 32);
  CHECK(t.sm_count == 132);
  CHECK(t.register_bytes_per_thread == 255 * 4);
  CHECK(t.max_threads_per_block == 1024);
  CHECK(t.gpu_l1_bytes == 28 * 1024);  // the file's [level L1] size: one SM's L1
  CHECK(t.machine == "h200");

  const schedule::Target tiny = predict::target_for(predict::load_machine("tiny"));
  CHECK(tiny.smem_bytes_per_block == 0);  // a CPU machine has no shared memory
  CHECK(tiny.cpu_l1_bytes == 1024);       // tiny's 1 KiB L1
  CHECK(tiny.gpu_l1_bytes == 0);
  CHECK(tiny.cpu_vector_bytes == 32);     // vector = 32 B
  CHECK(tiny.cpu_vector_registers == 16);

  const schedule::Target small = predict::target_for(predict::parse_machine(kSmallGpu, "gpu48"));
  CHECK(small.smem_bytes_per_block == 48 * 1024);
  CHECK(small.smem_bytes_per_sm == 96 * 1024);
  CHECK(small.sm_count == 4);
}

TEST_CASE("machine files: smem_per_block needs a scratchpad and fits in it") {
  CHECK_THROWS_WITH_AS(
      predict::parse_machine("name = c\nsmem_per_block = 1 KiB\n[level L1]\nsize = "
                           "1 KiB\nline = 64 B\nways = 2\n[memory D]\nsize = 1 GiB\n",
                           "c.machine"),
      doctest::Contains("c.machine:2"), predict::MachineError);
  std::string big = kSmallGpu;
  big.replace(big.find("smem_per_block = 48 KiB"), 23, "smem_per_block = 200 KiB");
  CHECK_THROWS_WITH_AS(predict::parse_machine(big, "big.machine"),
                       doctest::Contains("more than the scratchpad"), predict::MachineError);
}

TEST_CASE("staging a 64 KiB tile: refused with 48 KiB of shared memory, accepted on the H200") {
  const schedule::Program base = lowered(kGemm);
  const schedule::Target h200 = predict::target_for(predict::load_machine("h200"));
  const schedule::Target small = predict::target_for(predict::parse_machine(kSmallGpu, "gpu48"));
  schedule::History h = schedule::History::replay(base, kSteps64K, h200);
  const schedule::TransformStep stage = schedule::parse_steps(kStage).at(0);

  const schedule::StepResult on_small = schedule::apply_step(h.current(), stage, small);
  CHECK_FALSE(on_small.ok);
  CHECK(on_small.explanation.find("64 KiB") != std::string::npos);
  CHECK(on_small.explanation.find("48 KiB") != std::string::npos);
  // On a CPU machine there is no shared memory at all.
  const schedule::StepResult on_tiny =
      schedule::apply_step(h.current(), stage, predict::target_for(predict::load_machine("tiny")));
  CHECK_FALSE(on_tiny.ok);

  REQUIRE(h.apply(stage).ok);
  // The history made on the H200 is kept whole; re-checked for the small GPU, its last step is
  // the one refused.
  const size_t n = h.size();
  const std::optional<schedule::StepRefusal> r = h.first_refused(small);
  REQUIRE(r);
  CHECK(r->index == n - 1);
  CHECK(r->step == "stage(x, shared, at=k.o)");
  CHECK(r->message.find("48 KiB") != std::string::npos);
  CHECK_FALSE(h.first_refused(h200));
  CHECK(h.size() == n);
}

TEST_CASE("simulate_kernel: the same counters as the walker driving a hierarchy directly") {
  const predict::Machine tiny = predict::load_machine("tiny");
  schedule::History h =
      schedule::History::replay(lowered("A: [32, 32]\nB: [32, 32]\nC = A @ B\n"), "tile(k, 8)");
  const schedule::Program& p = h.current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));

  const predict::KernelRun run = predict::simulate_kernel(k, *p.graph, tiny);
  // Reference: the trace walker into a Hierarchy of the machine, outputs written back.
  memory::Hierarchy ref(tiny.hierarchy());
  schedule::TraceOptions o;
  o.acc_tensor = run.trace.acc_tensor;
  schedule::trace_kernel(k, ref, o);
  ref.finish();
  ref.write_back_all();
  REQUIRE(run.simulated());
  for (int l = 0; l <= ref.level_count(); ++l) {
    CAPTURE(l);
    CHECK(run.hierarchy->counters(l).misses == ref.counters(l).misses);
    CHECK(run.hierarchy->counters(l).read_bytes == ref.counters(l).read_bytes);
    CHECK(run.hierarchy->counters(l).write_bytes == ref.counters(l).write_bytes);
  }
  // 32³ multiply-adds, two FLOPs each.
  CHECK(run.flops == 2.0 * 32 * 32 * 32);
  // The roofline's DRAM bound is main-memory bytes over tiny's 8 GB/s.
  const memory::Counters d = ref.counters(ref.level_count());
  bool found = false;
  for (const predict::RooflineBound& b : run.roofline.bounds)
    if (b.name == "DRAM") {
      found = true;
      CHECK(b.seconds == doctest::Approx(double(d.read_bytes + d.write_bytes) / 8e9));
    }
  CHECK(found);
  CHECK(run.dram_bytes() == d.read_bytes + d.write_bytes);
  // A CPU nest: the analytic model ran beside it.
  CHECK(run.analytic);
  CHECK(run.analytic_roofline);
  CHECK(run.prediction() == &run.roofline);

  // Analytic only: no trace, and the analytic roofline is the prediction.
  predict::RunOptions quick;
  quick.simulate = false;
  const predict::KernelRun a = predict::simulate_kernel(k, *p.graph, tiny, quick);
  CHECK_FALSE(a.simulated());
  REQUIRE(a.prediction());
  CHECK(a.prediction()->seconds == doctest::Approx(run.analytic_roofline->seconds));
}

TEST_CASE("run_program of a one-kernel program counts what simulate_kernel counts") {
  for (const char* machine : {"tiny", "h200"}) {
    CAPTURE(machine);
    const predict::Machine m = predict::load_machine(machine);
    schedule::History h = schedule::History::replay(
        lowered("x: [64, 96]\nW: [48, 96] weight\nb: [48] weight\ny = relu(x @ W.T + b)\n"),
        std::string(machine) == "h200"
            ? "fuse(matmul0, add0, relu0); tile(i, 16); tile(j, 16); reorder(i.o, j.o, i.i, j.i, "
              "k); "
              "bind(i.o, block.y); "
              "bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"
            : "fuse(matmul0, add0, relu0); tile(k, 16)",
        predict::target_for(m));
    const schedule::Program& p = h.current();
    REQUIRE(p.kernels.size() == 1);
    const predict::KernelRun one = predict::simulate_kernel(p.kernels[0], *p.graph, m);
    const predict::ProgramRun all = predict::run_program(p, m);
    for (int l = 0; l <= one.hierarchy->level_count(); ++l) {
      CAPTURE(l);
      CHECK(all.hierarchy->counters(l).accesses == one.hierarchy->counters(l).accesses);
      CHECK(all.hierarchy->counters(l).misses == one.hierarchy->counters(l).misses);
      CHECK(all.hierarchy->counters(l).write_bytes == one.hierarchy->counters(l).write_bytes);
    }
    CHECK(all.flops == one.flops);
  }
}

TEST_CASE("trace options and peaks come from the machine") {
  const predict::Machine h200 = predict::load_machine("h200");
  const schedule::TraceOptions o = predict::trace_options_for(h200);
  CHECK(o.gpu);
  CHECK(o.resident_blocks == 132);
  CHECK(o.warp_size == 32);
  CHECK(o.sector_bytes == 32);
  CHECK(predict::fp32_peak(h200) == doctest::Approx(66.9e12));
  CHECK_FALSE(predict::trace_options_for(predict::load_machine("tiny")).gpu);

  const predict::Machine measured =
      predict::with_measured_peaks(predict::load_machine("tiny"), 5e9, 3e9, 2e-9, "measured here");
  CHECK(measured.memory.bandwidth_bytes_per_s == 3e9);
  CHECK(predict::fp32_peak(measured) == 5e9);
  CHECK(measured.dependent_fma_s == 2e-9);
  CHECK(measured.notes.back().find("measured here") != std::string::npos);
}

TEST_CASE("RunOptions::watch: the counters so far, growing, never past the run's own") {
  const predict::Machine tiny = predict::load_machine("tiny");
  schedule::History h =
      schedule::History::replay(lowered("A: [64, 64]\nB: [64, 64]\nC = A @ B\n"), "tile(k, 8)");
  const schedule::Program& p = h.current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  std::vector<uint64_t> seen, misses;
  predict::RunOptions o;
  o.watch_seconds = 0;  // after every batch the walker hands over
  o.watch = [&](const memory::Hierarchy& hier) {
    seen.push_back(hier.trace_accesses());
    misses.push_back(hier.counters(0).misses);
  };
  const predict::KernelRun run = predict::simulate_kernel(k, *p.graph, tiny, o);
  // 64³ multiply-adds, two loads each, plus 64² stores: 528384 accesses in batches of ~4096.
  const uint64_t total = run.hierarchy->trace_accesses();
  CHECK(total == 2 * 64 * 64 * 64 + 64 * 64);
  REQUIRE(seen.size() >= total / 8192);
  for (size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i] > seen[i - 1]);
    CHECK(misses[i] >= misses[i - 1]);
  }
  CHECK(seen.back() <= total);
  CHECK(misses.back() <= run.hierarchy->counters(0).misses);

  // A sampled run's counters are estimates only at its end: it is not watched.
  predict::RunOptions s = o;
  s.sample = true;
  seen.clear();
  (void)predict::simulate_kernel(k, *p.graph, tiny, s);
  CHECK(seen.empty());
}
