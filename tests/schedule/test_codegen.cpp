// Generated source compiles: the C++ of a set of schedules is compiled by the host compiler as a
// self-contained translation unit, run, and compared with the interpreter; the CUDA of the same
// set is compiled by nvcc (skipped, with the reason printed, where nvcc is absent).
#include "fixtures.h"

#include "sim/schedule/codegen.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

using namespace tilescope;
using namespace tilescope::schedule;
namespace fs = std::filesystem;

namespace {

struct Named {
  std::string name;
  Program program;
};

// The schedules whose every kernel is compiled: default lowerings, the must-show GPU schedule,
// a CPU schedule (scratchpad packing, vectorize, parallel, unroll), conv via im2col, normalizers,
// padded pooling, compute_at, nested and double-buffered tiles with padding and grouped order.
std::vector<Named> schedule_set() {
  std::vector<Named> v;
  auto lin = lower_graph(tsfix::linear_relu(40, 72, 24));
  v.push_back({"default", lin});
  v.push_back({"must_show", tsfix::apply_all(lin, tsfix::kMustShowSteps)});
  v.push_back({"cpu", tsfix::apply_all(lin,
                                       "fuse(matmul0, add0, relu0); tile(i, 8); tile(j, 16); "
                                       "tile(k, 8); reorder(i.o, j.o, k.o, i.i, k.i, j.i); "
                                       "stage(W, scratchpad, at=k.o); vectorize(j.i); "
                                       "parallel(i.o); unroll(k.i)")});
  v.push_back({"split_k", tsfix::apply_all(lin,
                                           "fuse(matmul0, add0, relu0); split_k(k, 3); "
                                           "bind(k.p, block.z); tile(i, 8); bind(i.o, block.x); "
                                           "kernel(matmul0.sum); tile(i, j, 8, 8); "
                                           "bind(i.o, block.y); bind(j.o, block.x); "
                                           "bind(i.i, thread.y); bind(j.i, thread.x)")});
  v.push_back({"gpu_nested",
               tsfix::apply_all(lin, std::string(tsfix::kMustShowSteps) +
                                         "; stage(x, registers, at=k.i); stage(W, registers, "
                                         "at=k.i); block_order(grouped, 2); pad(W_shared, 1, 1)")});
  auto conv = lower_graph(tsfix::conv_relu(2, 3, 7, 6, 4, 3, 2, 1));
  v.push_back({"conv", tsfix::apply_all(conv,
                                        "fuse(conv0, add0, relu0); tile(k, 2); "
                                        "stage(w, scratchpad, at=k.o)")});
  v.push_back({"im2col", tsfix::apply_all(conv,
                                          "im2col(conv0); fuse(conv0, add0, relu0); "
                                          "tile(q, 2); reorder(q.o, c, q.i)")});
  {
    auto g = std::make_shared<graph::Graph>();
    auto x = tsfix::tensor(*g, "x", {5, 9});
    auto gm = tsfix::tensor(*g, "gamma", {9}, graph::Role::Weight);
    auto bt = tsfix::tensor(*g, "beta", {9}, graph::Role::Weight);
    tsfix::op(*g, graph::OpKind::Softmax, "softmax0", {x});
    auto ln = tsfix::op(*g, graph::OpKind::LayerNorm, "ln0", {x, gm, bt});
    tsfix::op(*g, graph::OpKind::GELU, "gelu0", {ln});
    auto im = tsfix::tensor(*g, "im", {1, 2, 5, 5});
    graph::OpAttrs a;
    a.kernel[0] = a.kernel[1] = 3;
    a.padding[0] = a.padding[1] = 1;
    tsfix::op(*g, graph::OpKind::MaxPool2D, "pool0", {im}, a);
    v.push_back({"normalize_pool", tsfix::apply_all(lower_graph(g), "fuse(ln0, gelu0)")});
  }
  {
    auto g = std::make_shared<graph::Graph>();
    auto x = tsfix::tensor(*g, "x", {6, 5});
    auto W = tsfix::tensor(*g, "W", {5, 7}, graph::Role::Weight);
    auto s = tsfix::op(*g, graph::OpKind::Sigmoid, "sig0", {x});
    tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {s, W});
    v.push_back(
        {"compute_at", tsfix::apply_all(lower_graph(g), "compute_at(sig0, matmul0, at=i)")});
  }
  {
    // Causal attention's scores: the mask in the GEMM's epilogue (with the key loop split) and
    // recomputed inside the softmax; both kernels' outputs are compared with the interpreter.
    auto g = std::make_shared<graph::Graph>();
    auto q = tsfix::tensor(*g, "q", {6, 4});
    auto k = tsfix::tensor(*g, "k", {7, 4});
    graph::OpAttrs nt;
    nt.trans_b = true;
    auto s = tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {q, k}, nt);
    graph::OpAttrs fill;
    fill.alpha = 0.0;  // the gradient's fill: finite, so every output is compared
    tsfix::op(*g, graph::OpKind::CausalMask, "mask0", {s}, fill);
    graph::OpAttrs inf;
    inf.alpha = -std::numeric_limits<double>::infinity();
    auto s1 = tsfix::op(*g, graph::OpKind::MatMul, "matmul1", {q, k}, nt);
    auto m1 = tsfix::op(*g, graph::OpKind::CausalMask, "mask1", {s1}, inf);
    tsfix::op(*g, graph::OpKind::Softmax, "softmax0", {m1});
    v.push_back({"causal", tsfix::apply_all(lower_graph(g),
                                            "compute_at(mask1, softmax0); tile(i, 4); "
                                            "fuse(matmul0, mask0); tile(j, 4)")});
    // The softmax in one pass (online), its key loop tiled: a masked key adds nothing.
    v.push_back({"online_softmax", tsfix::apply_all(lower_graph(g),
                                                    "compute_at(mask1, softmax0); "
                                                    "online_softmax(softmax0); tile(j, 4)")});
  }
  return v;
}

