// End-to-end tests of inputs the CLI used to accept wrongly or run for hours on: a directory as a
// trace, tensor ranges that wrap past 2^64, a --verify that needs more memory than there is, and
// a simulation too long to wait for. Each is refused before the work starts, saying what and how
// big. Nothing here is timed (ASan runs take 7× longer); the work done is read from the output.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using tilescope::test::SplitResult;

// tilescope-cli ARGS with `env` in front; a hang ends at 600 s with exit code 124.
struct Timed {
  SplitResult r;
};

Timed run_cli(const std::string& args, const std::string& env = "") {
  Timed t;
  t.r = tilescope::test::run_command_split((env.empty() ? "" : env + " ") + "timeout 600 '" +
                                           TILESCOPE_CLI_PATH + "' " + args);
  return t;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("simulate --trace on a directory is an error, not an empty trace") {
  // A directory opens as a stream with nothing in it: "0 accesses" and exit 0 before.
  const Timed t = run_cli("simulate --trace '" + tilescope::test::scratch_dir().string() + "'");
  INFO(t.r.out, t.r.err);
  CHECK(t.r.code == 1);
  CHECK(has(t.r.err, "is a directory"));
  CHECK(t.r.out.empty());
}

TEST_CASE("simulate --tensor refuses a range that wraps past 2^64") {
  // 0xffffffffffffff00 + 0x200 ends at 2^64 + 0x100: it would cover 0..0x100 and B at 0x10.
  const auto trace = tilescope::test::write_scratch_file("wrap.din", "0 10 4\n0 20 4\n");
  const Timed t = run_cli("simulate --trace '" + trace.string() +
                          "' --tensor A=0xffffffffffffff00+0x200 --tensor B=0x10+16");
  INFO(t.r.out, t.r.err);
  CHECK(t.r.code == 1);
  CHECK(has(t.r.err, "A=0xffffffffffffff00+0x200"));
  CHECK(has(t.r.err, "past the top of the 64-bit address space"));
  // Ending just below 2^64 is fine (the end, base + size, must itself be an address).
  const Timed ok = run_cli("simulate --trace '" + trace.string() +
                           "' --tensor A=0xffffffffffffff00+0xff --tensor B=0x10+16");
  CHECK(ok.r.code == 0);
}

TEST_CASE(
    "schedule --verify of a 16384² matmul is refused before it runs, naming the bytes needed") {
  // Hand count of what verify holds for y = x @ W with n = 16384 (n² = 2^28 elements each):
  // feeds x, W in double (8 B) and float (4 B): 2·12·n²; the reference's double for x, W, y:
  // 3·8·n²; the interpreter's float y: 4·n²; the kernel's packed x, W, y twice over: 3·8·n².
  // (24 + 24 + 4 + 24)·2^28 = 76·2^28 bytes.
  const uint64_t need = 76ull << 28;
  const auto model = tilescope::test::write_scratch_file(
      "big_matmul.model", "x: [16384, 16384]\nW: [16384, 16384] weight\ny = x @ W\n");
  const Timed t =
      run_cli("schedule '" + model.string() + "' --verify --quiet", "TILESCOPE_MEMORY_LIMIT=4G");
  INFO(t.r.out, t.r.err);
  CHECK(t.r.code == 1);
  CHECK(has(t.r.err, std::to_string(need) + " bytes"));
  CHECK(has(t.r.err, "TILESCOPE_MEMORY_LIMIT=4G"));
  CHECK_FALSE(has(t.r.out, "verify"));  // no kernel was run or compared
}

TEST_CASE(
    "simulate of the shipped conv_block on tiny: sampled to a few percent, or refused exactly") {
  // The current kernel is conv0: 8 images × 64 output channels × 56 × 56 pixels, each the sum
  // of 64 channels × 3 × 3 taps. Reduce reads x and w1 once per tap, the epilogue writes y once:
  // 2 · 8·64·56·56·64·3·3 + 8·64·56·56 = 1851293696 accesses, more than the default limit of
  // 5·10^8 for an exact run.
  const uint64_t accesses = 2ull * 8 * 64 * 56 * 56 * 64 * 3 * 3 + 8ull * 64 * 56 * 56;
  const Timed exact =
      run_cli("simulate assets/models/conv_block.model --machine tiny --sample off");
  INFO(exact.r.out, exact.r.err);
  CHECK(exact.r.code == 1);
  CHECK(has(exact.r.err, "= " + std::to_string(accesses) + ")"));
  CHECK(has(exact.r.err, "--max-accesses"));
  CHECK(has(exact.r.err, "misses(L1)"));       // the analytic model's answer, offered instead
  CHECK_FALSE(has(exact.r.out, "CPU trace"));  // refused before any access was simulated
  // By default a kernel past 10^8 accesses is sampled, and says so.
  const Timed sampled = run_cli("simulate assets/models/conv_block.model --machine tiny");
  INFO(sampled.r.out, sampled.r.err);
  CHECK(sampled.r.code == 0);
  CHECK(has(sampled.r.err, "sampling about"));
  CHECK(has(sampled.r.out, "sampled: "));
  CHECK(has(sampled.r.out, "counters are estimates"));
  // The work is bounded by what is walked: about 6·10^7 of 1.85·10^9 accesses, some 3 %.
  const std::string walked = "% of the trace walked";
  const size_t at = sampled.r.out.find(walked);
  REQUIRE(at != std::string::npos);
  const size_t from = sampled.r.out.rfind(' ', at) + 1;
  const double percent = std::strtod(sampled.r.out.substr(from, at - from).c_str(), nullptr);
  CHECK(percent > 0.5);
  CHECK(percent < 10);
}

TEST_CASE("simulate refuses a model whose per-line tables exceed the memory budget") {
  // A 1 MiB budget is below the fixed 64 MiB the estimate starts from, so any model is refused.
  const Timed t = run_cli("simulate default --machine tiny", "TILESCOPE_MEMORY_LIMIT=1M");
  INFO(t.r.out, t.r.err);
  CHECK(t.r.code == 1);
  CHECK(has(t.r.err, "of memory, more than the 1 MiB (1048576 bytes) available"));
}

TEST_CASE("simulate reports progress on stderr when it is a terminal, and not otherwise") {
  const std::string cli = std::string("'") + TILESCOPE_CLI_PATH + "'";
  const auto model = tilescope::test::write_scratch_file(
      "progress.model",
      "x: [300, 300]\nW: [300, 300] weight\ny = x @ W\n");  // ~2 s (54 M accesses)
  // `script` gives the command a terminal; progress lines start with a carriage return.
  const auto tty =
      tilescope::test::run_command("script -qec \"" + cli + " simulate '" + model.string() +
                                   "' --machine tiny >/dev/null\" "
                                   "/dev/null");
  INFO(tty.out);
  if (tty.code != 0) {
    MESSAGE("skipped: script(1) could not run the command in a terminal");
    return;
  }
  CHECK(has(tty.out, "simulate: kernel"));
  const Timed piped = run_cli("simulate '" + model.string() + "' --machine tiny");
  CHECK(piped.r.code == 0);
  CHECK_FALSE(has(piped.r.err, "\r"));
}
