// End-to-end tests of `tilescope-cli run --gpu` and `bench --counters/--predict/--show` on a
// machine without a GPU: the prediction is printed, the GPU step says why it cannot run and the
// command fails; a counters recording prints its table; misuse is refused with a reason.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <string>

namespace {

using tilescope::test::SplitResult;

SplitResult run_cli(const std::string& args) {
  return tilescope::test::run_command_split("timeout 300 '" + std::string(TILESCOPE_CLI_PATH) +
                                            "' " + args);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("run --gpu without a GPU: the prediction, then why the GPU step cannot run, exit 1") {
  const std::string file =
      tilescope::test::write_scratch_file(
          "gpu_run.model",
          "x: [64, 32]\nW: [64, 32] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n")
          .string();
  const SplitResult r = run_cli("run --gpu '" + file +
                                "' --apply 'fuse(matmul0, add0, relu0); tile(i, 32); tile(j, 32); "
                                "reorder(i.o, j.o, i.i, j.i); bind(i.o, block.y); "
                                "bind(j.o, block.x)'");
  CHECK(r.code != 0);
  CHECK(has(r.out, "kernel matmul0+add0+relu0"));
  CHECK(has(r.out, "prediction on h200"));
  // Either this build has CUDA and the bench finds no device, or it has none.
  CHECK((has(r.err, "no usable GPU") || has(r.err, "built without CUDA")));
}

TEST_CASE("run: a refused step and a missing --gpu are errors with reasons") {
  const std::string file = tilescope::test::write_scratch_file(
                               "gpu_run2.model", "x: [8, 8]\nW: [8, 8] weight\ny = x @ W\n")
                               .string();
  SplitResult r = run_cli("run --gpu '" + file + "' --apply 'tile(q, 4)'");
  CHECK(r.code != 0);
  CHECK(has(r.err, "q"));
  r = run_cli("run '" + file + "'");
  CHECK(r.code != 0);
  CHECK(has(r.err, "only --gpu"));
}

TEST_CASE("bench --show prints a counters recording; --counters needs --gpu") {
  SplitResult r = run_cli("bench --show assets/recorded/gpu-h200-counters-2026-12-02.json");
  CHECK(r.code == 0);
  CHECK(has(r.out, "Hardware counters"));
  CHECK(has(r.out, "v4 1d_blocktiling"));
  r = run_cli("bench --counters");
  CHECK(r.code != 0);
  CHECK(has(r.err, "--counters goes with --gpu"));
  r = run_cli("bench --predict assets/recorded/gpu-h200-2026-11-29.json");
  CHECK(r.code != 0);
  CHECK(has(r.err, "not a counters report"));
}