fs::path scratch_dir() {
  fs::path d =
      fs::temp_directory_path() / ("tilescope_schedule_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

int run(const std::string& cmd) {
  return std::system(cmd.c_str());
}

std::string compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

// A driver that is not part of the generated TU: reads the buffers, calls ts_kernel, writes
// outputs.
constexpr const char* kDriver = R"(
#include <cstdio>
#include <vector>
extern "C" void ts_kernel(float* const* args);
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::FILE* in = std::fopen(argv[1], "rb");
  unsigned n = 0;
  if (!in || std::fread(&n, 4, 1, in) != 1) return 3;
  std::vector<std::vector<float>> bufs(n);
  std::vector<int> out(n);
  std::vector<float*> args(n);
  for (unsigned i = 0; i < n; ++i) {
    unsigned long long count = 0;
    if (std::fread(&out[i], 4, 1, in) != 1 || std::fread(&count, 8, 1, in) != 1) return 4;
    bufs[i].resize(count);
    if (!out[i] && std::fread(bufs[i].data(), 4, count, in) != count) return 5;
    if (out[i]) for (auto& v : bufs[i]) v = -12345.0f;  // poison: every element must be written
    args[i] = bufs[i].data();
  }
  std::fclose(in);
  ts_kernel(args.data());
  std::FILE* o = std::fopen(argv[2], "wb");
  for (unsigned i = 0; i < n; ++i)
    if (out[i]) std::fwrite(bufs[i].data(), 4, bufs[i].size(), o);
  std::fclose(o);
  return 0;
}
)";

}  // namespace

