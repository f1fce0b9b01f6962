// Property: any sequence of accepted transformations leaves the result unchanged. Over a thousand
// random step sequences across the op kinds, the interpreter's result of the transformed program
// equals the plain-loop reference (graph::evaluate) to fp32 tolerance; refused steps change
// nothing.
#include "fixtures.h"

#include "sim/schedule/codegen.h"

#include <algorithm>

using namespace tilescope;
using namespace tilescope::schedule;
using graph::OpKind;

namespace {

// A small deterministic generator (no std:: distributions: identical on every platform).
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo + 1)); }
  bool chance(int percent) { return in(0, 99) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(in(0, int64_t(v.size()) - 1))];
  }
};

struct Case {
  std::shared_ptr<graph::Graph> g;
  std::vector<std::string> program_steps;  // candidates applied first (each may be refused)
};

Case make_case(int kind, Rng& r) {
  using tsfix::op;
  using tsfix::tensor;
  Case c;
  switch (kind) {
    case 0: {
      c.g = tsfix::linear_relu(r.in(2, 13), r.in(2, 13), r.in(2, 13));
      c.program_steps = {r.chance(50) ? "fuse(matmul0, add0, relu0)" : "fuse(add0, relu0)",
                         "fuse(matmul0, add0)"};
      // Split-K after the fusion (the epilogue moves to the sum kernel); refused when the part
      // count does not divide K.
      if (r.chance(40)) c.program_steps.push_back("split_k(k, " + std::to_string(r.in(2, 4)) + ")");
      break;
    }
    case 1: {
      const int64_t R = r.chance(70) ? 3 : 1;
      c.g = tsfix::conv_relu(r.in(1, 2), r.in(1, 3), r.in(4, 7), r.in(4, 7), r.in(1, 4), R,
                             r.in(1, 2), R == 3 ? r.in(0, 1) : 0);
      if (r.chance(50)) c.program_steps.push_back("im2col(conv0)");
      if (r.chance(60)) c.program_steps.push_back("fuse(conv0, add0, relu0)");
      if (r.chance(30)) c.program_steps.push_back(r.chance(50) ? "split_k(c, 2)" : "split_k(r, 3)");
      break;
    }
    case 2: {
      c.g = std::make_shared<graph::Graph>();
      auto x = tensor(*c.g, "x", {r.in(1, 2), r.in(1, 3), r.in(4, 8), r.in(4, 8)});
      graph::OpAttrs a;
      a.kernel[0] = a.kernel[1] = r.in(2, 3);
      a.stride[0] = a.stride[1] = r.in(1, 2);
      a.padding[0] = a.padding[1] = r.in(0, 1);
      op(*c.g, r.chance(50) ? OpKind::MaxPool2D : OpKind::AvgPool2D, "pool0", {x}, a);
      break;
    }
    case 3: {
      c.g = std::make_shared<graph::Graph>();
      const int64_t D = r.in(2, 11);
      auto x = tensor(*c.g, "x", {r.in(1, 9), D});
      if (r.chance(50)) {
        op(*c.g, OpKind::Softmax, "softmax0", {x});
      } else {
        auto gm = tensor(*c.g, "gamma", {D}, graph::Role::Weight);
        auto bt = tensor(*c.g, "beta", {D}, graph::Role::Weight);
        auto ln = op(*c.g, OpKind::LayerNorm, "ln0", {x, gm, bt});
        op(*c.g, OpKind::GELU, "gelu0", {ln});
        c.program_steps = {"fuse(ln0, gelu0)"};
      }
      break;
    }
    case 4: {
      // An elementwise producer feeding a MatMul: compute_at (recompute or store-and-reuse).
      c.g = std::make_shared<graph::Graph>();
      const int64_t M = r.in(2, 9), K = r.in(2, 9), N = r.in(2, 9);
      auto x = tensor(*c.g, "x", {M, K});
      auto W = tensor(*c.g, "W", {K, N}, graph::Role::Weight);
      auto s = op(*c.g, OpKind::Sigmoid, "sig0", {x});
      op(*c.g, OpKind::MatMul, "matmul0", {s, W});
      c.program_steps = {r.chance(50) ? std::string("compute_at(sig0, matmul0, at=inline)")
                                      : std::string("compute_at(sig0, matmul0, at=") +
                                            (r.chance(50) ? "i" : "j") + ")",
                         "kernel(matmul0)"};
      break;
    }
    case 5: {
      c.g = std::make_shared<graph::Graph>();
      const int64_t last = r.in(2, 7);
      auto a = tensor(*c.g, "a", {r.in(1, 6), r.in(1, 6), last});
      auto b = tensor(*c.g, "b", {last}, graph::Role::Weight);
      auto s = op(*c.g, OpKind::Add, "add0", {a, b});
      auto t = op(*c.g, OpKind::Tanh, "tanh0", {s});
      graph::OpAttrs sum;
      sum.axes = {r.chance(50) ? 1 : 2};
      op(*c.g, OpKind::Sum, "sum0", {t}, sum);
      c.program_steps = {"fuse(add0, tanh0)", "kernel(sum0)"};
      break;
    }
    default: {
      c.g = std::make_shared<graph::Graph>();
      auto a = tensor(*c.g, "a", {r.in(1, 3), r.in(2, 7), r.in(2, 7)});
      auto b = tensor(*c.g, "b", {c.g->tensor(a).shape[2], r.in(2, 7)});
      op(*c.g, OpKind::MatMul, "bmm0", {a, b});
      break;
    }
  }
  return c;
}

