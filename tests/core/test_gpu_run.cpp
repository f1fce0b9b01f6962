// "Run on this GPU" without a GPU (app/core/gpu_run.h): the GPU bench replaced by small shell
// scripts ($TILESCOPE_GPU_BENCH) that answer as the real one does — a verified run with cuBLAS
// beside it, "no usable GPU", a run that never ends (cancelled) — and the workbench's job and
// command around it.
#include <doctest/doctest.h>

#include "app/core/gpu_run.h"
#include "tests/support/run_command.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace tilescope;
using namespace tilescope::core;

namespace {

// A fake bench: a shell script whose body runs with $out set to the --out argument.
std::string fake_bench(const std::string& name, const std::string& body) {
  const auto p = test::write_scratch_file(name,
                                          "#!/bin/sh\nout= prev=\nfor a in \"$@\"; do [ \"$prev\" "
                                          "= --out ] && out=$a; prev=$a; done\n" +
                                              body + "\n");
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  return p.string();
}

struct BenchEnv {
  explicit BenchEnv(const std::string& program) {
    setenv("TILESCOPE_GPU_BENCH", program.c_str(), 1);
  }
  ~BenchEnv() { unsetenv("TILESCOPE_GPU_BENCH"); }
};

const char* kModel = "x: [64, 32]\nW: [64, 32] weight\ny = x @ W.T\n";

}  // namespace

TEST_CASE("a verified GPU run comes back with its time and cuBLAS's") {
  const BenchEnv env(fake_bench(
      "bench_ok.sh",
      "printf '{\"device\":{\"name\":\"Fake H200\"},\"verified\":true,\"rel_error\":1e-7,"
      "\"median_ms\":0.5,\"registers\":40,\"cublas\":{\"what\":\"cuBLAS "
      "SGEMM\",\"median_ms\":0.25}}'"
      " > \"$out\""));
  CHECK(gpu_run_unavailable().empty());
  JobProgress p;
  const GpuRunResult r = run_schedule_on_gpu(kModel, "tile(i, 8)", 5, p);
  CHECK(r.device == "Fake H200");
  CHECK(r.verified);
  CHECK(*r.median_ms == 0.5);
  CHECK(*r.cublas_ms == 0.25);
  CHECK(r.registers == 40);
  CHECK(r.cublas_what == "cuBLAS SGEMM");
}

TEST_CASE("the bench gets the model text and the steps; its temporary folder goes away") {
  const std::string seen = (test::scratch_dir() / "seen.txt").string();
  // Records its arguments one per line, then the model file's text (the argument after
  // --run-schedule), then answers.
  const BenchEnv env(fake_bench("bench_record.sh", "printf '%s\\n' \"$@\" > '" + seen +
                                                       "'\n"
                                                       "cat \"$2\" >> '" +
                                                       seen +
                                                       "'\n"
                                                       "printf '{\"verified\":false}' > \"$out\""));
  JobProgress p;
  const GpuRunResult r = run_schedule_on_gpu(kModel, "tile(i, 8); bind(i.o, block.x)", 7, p);
  CHECK_FALSE(r.verified);
  CHECK_FALSE(r.median_ms);
  std::ifstream in(seen);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() >= 9);
  CHECK(lines[0] == "--run-schedule");
  CHECK(lines[2] == "--apply");
  CHECK(lines[3] == "tile(i, 8); bind(i.o, block.x)");
  CHECK(lines[4] == "--repeats");
  CHECK(lines[5] == "7");
  CHECK(lines[8] == "x: [64, 32]");  // the model file's first line
  // The private folder that held the model and the answer is gone.
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(lines[1]).parent_path()));
}

TEST_CASE("no GPU: the bench's own reason, and no result") {
  const BenchEnv env(fake_bench("bench_nogpu.sh",
                                "echo 'no usable GPU: no CUDA-capable device is detected' >&2\n"
                                "exit 1"));
  JobProgress p;
  try {
    run_schedule_on_gpu(kModel, "", 5, p);
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("no usable GPU: no CUDA-capable device") != std::string::npos);
  }
}

TEST_CASE("a cancel stops a GPU run that does not end") {
  const BenchEnv env(fake_bench("bench_hang.sh", "sleep 60"));
  JobProgress p;
  std::thread canceller([&p] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    p.cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(run_schedule_on_gpu(kModel, "", 5, p), JobCancelled);
  canceller.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 10);
}

TEST_CASE("parse_gpu_run refuses what is not a run-schedule answer") {
  CHECK_THROWS_AS(parse_gpu_run(nlohmann::json::array()), std::runtime_error);
  CHECK_THROWS_AS(parse_gpu_run(nlohmann::json{{"kernel", "x"}}), std::runtime_error);
  const GpuRunResult r = parse_gpu_run(nlohmann::json{{"verified", true}, {"cublas", nullptr}});
  CHECK(r.verified);
  CHECK_FALSE(r.cublas_ms);
}