TEST_CASE("codegen: generated C++ compiles alone, runs, and matches the interpreter") {
  if (run(compiler() + " --version > /dev/null 2>&1") != 0) {
    MESSAGE("skipped: no host C++ compiler (" << compiler() << ") on PATH");
    return;
  }
  const fs::path dir = scratch_dir();
  { std::ofstream(dir / "driver.cpp") << kDriver; }
  REQUIRE(run(compiler() + " -std=c++17 -O1 -c " + (dir / "driver.cpp").string() + " -o " +
              (dir / "driver.o").string()) == 0);
  int compiled = 0;
  for (const Named& s : schedule_set()) {
    for (size_t ki = 0; ki < s.program.kernels.size(); ++ki) {
      const Kernel& k = s.program.kernels[ki];
      INFO(s.name, " kernel ", k.name);
      const std::string stem = (dir / (s.name + "_" + std::to_string(ki))).string();
      { std::ofstream(stem + ".cpp") << emit_cpp(k); }
      // -Wall -Werror: what the learner is shown should be clean code.
      const std::string cc = compiler() + " -std=c++17 -O2 -Wall -Wextra -Werror -c " + stem +
                             ".cpp -o " + stem + ".o 2> " + stem + ".log";
      if (run(cc) != 0) {
        std::ifstream log(stem + ".log");
        std::stringstream ss;
        ss << log.rdbuf();
        FAIL_CHECK("compile failed: " << ss.str() << "\n" << emit_cpp(k));
        continue;
      }
      REQUIRE(run(compiler() + " " + stem + ".o " + (dir / "driver.o").string() + " -pthread -o " +
                  stem + ".bin") == 0);
      // Inputs: deterministic values, laid out with each tensor's strides.
      std::vector<std::vector<float>> bufs;
      {
        std::ofstream in(stem + ".in", std::ios::binary);
        const uint32_t n = uint32_t(k.tensors.size());
        in.write(reinterpret_cast<const char*>(&n), 4);
        for (size_t t = 0; t < k.tensors.size(); ++t) {
          const KernelTensor& kt = k.tensors[t];
          std::vector<float> buf(size_t(std::max<int64_t>(1, kt.alloc_elems())), 0.0f);
          for (size_t e = 0; e < buf.size(); ++e)
            buf[e] = float(int((e * 7 + t * 3) % 11) - 5) * 0.125f;
          const int32_t out = kt.role == TensorRole::Output ? 1 : 0;
          const uint64_t count = buf.size();
          in.write(reinterpret_cast<const char*>(&out), 4);
          in.write(reinterpret_cast<const char*>(&count), 8);
          if (!out) in.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(count * 4));
          bufs.push_back(std::move(buf));
        }
      }
      REQUIRE(run(stem + ".bin " + stem + ".in " + stem + ".out") == 0);
      interpret_kernel(k, bufs);
      std::ifstream out(stem + ".out", std::ios::binary);
      for (size_t t = 0; t < k.tensors.size(); ++t) {
        const KernelTensor& kt = k.tensors[t];
        if (kt.role != TensorRole::Output) continue;
        std::vector<float> got(bufs[t].size());
        out.read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * 4));
        // Compare the logical elements (padding is never written).
        const auto want = unpack_tensor(kt, bufs[t]);
        const auto have = unpack_tensor(kt, got);
        double scale = 1e-6, worst = 0;
        for (float w : want) scale = std::max(scale, double(std::fabs(w)));
        for (size_t e = 0; e < want.size(); ++e)
          worst = std::max(worst, std::fabs(double(have[e]) - double(want[e])) / scale);
        CHECK(worst < 1e-5);
      }
      ++compiled;
    }
  }
  CHECK(compiled >= 12);
  fs::remove_all(dir);
}