std::string random_step(const Program& p, Rng& r) {
  const Kernel& k = p.kernels[size_t(p.current)];
  if (k.loops.empty()) return "unroll(nothing)";
  auto loop = [&] { return k.loops[size_t(r.in(0, int64_t(k.loops.size()) - 1))]; };
  switch (r.in(0, 11)) {
    case 0:
    case 1:
    case 2: {
      const Loop l = loop();
      int64_t f = r.in(1, std::max<int64_t>(1, l.extent));
      if (r.chance(5)) f = r.chance(50) ? 0 : l.extent + 1;  // illegal on purpose
      return "tile(" + l.name + ", " + std::to_string(f) + ")";
    }
    case 3:
    case 4: {
      std::vector<std::string> names;
      for (const auto& l : k.loops) names.push_back(l.name);
      for (size_t i = names.size(); i > 1; --i)
        std::swap(names[i - 1], names[size_t(r.in(0, int64_t(i) - 1))]);
      names.resize(
          size_t(r.in(2, std::max<int64_t>(2, std::min<int64_t>(int64_t(names.size()), 5)))));
      std::string s = "reorder(";
      for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
      return s + ")";
    }
    case 5:
    case 6: {
      std::vector<std::string> inputs;
      for (const auto& t : k.tensors)
        if (t.role == TensorRole::Input) inputs.push_back(t.name);
      for (const auto& c : k.computed) inputs.push_back(c.name);
      if (inputs.empty()) return "unroll(nothing)";
      static const std::vector<std::string> levels = {"shared", "scratchpad", "registers"};
      return "stage(" + r.pick(inputs) + ", " + r.pick(levels) + (r.chance(25) ? ", double" : "") +
             ", at=" + loop().name + ")";
    }
    case 7:
      return std::string(r.chance(50) ? "unroll(" : "vectorize(") + loop().name + ")";
    case 8: {
      static const std::vector<std::string> dims = {"block.x",  "block.y",  "block.z",
                                                    "thread.x", "thread.y", "thread.z"};
      return "bind(" + loop().name + ", " + r.pick(dims) + ")";
    }
    case 9:
      return "parallel(" + loop().name + ")";
    case 10: {
      if (!k.stages.empty() && r.chance(70)) {
        const StageSpec& s = k.stages[size_t(r.in(0, int64_t(k.stages.size()) - 1))];
        return "pad(" + s.buffer + ", " + std::to_string(r.in(0, 1)) + ", " +
               std::to_string(r.in(1, 3)) + ")";
      }
      return r.chance(50) ? "block_order(grouped, " + std::to_string(r.in(1, 4)) + ")"
                          : "block_order(row)";
    }
    default: {
      std::vector<std::string> names;
      for (const auto& t : k.tensors)
        if (t.role == TensorRole::Input && t.id >= 0) names.push_back(t.name);
      if (names.empty()) return "unroll(nothing)";
      static const std::vector<std::string> layouts = {"transposed", "nhwc", "rowmajor"};
      return "layout(" + r.pick(names) + ", " + r.pick(layouts) + ")";
    }
  }
}

}  // namespace

TEST_CASE("property: 1,200 random transformation sequences preserve every op's result") {
  Rng r{0x9E3779B97F4A7C15ull};
  int sequences = 0, accepted = 0, refused = 0;
  int per_kind[7] = {};
  for (int seq = 0; seq < 1200; ++seq) {
    const int kind = seq % 7;
    Case c = make_case(kind, r);
    Program p = lower_graph(c.g);
    std::vector<std::string> log;
    for (const auto& s : c.program_steps) {
      const StepResult res = apply_step(p, parse_steps(s)[0]);
      if (res.ok) {
        p = res.program;
        log.push_back(s);
      }
    }
    const int n = int(r.in(2, 8));
    for (int i = 0; i < n; ++i) {
      const std::string s = random_step(p, r);
      const StepResult res = apply_step(p, parse_steps(s)[0]);
      if (res.ok) {
        p = res.program;
        log.push_back(s);
        ++accepted;
      } else {
        CHECK(!res.explanation.empty());
        ++refused;
      }
    }
    const double err = tsfix::program_error(p, uint64_t(seq) + 1);
    INFO("sequence ", seq, " (kind ", kind, "): ", [&] {
      std::string t;
      for (const auto& s : log) t += s + "; ";
      return t;
    }());
    REQUIRE(err < 1e-4);
    if (seq % 25 == 0)
      for (const Kernel& k : p.kernels) {
        CHECK(!print_loop_nest(k).empty());
        CHECK(emit_cpp(k).find("ts_kernel") != std::string::npos);
        CHECK(emit_cuda(k).find("__global__") != std::string::npos);
      }
    ++sequences;
    ++per_kind[kind];
  }
  CHECK(sequences >= 1000);
  for (int k = 0; k < 7; ++k) CHECK(per_kind[k] > 100);
  // The generator must exercise both outcomes heavily, or the property says little.
  CHECK(accepted > 2000);
  CHECK(refused > 500);
  MESSAGE("sequences ", sequences, ", steps accepted ", accepted, ", refused ", refused);
}
