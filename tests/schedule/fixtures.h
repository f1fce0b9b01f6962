// Shared helpers for the schedule tests: small graphs built in code, and a checker that runs a
// scheduled program in the interpreter against the graph's plain-loop reference evaluator.
#pragma once

#include "sim/graph/eval.h"
#include "sim/graph/graph.h"
#include "sim/schedule/interpreter.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/transform.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tsfix {

using namespace tilescope;

inline graph::TensorId tensor(graph::Graph& g, const std::string& name, graph::Shape shape,
                              graph::Role role = graph::Role::Input) {
  graph::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.role = role;
  return g.add_tensor(t);
}

inline graph::TensorId op(graph::Graph& g, graph::OpKind kind, const std::string& name,
                          std::vector<graph::TensorId> inputs, graph::OpAttrs attrs = {},
                          const std::string& out = "") {
  graph::Op o;
  o.kind = kind;
  o.name = name;
  o.inputs = std::move(inputs);
  o.attrs = attrs;
  return g.add_op(o, out);
}

// y = relu(x @ W.T + b) with x [M, K], W [N, K], b [N]: three ops matmul0, add0, relu0.
inline std::shared_ptr<graph::Graph> linear_relu(int64_t M, int64_t N, int64_t K) {
  auto g = std::make_shared<graph::Graph>();
  auto x = tensor(*g, "x", {M, K});
  auto W = tensor(*g, "W", {N, K}, graph::Role::Weight);
  auto b = tensor(*g, "b", {N}, graph::Role::Weight);
  graph::OpAttrs t;
  t.trans_b = true;
  auto mm = op(*g, graph::OpKind::MatMul, "matmul0", {x, W}, t);
  auto add = op(*g, graph::OpKind::Add, "add0", {mm, b});
  op(*g, graph::OpKind::ReLU, "relu0", {add}, {}, "y");
  return g;
}

// conv0 (+ bias add0 + relu0) on x [N, C, H, W] with w [K, C, R, S].
inline std::shared_ptr<graph::Graph> conv_relu(int64_t N, int64_t C, int64_t H, int64_t W,
                                               int64_t K, int64_t R, int64_t stride, int64_t pad) {
  auto g = std::make_shared<graph::Graph>();
  auto x = tensor(*g, "x", {N, C, H, W});
  auto w = tensor(*g, "w", {K, C, R, R}, graph::Role::Weight);
  auto b = tensor(*g, "b", {1, K, 1, 1}, graph::Role::Weight);
  graph::OpAttrs a;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  auto c = op(*g, graph::OpKind::Conv2D, "conv0", {x, w}, a);
  auto s = op(*g, graph::OpKind::Add, "add0", {c, b});
  op(*g, graph::OpKind::ReLU, "relu0", {s}, {}, "y");
  return g;
}

// Max relative error (against the largest reference magnitude) over every tensor the program
// wrote, between the interpreter and graph::evaluate.
inline double program_error(const schedule::Program& p, uint64_t seed = 7) {
  auto feeds64 = graph::random_feeds(*p.graph, seed);
  std::map<graph::TensorId, std::vector<float>> feeds;
  for (const auto& [id, v] : feeds64) feeds[id] = std::vector<float>(v.begin(), v.end());
  const auto ref = graph::evaluate(*p.graph, feeds64);
  const auto got = schedule::run_program(p, feeds);
  double worst = 0;
  for (const auto& [id, v] : got) {
    const auto& r = ref[size_t(id)];
    double scale = 1e-6;
    for (double x : r) scale = std::max(scale, std::fabs(x));
    for (size_t i = 0; i < v.size(); ++i)
      worst = std::max(worst, std::fabs(double(v[i]) - r[i]) / scale);
  }
  return worst;
}

inline schedule::Program apply_all(schedule::Program p, const std::string& steps) {
  for (const auto& s : schedule::parse_steps(steps)) {
    auto r = schedule::apply_step(p, s);
    INFO(s.to_string(), ": ", r.explanation);
    REQUIRE(r.ok);
    p = std::move(r.program);
  }
  return p;
}

inline schedule::StepResult try_step(const schedule::Program& p, const std::string& step) {
  auto steps = schedule::parse_steps(step);
  REQUIRE(steps.size() == 1);
  return schedule::apply_step(p, steps[0]);
}

constexpr const char* kMustShowSteps =
    "fuse(matmul0, add0, relu0); tile(i, 32); tile(j, 64); tile(k, 16); "
    "reorder(i.o, j.o, k.o, i.i, j.i, k.i); stage(x, shared, at=k.o); stage(W, shared, at=k.o); "
    "bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 4); tile(j.i, 4); "
    "reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x)";

}  // namespace tsfix