TEST_CASE("codegen: generated CUDA compiles with nvcc") {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!fs::exists(nvcc)) {
    MESSAGE("skipped: " << nvcc << " is not present on this machine");
    return;
  }
  const fs::path dir = scratch_dir();
  // One translation unit: each kernel in its own namespace under its own name (NVRTC compiles
  // them one at a time; here one nvcc run keeps the test fast).
  std::ostringstream tu;
  int n = 0;
  for (const Named& s : schedule_set())
    for (const Kernel& k : s.program.kernels) {
      tu << "#define ts_kernel ts_kernel_" << n << "\nnamespace k" << n << " {\n"
         << emit_cuda(k) << "}\n#undef ts_kernel\n";
      const LaunchConfig lc = launch_config(k);
      CHECK(lc.block[0] * lc.block[1] * lc.block[2] <= 1024);
      ++n;
    }
  { std::ofstream(dir / "all.cu") << tu.str(); }
  const std::string cmd = nvcc + " -std=c++17 -arch=sm_90 -Werror all-warnings -c " +
                          (dir / "all.cu").string() + " -o " + (dir / "all.o").string() + " 2> " +
                          (dir / "nvcc.log").string();
  const int rc = run(cmd);
  std::ifstream log(dir / "nvcc.log");
  std::stringstream ss;
  ss << log.rdbuf();
  INFO(ss.str());
  CHECK(rc == 0);
  CHECK(n >= 12);
  fs::remove_all(dir);
}

TEST_CASE("describe_launch: the grid and block counted, and what an unbound launch means") {
  // 64 × 512 × 1024 layer, fused: i (64) and j (512) are the output loops.
  const auto base = schedule::lower_graph(tsfix::linear_relu(64, 512, 1024));
  const Program fused = tsfix::apply_all(base, "fuse(matmul0, add0, relu0)");
  const Kernel& k0 = fused.kernels[size_t(fused.current)];
  const std::string unbound = describe_launch(launch_config(k0));
  CHECK(unbound.find("grid 1×1×1 = 1 block, block 1×1×1 = 1 thread") == 0);
  CHECK(unbound.find("nothing is bound yet, so one thread of one block would run the whole "
                     "loop nest") != std::string::npos);
  // Blocks only: i.o (64/16 = 4) on block.y, j (512) unbound; no threads yet.
  const Program blocks = tsfix::apply_all(fused, "tile(i, 16); bind(i.o, block.y)");
  const std::string one_thread =
      describe_launch(launch_config(blocks.kernels[size_t(blocks.current)]));
  CHECK(one_thread.find("grid 1×4×1 = 4 blocks, block 1×1×1 = 1 thread") == 0);
  CHECK(one_thread.find("one thread per block") != std::string::npos);
  // Blocks and threads: 16 × 64 tiles, i.o (4) on block.y, j.o (512/64 = 8) on block.x, the
  // tile's 16 × 64 points on threads: 1024 of them.
  const Program both =
      tsfix::apply_all(fused,
                       "tile(i, j, 16, 64); bind(i.o, block.y); bind(j.o, block.x); "
                       "bind(i.i, thread.y); bind(j.i, thread.x)");
  const std::string full = describe_launch(launch_config(both.kernels[size_t(both.current)]));
  CHECK(full == "grid 8×4×1 = 32 blocks, block 64×16×1 = 1024 threads, dynamic shared memory 0 B");
}

TEST_CASE("a split that tiles nothing is accepted and says so") {
  const auto base = schedule::lower_graph(tsfix::linear_relu(64, 512, 1024));
  const StepResult whole = tsfix::try_step(base, "tile(i, 64)");  // i has 64 iterations
  REQUIRE(whole.ok);
  CHECK(whole.explanation.find("This changes nothing by itself: i.o has a single iteration, so "
                               "the tile is the whole loop. A factor between 2 and 63 makes "
                               "tiles.") != std::string::npos);
  const StepResult one = tsfix::try_step(base, "tile(j, 1)");
  REQUIRE(one.ok);
  CHECK(one.explanation.find("j.i has a single iteration, so the tile is one iteration") !=
        std::string::npos);
  const StepResult real = tsfix::try_step(base, "tile(i, 16)");
  CHECK(real.explanation.find("changes nothing") == std::string::npos);
}
