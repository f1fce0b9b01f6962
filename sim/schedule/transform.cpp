// The transformation steps: parsing and printing the step language, and each primitive as
// legality check → new program → explanation.
//
// Index: [SECTION] Step text  [SECTION] Helpers  [SECTION] Loop primitives  [SECTION] Fusion
//        [SECTION] Memory primitives  [SECTION] Dispatch  [SECTION] History
#include "sim/schedule/transform.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/lower.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace tilescope::schedule {

// [SECTION] Step text

std::string TransformStep::option(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return fallback;
}

std::string TransformStep::to_string() const {
  std::string s = name + "(";
  bool first = true;
  for (const auto& a : args) {
    s += (first ? "" : ", ") + a;
    first = false;
  }
  for (const auto& [k, v] : options) {
    s += (first ? "" : ", ") + k + "=" + v;
    first = false;
  }
  return s + ")";
}

std::string steps_to_string(const std::vector<TransformStep>& steps) {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i) s += (i ? "; " : "") + steps[i].to_string();
  return s;
}

namespace {

class StepParser {
 public:
  explicit StepParser(std::string_view t) : m_t(t) {}

  std::vector<TransformStep> run() {
    std::vector<TransformStep> steps;
    for (;;) {
      skip_separators();
      if (m_pos >= m_t.size()) break;
      steps.push_back(step());
    }
    return steps;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw ScheduleError(std::to_string(m_line) + ":" + std::to_string(m_col) + ": " + msg);
  }
  char peek() const { return m_pos < m_t.size() ? m_t[m_pos] : '\0'; }
  void advance() {
    if (m_t[m_pos] == '\n') {
      ++m_line;
      m_col = 1;
    } else {
      ++m_col;
    }
    ++m_pos;
  }
  void skip_space() {
    while (m_pos < m_t.size()) {
      const char c = m_t[m_pos];
      if (c == '#') {
        while (m_pos < m_t.size() && m_t[m_pos] != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else {
        break;
      }
    }
  }
  void skip_separators() {
    for (;;) {
      skip_space();
      if (peek() == ';')
        advance();
      else
        break;
    }
  }
  static bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '+';
  }
  std::string word(const std::string& what) {
    skip_space();
    const size_t start = m_pos;
    while (m_pos < m_t.size() && word_char(m_t[m_pos])) advance();
    if (m_pos == start) {
      if (m_pos >= m_t.size())
        fail(std::string("expected ") + what + ", found the end of the text");
      fail(std::string("expected ") + what + ", found '" + std::string(1, m_t[m_pos]) + "'");
    }
    return std::string(m_t.substr(start, m_pos - start));
  }
  TransformStep step() {
    skip_space();
    TransformStep s;
    s.line = m_line;
    s.col = m_col;
    s.name = word("a step name such as tile or fuse");
    skip_space();
    if (peek() != '(') fail("expected '(' after '" + s.name + "'");
    advance();
    skip_space();
    if (peek() == ')') {
      advance();
      return s;
    }
    for (;;) {
      std::string a = word("an argument");
      skip_space();
      if (peek() == '=') {
        advance();
        std::string v = word("a value after '" + a + "='");
        s.options.emplace_back(a, v);
      } else {
        s.args.push_back(a);  // flags may follow options: stage(W, shared, at=k.o, double)
      }
      skip_space();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ')') {
        advance();
        break;
      }
      if (m_pos >= m_t.size()) fail("expected ')' to close " + s.name + "(");
      fail("expected ',' or ')' in " + s.name + "(...), found '" + std::string(1, peek()) + "'");
    }
    return s;
  }

  std::string_view m_t;
  size_t m_pos = 0;
  int m_line = 1, m_col = 1;
};

}  // namespace

std::vector<TransformStep> parse_steps(std::string_view text) {
  return StepParser(text).run();
}

// [SECTION] Helpers

namespace {

struct Refused {
  std::string reason;
};
[[noreturn]] void refuse(const std::string& why) {
  throw Refused{why};
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string loop_names(const Kernel& k) {
  std::vector<std::string> v;
  for (const auto& l : k.loops) v.push_back(l.name);
  return join(v);
}

int64_t parse_int(const TransformStep& s, const std::string& text, const std::string& what) {
  if (text.empty()) refuse(s.name + ": " + what + " is missing");
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size())
    refuse(s.name + ": " + what + " must be a whole number, got '" + text + "'");
  return v;
}

void need_args(const TransformStep& s, size_t lo, size_t hi, const std::string& usage) {
  if (s.args.size() < lo || s.args.size() > hi)
    refuse(s.name + " takes " + usage + "; got " + std::to_string(s.args.size()) + " argument" +
           (s.args.size() == 1 ? "" : "s"));
}

int need_loop(const Kernel& k, const TransformStep& s, const std::string& name) {
  const int l = k.find_loop(name);
  if (l < 0)
    refuse(s.name + ": kernel " + k.name + " has no loop named '" + name + "'; its loops are " +
           loop_names(k));
  return l;
}

std::string dims_text(const std::vector<int64_t>& e) {
  std::string s;
  for (size_t i = 0; i < e.size(); ++i) s += (i ? "×" : "") + std::to_string(e[i]);
  return s.empty() ? "1" : s;
}

std::string count_text(int64_t n) {
  char buf[64];
  if (n >= 1'000'000)
    std::snprintf(buf, sizeof buf, "%.1f M", double(n) / 1e6);
  else if (n >= 10'000)
    std::snprintf(buf, sizeof buf, "%.1f K", double(n) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

// Tiles each input of the kernel would need per iteration of loop `at` (what one step touches).
std::vector<std::pair<std::string, int64_t>> working_set(const Kernel& k, int at) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    if (k.tensors[t].role != TensorRole::Input) continue;
    Kernel tmp = k;
    tmp.stages.clear();
    StageSpec s;
    s.tensor = int(t);
    s.level = MemLevel::Global;
    s.at = k.loops[size_t(at)].name;
    s.buffer = "ws";
    tmp.stages.push_back(s);
    try {
      LoweredKernel lk = build_loop_tree(tmp);
      int64_t b = 0;
      for (const auto& pl : lk.stages) b = std::max(b, pl.footprint * 4);
      out.emplace_back(k.tensors[t].name, b);
    } catch (const ScheduleError&) {
      // The tensor is not read inside this loop (e.g. a bias read by the epilogue only).
    }
  }
  return out;
}

std::string working_set_text(const Kernel& k, int at, const Target& t) {
  auto ws = working_set(k, at);
  if (ws.empty()) return "";
  int64_t total = 0;
  std::vector<std::string> parts;
  for (const auto& [n, b] : ws) {
    parts.push_back(n + " " + format_bytes(b));
    total += b;
  }
  std::string s = "One iteration of " + k.loops[size_t(at)].name + " touches " + join(parts) +
                  " = " + format_bytes(total);
  s += total <= t.cpu_l1_bytes ? ", which fits the " + format_bytes(t.cpu_l1_bytes) + " L1 cache."
                               : ", more than the " + format_bytes(t.cpu_l1_bytes) +
                                     " L1 cache, so some of it is fetched again from further away.";
  return s;
}

void check_or_refuse(const Kernel& k, const Target& t, const std::string& prefix) {
  if (auto why = check_kernel(k, t)) refuse(prefix + *why);
}

// [SECTION] Loop primitives

std::string do_split(Kernel& k, const TransformStep& s, const std::string& name, int64_t f) {
  const int li = need_loop(k, s, name);
  const Loop L = k.loops[size_t(li)];
  if (f <= 0)
    refuse(s.name + "(" + name + ", " + std::to_string(f) +
           "): a tile must have at least one "
           "iteration; the factor must be 1 or more");
  if (f > L.extent)
    refuse(s.name + "(" + name + ", " + std::to_string(f) + "): loop " + name + " has only " +
           std::to_string(L.extent) + " iterations, so a tile of " + std::to_string(f) +
           " would be mostly empty; use a factor of at most " + std::to_string(L.extent));
  if (L.kind != LoopKind::Serial)
    refuse(s.name + ": loop " + name + " is already " + loop_kind_name(L.kind) +
           "; split loops before mapping them");
  const std::string o = name + ".o", i = name + ".i";
  if (k.find_loop(o) >= 0 || k.find_loop(i) >= 0)
    refuse(s.name + ": loops named " + o + " / " + i + " already exist");
  const int64_t outer = (L.extent + f - 1) / f;
  Loop lo = L, lin = L;
  lo.name = o;
  lo.extent = outer;
  lin.name = i;
  lin.extent = f;
  k.loops[size_t(li)] = lo;
  k.loops.insert(k.loops.begin() + li + 1, lin);
  const Affine by = Affine::var(o, f) + Affine::var(i);
  for (auto& a : k.axis_value) a = a.substitute(name, by);
  for (auto& g : k.guards) g.expr = g.expr.substitute(name, by);
  const bool tail = L.extent % f != 0;
  if (tail) k.guards.push_back({by, L.extent});
  for (auto& st : k.stages)
    if (st.at == name) st.at = i;
  std::string e = "Loop " + name + " (" + std::to_string(L.extent) + " iterations) is now " + o +
                  " (" + std::to_string(outer) + ") × " + i + " (" + std::to_string(f) +
                  "): " + name + " = " + o + "*" + std::to_string(f) + " + " + i + ". ";
  if (tail) {
    const int64_t last = L.extent - (outer - 1) * f;
    e += std::to_string(f) + " does not divide " + std::to_string(L.extent) +
         ": the last tile has only " + std::to_string(last) + " of " + std::to_string(f) +
         " iterations, so the body is guarded by `if (" + by.to_string() + " < " +
         std::to_string(L.extent) + ")`; " + std::to_string(outer * f - L.extent) +
         " iterations are skipped. ";
  }
  e += "Nothing runs in a different order yet; the split pays off once other loops move between " +
       o + " and " + i + " (reorder) or " + o + " is mapped to threads or blocks.";
  return e;
}

std::string do_reorder(Kernel& k, const TransformStep& s, const Target& t) {
  if (s.args.size() < 2) refuse("reorder takes two or more loop names");
  std::vector<int> idx;
  std::set<std::string> seen;
  for (const auto& a : s.args) {
    if (!seen.insert(a).second) refuse("reorder: loop " + a + " is listed twice");
    idx.push_back(need_loop(k, s, a));
  }
  std::vector<int> slots = idx;
  std::sort(slots.begin(), slots.end());
  std::vector<Loop> loops = k.loops;
  for (size_t i = 0; i < slots.size(); ++i) loops[size_t(slots[i])] = k.loops[size_t(idx[i])];
  // A reduction loop carries the running sum; it cannot move outside a loop whose iterations run
  // on different workers.
  for (size_t r = 0; r < loops.size(); ++r) {
    if (!loops[r].reduce) continue;
    for (size_t q = r + 1; q < loops.size(); ++q) {
      const LoopKind kind = loops[q].kind;
      if (kind == LoopKind::Parallel || is_block(kind))
        refuse("reorder would put reduction loop " + loops[r].name + " outside loop " +
               loops[q].name + ", which runs on " +
               (kind == LoopKind::Parallel ? "separate CPU threads" : "separate GPU blocks") +
               ". " + loops[r].name +
               " carries a dependence: each step adds to the running sum the previous step left, "
               "so one output's steps must all happen in one worker, and " +
               (kind == LoopKind::Parallel ? "threads" : "blocks") +
               " cannot hand partial sums to each other in the middle of the loop");
    }
    break;
  }
  Kernel next = k;
  next.loops = loops;
  check_or_refuse(next, t, "reorder refused: ");
  k = next;
  std::vector<std::string> order;
  for (const auto& l : k.loops) order.push_back(l.name);
  std::string e = "Loop order is now " + join(order, " → ") + ". ";
  int r = -1;
  for (size_t i = 0; i < k.loops.size(); ++i)
    if (k.loops[i].reduce) {
      r = int(i);
      break;
    }
  if (r >= 0) {
    const LoweredKernel lk = build_loop_tree(k);
    const int64_t acc = accumulator_bytes(lk, false) / 4;
    if (acc > 1) {
      std::vector<std::string> dims;
      for (int l : lk.acc_loops) dims.push_back(k.loops[size_t(l)].name);
      e += "The reduction now starts at " + k.loops[size_t(r)].name + ", so " +
           std::to_string(acc) + " running sums (one per " + join(dims, "×") + ", " +
           format_bytes(acc * 4) + ") stay live across it and are finished after it. ";
    } else {
      e += "The reduction runs innermost: each output is finished before the next starts, with "
           "one running sum. ";
    }
    e += working_set_text(k, r, t);
  }
  return e;
}

std::string do_kind(Kernel& k, const TransformStep& s, LoopKind kind, const Target& t) {
  need_args(s, 1, 1, "one loop name");
  const int li = need_loop(k, s, s.args[0]);
  Loop& L = k.loops[size_t(li)];
  if (L.reduce && kind != LoopKind::Unrolled)
    refuse(s.name + "(" + L.name + ") refused: " + L.name +
           " is a reduction loop; it carries a dependence (each iteration adds to the sum the "
           "previous one left), so its iterations cannot run side by side on " +
           (kind == LoopKind::Vectorized ? "vector lanes"
            : kind == LoopKind::Parallel ? "CPU threads"
                                         : "GPU threads or blocks") +
           ". Map a spatial loop instead");
  if (L.kind != LoopKind::Serial)
    refuse(s.name + ": loop " + L.name + " is already " + loop_kind_name(L.kind));
  Kernel next = k;
  next.loops[size_t(li)].kind = kind;
  check_or_refuse(next, t, s.name + "(" + L.name + ") refused: ");
  k = next;
  const Loop& N = k.loops[size_t(li)];
  const std::string ext = std::to_string(N.extent);
  switch (kind) {
    case LoopKind::Unrolled:
      return "Loop " + N.name + " is unrolled: its body is written out " + ext +
             " times, removing the loop counter and branch and letting the compiler keep the " +
             ext + " iterations' values in registers.";
    case LoopKind::Vectorized: {
      const int64_t lanes = t.cpu_vector_bytes / 4;
      std::string e = "Loop " + N.name + " runs as vector lanes: " + ext +
                      " fp32 values = " + format_bytes(N.extent * 4) + " per step";
      if (N.extent % lanes == 0)
        e += ", " + std::to_string(N.extent / lanes) + " " +
             std::to_string(t.cpu_vector_bytes * 8) + "-bit vector register(s) per step.";
      else
        e += "; " + ext + " is not a multiple of the " + std::to_string(lanes) + " lanes of a " +
             std::to_string(t.cpu_vector_bytes * 8) +
             "-bit register, so part of each step runs with idle lanes.";
      return e;
    }
    case LoopKind::Parallel:
      return "Loop " + N.name + "'s " + ext +
             " iterations are split into contiguous chunks, one per CPU thread. Each thread writes "
             "its own outputs, so no locking is needed.";
    default: {
      const LaunchConfig lc = launch_config(k);
      const int64_t blocks = lc.grid[0] * lc.grid[1] * lc.grid[2];
      const int64_t threads = lc.block[0] * lc.block[1] * lc.block[2];
      std::string e = "Loop " + N.name + " → " + loop_kind_name(kind) + ": its " + ext +
                      " iterations run at once on the GPU. Grid: " + std::to_string(lc.grid[0]) +
                      "×" + std::to_string(lc.grid[1]) + "×" + std::to_string(lc.grid[2]) + " = " +
                      std::to_string(blocks) + " blocks of " + std::to_string(lc.block[0]) + "×" +
                      std::to_string(lc.block[1]) + "×" + std::to_string(lc.block[2]) + " = " +
                      std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " (" +
                      std::to_string((threads + t.warp_size - 1) / t.warp_size) + " warp" +
                      ((threads + t.warp_size - 1) / t.warp_size == 1 ? "" : "s") + ").";
      if (is_thread(kind) && threads % t.warp_size != 0)
        e += " " + std::to_string(threads) + " is not a multiple of " +
             std::to_string(t.warp_size) + ": the last warp runs with idle lanes.";
      return e;
    }
  }
}

std::string do_bind(Kernel& k, const TransformStep& s, const Target& t) {
  need_args(s, 2, 2, "a loop and a GPU dimension, e.g. bind(i.o, block.y)");
  static const std::map<std::string, LoopKind> kinds = {
      {"block.x", LoopKind::BlockX},   {"block.y", LoopKind::BlockY},
      {"block.z", LoopKind::BlockZ},   {"thread.x", LoopKind::ThreadX},
      {"thread.y", LoopKind::ThreadY}, {"thread.z", LoopKind::ThreadZ}};
  auto it = kinds.find(s.args[1]);
  if (it == kinds.end())
    refuse("bind: '" + s.args[1] +
           "' is not a GPU dimension; use block.x, block.y, block.z, "
           "thread.x, thread.y or thread.z");
  TransformStep one = s;
  one.args = {s.args[0]};
  return do_kind(k, one, it->second, t);
}

// [SECTION] Fusion

// Loads in `e` of tensor slot `t`.
template <class F>
void visit_loads(VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (auto& a : e.args) visit_loads(a, f);
}
template <class F>
void visit_loads(const VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (const auto& a : e.args) visit_loads(a, f);
}

Affine subst_axes(const Affine& a, const std::vector<std::string>& names,
                  const std::vector<Affine>& values) {
  Affine r = Affine::lit(a.constant);
  for (const auto& [n, c] : a.terms) {
    bool done = false;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) {
        r += values[i] * c;
        done = true;
        break;
      }
    if (!done) r += Affine::var(n, c);
  }
  return r;
}

int find_kernel_with_op(const Program& p, const std::string& op, const std::string& step) {
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].has_op(op) || p.kernels[i].name == op) return int(i);
  std::vector<std::string> names;
  for (const auto& k : p.kernels)
    for (const auto& o : k.op_names) names.push_back(o);
  refuse(step + ": there is no op named '" + op + "'; the ops are " + join(names));
}

bool identity_index(const std::vector<Affine>& idx, const Kernel& k) {
  size_t n = 0;
  for (const auto& a : k.axes)
    if (!a.reduce) ++n;
  if (idx.size() != n) return false;
  for (size_t d = 0; d < idx.size(); ++d)
    if (!(idx[d] == Affine::var(k.axes[d].name))) return false;
  return true;
}

struct Merge {
  std::vector<int> map_c;  // consumer slot → merged slot
};

// Adds the consumer's tensors (except `skip` graph id) to the producer, returns the slot map.
std::vector<int> merge_tensors(Kernel& into, const Kernel& from, graph::TensorId skip) {
  std::vector<int> map(from.tensors.size(), -1);
  for (size_t i = 0; i < from.tensors.size(); ++i) {
    const KernelTensor& t = from.tensors[i];
    if (t.id == skip && t.id >= 0) continue;
    int found = -1;
    for (size_t j = 0; j < into.tensors.size(); ++j)
      if ((t.id >= 0 && into.tensors[j].id == t.id) ||
          (t.id < 0 && into.tensors[j].id < 0 && into.tensors[j].name == t.name))
        found = int(j);
    if (found < 0) {
      into.tensors.push_back(t);
      found = int(into.tensors.size() - 1);
    }
    map[i] = found;
  }
  return map;
}

void remap(VExpr& e, const std::vector<int>& map) {
  visit_loads(e, [&](VExpr& l) {
    if (!l.computed) l.tensor = map[size_t(l.tensor)];
  });
}

// Drops tensor slots no phase or computed definition references any more.
void drop_unused_tensors(Kernel& k) {
  std::vector<bool> used(k.tensors.size(), false);
  auto mark = [&](const VExpr& e) {
    visit_loads(e, [&](const VExpr& l) {
      if (!l.computed) used[size_t(l.tensor)] = true;
    });
  };
  for (const auto& p : k.phases) {
    mark(p.value);
    if (p.out_tensor >= 0) used[size_t(p.out_tensor)] = true;
  }
  for (const auto& c : k.computed) mark(c.definition);
  std::vector<int> map(k.tensors.size(), -1);
  std::vector<KernelTensor> kept;
  for (size_t i = 0; i < k.tensors.size(); ++i)
    if (used[i]) {
      map[i] = int(kept.size());
      kept.push_back(k.tensors[i]);
    }
  k.tensors = kept;
  for (auto& p : k.phases) {
    remap(p.value, map);
    if (p.out_tensor >= 0) p.out_tensor = map[size_t(p.out_tensor)];
  }
  for (auto& c : k.computed) remap(c.definition, map);
  for (auto& s : k.stages)
    if (!s.computed) s.tensor = map[size_t(s.tensor)];
}

bool is_elementwise_kernel(const Kernel& k) {
  for (const auto& a : k.axes)
    if (a.reduce) return false;
  return k.phases.size() == 1 && k.phases[0].kind == PhaseKind::Map;
}

std::string why_not_elementwise(const Kernel& k) {
  for (const auto& a : k.axes)
    if (a.reduce)
      return k.name + " is not elementwise: each of its outputs combines " +
             std::to_string(a.extent) + " inputs along axis " + a.name +
             ", but an epilogue only "
             "ever sees one finished value of its producer at a time";
  return k.name + " is not a plain elementwise kernel";
}

// The producer output the consumer reads, checking that fusing saves its round trip.
graph::TensorId fused_tensor(const Program& p, const Kernel& prod, const Kernel& cons,
                             const std::string& step) {
  const Phase& last = prod.phases.back();
  const KernelTensor& out = prod.tensors[size_t(last.out_tensor)];
  bool reads = false;
  for (const auto& t : cons.tensors)
    reads = reads || (t.role == TensorRole::Input && t.id == out.id);
  if (!reads)
    refuse(step + ": " + cons.name + " does not read " + out.name + ", the output of " + prod.name);
  if (out.id >= 0) {
    for (graph::OpId c : p.graph->consumers(out.id)) {
      const std::string& n = p.graph->op(c).name;
      if (!cons.has_op(n))
        refuse(step + ": " + out.name + " is also read by " + n +
               ", so it would have to be "
               "written to memory anyway; fusing would not save its traffic");
    }
    for (graph::TensorId o : p.graph->graph_outputs())
      if (o == out.id)
        refuse(step + ": " + out.name + " is an output of the model and must be written");
  }
  return out.id;
}

std::string do_fuse(Program& p, const TransformStep& s, const Target& t) {
  if (s.args.size() < 2) refuse("fuse takes a producer op and one or more elementwise consumers");
  // An op named twice would fuse a kernel into itself: there is nothing to fuse, and saying so is
  // clearer than a success message about zero saved bytes.
  for (size_t a = 0; a < s.args.size(); ++a)
    for (size_t b = a + 1; b < s.args.size(); ++b)
      if (s.args[a] == s.args[b]) refuse("fuse: " + s.args[a] + " is named twice");
  std::string e;
  int64_t saved = 0;
  std::vector<std::string> fused;
  int pi = find_kernel_with_op(p, s.args[0], "fuse");
  for (size_t a = 1; a < s.args.size(); ++a) {
    const int ci = find_kernel_with_op(p, s.args[a], "fuse");
    if (ci == pi) continue;  // already fused
    Kernel prod = p.kernels[size_t(pi)];
    const Kernel& cons = p.kernels[size_t(ci)];
    if (!is_elementwise_kernel(cons))
      refuse("fuse(" + prod.name + ", " + s.args[a] + ") refused: " + why_not_elementwise(cons));
    const graph::TensorId tid = fused_tensor(p, prod, cons, "fuse");
    Phase& pm = prod.phases.back();
    const KernelTensor tt = prod.tensors[size_t(pm.out_tensor)];
    const Phase& cm = cons.phases[0];
    const KernelTensor& u = cons.tensors[size_t(cm.out_tensor)];
    if (u.shape != tt.shape)
      refuse("fuse refused: " + cons.name + " writes " + u.name + graph::shape_to_string(u.shape) +
             " but reads " + tt.name + graph::shape_to_string(tt.shape) +
             "; an epilogue produces exactly one output per output of " + prod.name);
    // Every read of t in the consumer must be at the element it writes.
    bool ok = identity_index(cm.out_index, cons);
    visit_loads(cm.value, [&](const VExpr& l) {
      if (!l.computed && cons.tensors[size_t(l.tensor)].id == tid)
        ok = ok && identity_index(l.index, cons);
    });
    if (!ok)
      refuse("fuse refused: " + cons.name + " reads " + tt.name +
             " in a different order than it "
             "writes " +
             u.name +
             ", so an epilogue (which sees one element at a time) cannot "
             "compute it");
    const std::vector<int> map = merge_tensors(prod, cons, tid);
    std::vector<std::string> caxes;
    for (const auto& ax : cons.axes) caxes.push_back(ax.name);
    VExpr producer_value = pm.value;
    VExpr v = cm.value;
    const int coff = int(prod.computed.size());
    std::function<void(VExpr&)> go = [&](VExpr& x) {
      if (x.kind == VExpr::Kind::Load && !x.computed && cons.tensors[size_t(x.tensor)].id == tid) {
        x = producer_value;
        return;
      }
      if (x.kind == VExpr::Kind::Load) {
        for (auto& i : x.index) i = subst_axes(i, caxes, pm.out_index);
        x.tensor = x.computed ? x.tensor + coff : map[size_t(x.tensor)];
      }
      for (auto& c : x.args) go(c);
    };
    go(v);
    std::vector<Affine> out_index;
    for (const auto& i : cm.out_index) out_index.push_back(subst_axes(i, caxes, pm.out_index));
    pm.value = v;
    pm.out_tensor = map[size_t(cm.out_tensor)];
    pm.out_index = out_index;
    for (const auto& c : cons.computed) {
      ComputedTensor cc = c;
      remap(cc.definition, map);
      prod.computed.push_back(cc);
    }
    for (const auto& n : cons.op_names) prod.op_names.push_back(n);
    for (auto o : cons.ops) prod.ops.push_back(o);
    prod.name += "+" + cons.name;
    prod.summary += " → " + cons.summary;
    drop_unused_tensors(prod);
    normalize_tensor_order(prod);
    saved += 2 * tt.bytes();
    fused.push_back(cons.name);
    // The fused kernel runs where the consumer ran: every input of both is ready there.
    p.kernels[size_t(ci)] = prod;
    p.kernels.erase(p.kernels.begin() + pi);
    pi = ci > pi ? ci - 1 : ci;
    (void)t;
  }
  p.current = pi;
  const Kernel& k = p.kernels[size_t(pi)];
  e = join(fused) + " now run" + (fused.size() == 1 ? "s" : "") + " in the epilogue of " +
      k.op_names[0] + ": each value is finished while it is still in a register, right after " +
      "it is computed. The intermediate tensor" + (fused.size() == 1 ? " is" : "s are") +
      " no longer written and read back: " + format_bytes(saved) + " of memory traffic and " +
      std::to_string(fused.size()) + " kernel launch" + (fused.size() == 1 ? "" : "es") +
      " saved. The loop nest of " + k.op_names[0] + " is unchanged.";
  return e;
}

std::string do_compute_at(Program& p, const TransformStep& s, const Target& t) {
  need_args(s, 2, 2, "a producer op and a consumer op, plus at=LOOP or at=inline");
  const std::string at = s.option("at", "inline");
  const int pi = find_kernel_with_op(p, s.args[0], "compute_at");
  const int ci = find_kernel_with_op(p, s.args[1], "compute_at");
  if (pi == ci)
    refuse("compute_at: " + s.args[0] + " and " + s.args[1] + " are already one kernel");
  const Kernel& prod = p.kernels[size_t(pi)];
  Kernel cons = p.kernels[size_t(ci)];
  if (!is_elementwise_kernel(prod))
    refuse("compute_at refused: " + prod.name + " is not elementwise, so computing it inside " +
           cons.name + " would repeat its whole reduction at every use");
  const graph::TensorId tid = fused_tensor(p, prod, cons, "compute_at");
  const Phase& pm = prod.phases[0];
  if (!identity_index(pm.out_index, prod))
    refuse("compute_at refused: " + prod.name + " writes its output in a permuted order");
  const KernelTensor tt = prod.tensors[size_t(pm.out_tensor)];
  // The definition over d0, d1, ... with the producer's inputs merged into the consumer.
  const std::vector<int> map = merge_tensors(cons, prod, tt.id);
  ComputedTensor c;
  c.id = tt.id;
  c.name = tt.name;
  c.op_name = prod.name;
  c.shape = tt.shape;
  c.definition = pm.value;
  std::vector<std::string> paxes;
  std::vector<Affine> dvars;
  for (size_t d = 0; d < prod.axes.size(); ++d) {
    paxes.push_back(prod.axes[d].name);
    dvars.push_back(Affine::var(def_var(d)));
  }
  visit_loads(c.definition, [&](VExpr& l) {
    for (auto& i : l.index) i = subst_axes(i, paxes, dvars);
    if (!l.computed) l.tensor = map[size_t(l.tensor)];
    l.check_dims.assign(l.index.size(), false);
  });
  cons.computed.push_back(c);
  const int cslot = int(cons.computed.size() - 1);
  int tslot = -1;
  for (size_t i = 0; i < cons.tensors.size(); ++i)
    if (cons.tensors[i].id == tid) tslot = int(i);
  for (auto& ph : cons.phases)
    visit_loads(ph.value, [&](VExpr& l) {
      if (!l.computed && l.tensor == tslot) {
        l.computed = true;
        l.tensor = cslot;
      }
    });
  for (const auto& n : prod.op_names) cons.op_names.insert(cons.op_names.begin(), n);
  for (auto o : prod.ops) cons.ops.insert(cons.ops.begin(), o);
  cons.name = prod.name + "@" + cons.name;
  drop_unused_tensors(cons);
  normalize_tensor_order(cons);
  std::string e;
  // How often the producer is evaluated: once per read (inline) or once per tile element.
  if (at != "inline") {
    const int li = need_loop(cons, s, at);
    StageSpec st;
    st.tensor = cslot;
    st.computed = true;
    st.at = at;
    st.buffer = c_ident(tt.name) + "_tile";
    st.level = MemLevel::Scratchpad;
    cons.stages.push_back(st);
    LoweredKernel lk;
    try {
      lk = build_loop_tree(cons);
    } catch (const ScheduleError& err) {
      refuse(std::string("compute_at refused: ") + err.what());
    }
    int64_t bytes = 0, evals = 0;
    for (const auto& pl : lk.stages)
      if (pl.computed) {
        bytes = std::max(bytes, pl.bytes());
        evals += pl.executions * pl.footprint;
      }
    if (bytes <= t.register_bytes_per_thread) cons.stages.back().level = MemLevel::Registers;
    check_or_refuse(cons, t, "compute_at refused: ");
    (void)li;
    e = prod.name + " is computed inside " + cons.op_names.back() + " at loop " + at +
        ": a tile of " + tt.name + " (" + format_bytes(bytes) + ", in " +
        mem_level_name(cons.stages.back().level) + ") is filled at each iteration of " + at +
        " and then reused. " + prod.name + " is evaluated " + count_text(evals) + " times for " +
        count_text(tt.numel()) + " elements (" +
        (evals > tt.numel() ? "×" + std::to_string((evals + tt.numel() - 1) / tt.numel()) +
                                  " recompute where tiles overlap or repeat"
                            : "no recompute") +
        "), and " + tt.name + " (" + format_bytes(tt.bytes()) +
        ") is never written to memory or read back.";
  } else {
    check_or_refuse(cons, t, "compute_at refused: ");
    const LoweredKernel lk = build_loop_tree(cons);
    int64_t evals = 0;
    // Each read of the inlined value evaluates the producer once.
    std::function<int64_t(const std::vector<Node>&, int64_t)> walk =
        [&](const std::vector<Node>& nodes, int64_t mult) -> int64_t {
      int64_t n = 0;
      for (const auto& node : nodes) {
        if (node.kind == Node::Kind::Loop)
          n += walk(node.children, mult * lk.kernel.loops[size_t(node.loop)].extent);
        else if (node.kind == Node::Kind::If)
          n += walk(node.children, mult);
        else if (node.kind == Node::Kind::Stmt) {
          int reads = 0;
          visit_loads(cons.phases[size_t(node.phase)].value,
                      [&](const VExpr& l) { reads += l.computed && l.tensor == cslot ? 1 : 0; });
          n += mult * reads;
        }
      }
      return n;
    };
    evals = walk(lk.body, 1);
    e = prod.name + " is inlined into " + cons.op_names.back() + ": every read of " + tt.name +
        " recomputes it from its inputs. It is evaluated " + count_text(evals) + " times for " +
        count_text(tt.numel()) + " elements" +
        (evals > tt.numel()
             ? " (×" + std::to_string((evals + tt.numel() - 1) / tt.numel()) + " recompute)"
             : "") +
        ", and " + tt.name + " (" + format_bytes(tt.bytes()) +
        ") never goes to memory. Inlining trades arithmetic for traffic; compute_at with a loop "
        "stores a tile once and reuses it instead.";
  }
  p.kernels[size_t(ci)] = cons;
  p.kernels.erase(p.kernels.begin() + pi);
  p.current = ci > pi ? ci - 1 : ci;
  return e;
}

std::string do_im2col(Program& p, const TransformStep& s, const Target& t) {
  need_args(s, 1, 1, "the conv op");
  const int ki = find_kernel_with_op(p, s.args[0], "im2col");
  Kernel conv = p.kernels[size_t(ki)];
  const graph::Op& op = p.graph->op(conv.ops[0]);
  if (op.kind != graph::OpKind::Conv2D)
    refuse("im2col: " + conv.name + " is a " + graph::op_kind_name(op.kind) +
           ", not a convolution");
  if (op.attrs.groups != 1)
    refuse("im2col: " + op.name + " is a grouped convolution (groups=" +
           std::to_string(op.attrs.groups) + "); im2col here builds one matrix for all channels");
  for (const auto& ts : conv.tensors)
    if (ts.id < 0) refuse("im2col: " + op.name + " already reads an unfolded matrix");
  const graph::Tensor& x = p.graph->tensor(op.inputs[0]);
  const graph::Tensor& w = p.graph->tensor(op.inputs[1]);
  const graph::Tensor& y = p.graph->tensor(op.outputs[0]);
  const int64_t N = x.shape[0], C = x.shape[1], R = w.shape[2], S = w.shape[3];
  const int64_t P = y.shape[2], Q = y.shape[3];
  const int64_t rows = N * P * Q, cols = C * R * S;
  // The unfold kernel: cols[(n*P + p)*Q + q, (c*R + r)*S + s] = x[n, c, h, w] (0 in the padding).
  Kernel unfold;
  unfold.name = op.name + ".im2col";
  unfold.op_names = {unfold.name};
  unfold.ops = {conv.ops[0]};
  unfold.summary = "im2col";
  int xs = -1;
  for (size_t i = 0; i < conv.tensors.size(); ++i)
    if (conv.tensors[i].id == op.inputs[0]) xs = int(i);
  if (xs < 0)
    refuse("im2col: " + op.name + "'s input is computed inside the kernel; undo that first");
  unfold.tensors.push_back(conv.tensors[size_t(xs)]);
  KernelTensor m;
  m.id = -1;
  m.name = op.name + "_cols";
  m.role = TensorRole::Output;
  m.shape = {rows, cols};
  m.strides = {cols, 1};
  m.pad = {0, 0};
  unfold.tensors.push_back(m);
  for (const char* a : {"n", "p", "q", "c", "r", "s"}) {
    int64_t ext = 1;
    for (const auto& ax : conv.axes)
      if (ax.name == a) ext = ax.extent;
    unfold.axes.push_back({a, ext, false});
  }
  Affine row = Affine::var("n", P * Q) + Affine::var("p", Q) + Affine::var("q");
  Affine col = Affine::var("c", R * S) + Affine::var("r", S) + Affine::var("s");
  VExpr xl;
  bool found = false;
  visit_loads(conv.phases[1].value, [&](const VExpr& l) {
    if (!l.computed && l.tensor == xs) {
      xl = l;
      found = true;
    }
  });
  if (!found) refuse("im2col: could not find the input read in " + conv.name);
  xl.tensor = 0;
  Phase mp;
  mp.kind = PhaseKind::Map;
  mp.value = xl;
  mp.out_tensor = 1;
  mp.out_index = {row, col};
  unfold.phases.push_back(mp);
  reset_schedule(unfold);
  // The GEMM reads the unfolded matrix instead of the image.
  KernelTensor min = m;
  min.role = TensorRole::Input;
  conv.tensors.push_back(min);
  const int ms = int(conv.tensors.size() - 1);
  visit_loads(conv.phases[1].value, [&](VExpr& l) {
    if (!l.computed && l.tensor == xs) {
      l.tensor = ms;
      l.index = {row, col};
      l.checked = false;
      l.pad_value = 0;
    }
  });
  for (auto& st : conv.stages)
    if (!st.computed && st.tensor == xs) st.tensor = ms;
  drop_unused_tensors(conv);
  normalize_tensor_order(conv);
  conv.summary = "GEMM on " + m.name;
  check_or_refuse(conv, t, "im2col refused: ");
  p.kernels[size_t(ki)] = conv;
  p.kernels.insert(p.kernels.begin() + ki, unfold);
  p.current = ki + 1;
  const int64_t xb = x.numel() * 4, mb = m.numel() * 4;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.1f", double(mb) / double(xb));
  return op.name + " is now a matrix multiply: " + unfold.name +
         " copies every input window into "
         "one row of " +
         m.name + " [" + std::to_string(rows) + " × " + std::to_string(cols) +
         "] (rows = N·P·Q output pixels, columns = C·R·S window taps), and the convolution reads "
         "that matrix as a GEMM of " +
         std::to_string(rows) + "×" + std::to_string(y.shape[1]) + "×" + std::to_string(cols) +
         ". The price is explicit: " + m.name + " is " + format_bytes(mb) + " against " +
         format_bytes(xb) + " for the input itself (" + ratio + "×), written once and read back, " +
         format_bytes(2 * mb) +
         " of extra traffic, because overlapping windows copy the same pixel up to R·S = " +
         std::to_string(R * S) + " times.";
}

// [SECTION] Memory primitives

std::string level_capacity_text(MemLevel l, const Target& t) {
  switch (l) {
    case MemLevel::Shared:
      return format_bytes(t.smem_bytes_per_block) + " of shared memory a block may use";
    case MemLevel::Scratchpad:
      return format_bytes(t.cpu_l1_bytes) + " L1 cache";
    case MemLevel::Registers:
      return format_bytes(t.register_bytes_per_thread) + " of registers per thread";
    case MemLevel::Global:
      return "global memory";
  }
  return "";
}

std::string do_stage(Kernel& k, const TransformStep& s, const Target& t) {
  need_args(s, 2, 3,
            "a tensor, a level (shared, scratchpad or registers), at=LOOP and optionally "
            "double");
  const std::string tn = s.args[0];
  static const std::map<std::string, MemLevel> levels = {{"shared", MemLevel::Shared},
                                                         {"scratchpad", MemLevel::Scratchpad},
                                                         {"registers", MemLevel::Registers},
                                                         {"reg", MemLevel::Registers}};
  auto lv = levels.find(s.args[1]);
  if (lv == levels.end())
    refuse("stage: '" + s.args[1] + "' is not a memory level; use shared, scratchpad or registers");
  const bool dbl = s.args.size() == 3 && (s.args[2] == "double" || s.args[2] == "double_buffer");
  if (s.args.size() == 3 && !dbl)
    refuse("stage: unknown flag '" + s.args[2] + "'; the only flag is double");
  const std::string at = s.option("at");
  if (at.empty()) refuse("stage: say where the tile is loaded, e.g. at=k.o");
  need_loop(k, s, at);
  StageSpec st;
  st.level = lv->second;
  st.at = at;
  st.double_buffer = dbl;
  int ti = k.find_tensor(tn);
  if (ti >= 0) {
    if (k.tensors[size_t(ti)].role == TensorRole::Output)
      refuse("stage: " + tn +
             " is written by this kernel, not read; a staged tile is a copy of "
             "an input kept close because it is read many times (outputs already accumulate in "
             "registers)");
    st.tensor = ti;
  } else {
    ti = k.find_computed(tn);
    if (ti < 0) {
      std::vector<std::string> names;
      for (const auto& x : k.tensors)
        if (x.role == TensorRole::Input) names.push_back(x.name);
      refuse("stage: kernel " + k.name + " reads no tensor named '" + tn + "'; it reads " +
             join(names));
    }
    st.tensor = ti;
    st.computed = true;
  }
  for (const auto& o : k.stages)
    if (o.tensor == st.tensor && o.computed == st.computed && o.at == at)
      refuse("stage: " + tn + " is already staged at " + at);
  const char* suffix = st.level == MemLevel::Shared       ? "_shared"
                       : st.level == MemLevel::Scratchpad ? "_scratch"
                                                          : "_reg";
  st.buffer = c_ident(tn) + suffix;
  for (int n = 2; std::any_of(k.stages.begin(), k.stages.end(),
                              [&](const StageSpec& o) { return o.buffer == st.buffer; });
       ++n)
    st.buffer = c_ident(tn) + suffix + std::to_string(n);
  Kernel next = k;
  next.stages.push_back(st);
  check_or_refuse(next, t, "stage(" + tn + ", " + s.args[1] + ", at=" + at + ") refused: ");
  k = next;
  const LoweredKernel lk = build_loop_tree(k);
  const StagePlacement* pl = nullptr;
  for (const auto& x : lk.stages)
    if (x.spec == int(k.stages.size() - 1)) pl = &x;
  std::string e = "Tile " + st.buffer + " holds " + dims_text(pl->extents) + " elements of " + tn +
                  " (" + format_bytes(pl->bytes()) + (dbl ? ", ×2 for double-buffering" : "") +
                  ") in " + mem_level_name(st.level) + ", reloaded " + count_text(pl->executions) +
                  " times (once per iteration of " + at + "). ";
  const int64_t before = pl->uses_per_copy * pl->executions;
  const int64_t after = pl->footprint * pl->executions;
  if (pl->source < 0 && after > 0 && before <= after) {
    // No reuse inside the tile: staging only adds a copy. Say so, and what would help.
    e += "Each copied element is read only once from the tile, so reads of " + tn + " from " +
         (st.level == MemLevel::Registers ? "memory" : "global memory") + " stay at " +
         count_text(after) +
         ": this stage adds a copy and saves nothing. Stage at a loop further " +
         "out (so the tile is reused across the loops inside it) or tile so that an inner loop " +
         "does not index " + tn + ". ";
  } else if (pl->source < 0) {
    e += "Reads of " + tn + " from " +
         (st.level == MemLevel::Registers ? "memory" : "global memory") + " drop from " +
         count_text(before) + " to " + count_text(after);
    if (after > 0)
      e += " (each copied element is then read " + std::to_string(before / after) +
           "× from the tile)";
    e += ". ";
  } else {
    e += "It is filled from the enclosing tile " + lk.stages[size_t(pl->source)].buffer +
         ", so each element fetched once from there is read " +
         std::to_string(pl->uses_per_copy / std::max<int64_t>(1, pl->footprint)) + "× from " +
         mem_level_name(st.level) + ". ";
  }
  e += "It uses " + format_bytes(pl->bytes() * (dbl ? 2 : 1)) + " of the " +
       level_capacity_text(st.level, t) + ".";
  if (st.level == MemLevel::Shared)
    e += " All threads of a block copy it together, with a barrier before it is read and another "
         "before it is overwritten" +
         std::string(dbl ? "; with two buffers alternating, the second barrier is not needed."
                         : ".");
  return e;
}

std::string do_block_order(Kernel& k, const TransformStep& s, const Target& t) {
  need_args(s, 1, 2, "row, or grouped and a group size");
  Kernel next = k;
  if (s.args[0] == "row" || s.args[0] == "rowmajor") {
    next.block_order = BlockOrder::RowMajor;
  } else if (s.args[0] == "grouped") {
    const int64_t g = s.args.size() == 2 ? parse_int(s, s.args[1], "the group size") : 8;
    if (g < 1) refuse("block_order: a group must hold at least one row of tiles");
    next.block_order = BlockOrder::Grouped;
    next.group = g;
  } else {
    refuse("block_order: '" + s.args[0] + "' is not an order; use row or grouped");
  }
  check_or_refuse(next, t, "block_order refused: ");
  // What the first wave of blocks touches in each order: distinct rows and columns of tiles.
  int64_t total = 1;
  for (const auto& l : next.loops)
    if (is_block(l.kind)) total *= l.extent;
  const int64_t wave = std::min<int64_t>(total, t.sm_count);
  auto touched = [&](const Kernel& kk) {
    std::set<int64_t> rows, cols;
    for (int64_t b = 0; b < wave; ++b) {
      auto c = block_coords(kk, b);
      cols.insert(c[0]);
      rows.insert(c[1]);
    }
    return std::make_pair(rows.size(), cols.size());
  };
  Kernel row = next;
  row.block_order = BlockOrder::RowMajor;
  auto [r0, c0] = touched(row);
  auto [r1, c1] = touched(next);
  k = next;
  std::string e = next.block_order == BlockOrder::Grouped
                      ? "Blocks now launch in groups of " + std::to_string(next.group) +
                            " rows of tiles, walking down a column of tiles before moving right "
                            "(Triton's grouped ordering), on a 1-D grid. "
                      : "Blocks launch in row-major order: x fastest. ";
  e += "The first " + std::to_string(wave) + " blocks (one wave on a " +
       std::to_string(t.sm_count) + "-SM GPU) touch " + std::to_string(r1) + " rows × " +
       std::to_string(c1) + " columns of tiles = " + std::to_string(r1 + c1) +
       " operand panels that must share L2";
  if (next.block_order == BlockOrder::Grouped)
    e += ", against " + std::to_string(r0) + " + " + std::to_string(c0) + " = " +
         std::to_string(r0 + c0) + " in row-major order";
  return e + ". Results are identical; only which data is reused from L2 changes.";
}

std::string do_layout(Program& p, const TransformStep& s, const Target& t) {
  need_args(s, 2, 2, "a tensor and a layout (rowmajor, nchw, nhwc, transposed)");
  static const std::map<std::string, graph::Layout> layouts = {
      {"rowmajor", graph::Layout::RowMajor},
      {"nchw", graph::Layout::NCHW},
      {"nhwc", graph::Layout::NHWC},
      {"transposed", graph::Layout::Transposed}};
  auto it = layouts.find(s.args[1]);
  if (it == layouts.end())
    refuse("layout: '" + s.args[1] + "' is not a layout; use rowmajor, nchw, nhwc or transposed");
  const auto tid = p.graph->find_tensor(s.args[0]);
  if (!tid) refuse("layout: there is no tensor named '" + s.args[0] + "'");
  const graph::Tensor& gt = p.graph->tensor(*tid);
  if ((it->second == graph::Layout::NCHW || it->second == graph::Layout::NHWC) && gt.rank() != 4)
    refuse("layout: " + gt.name + " is " + graph::shape_to_string(gt.shape) +
           "; NCHW and NHWC "
           "describe 4-D images [N, C, H, W]");
  if (it->second == graph::Layout::Transposed && gt.rank() < 2)
    refuse("layout: " + gt.name + " has fewer than two dims, so there is nothing to transpose");
  const std::vector<int64_t> strides = graph::layout_strides(gt.shape, it->second);
  std::string e = gt.name + " is now stored " + graph::layout_name(it->second) + " (strides [";
  for (size_t d = 0; d < strides.size(); ++d) e += (d ? ", " : "") + std::to_string(strides[d]);
  e += "]). ";
  Program next = p;
  for (auto& k : next.kernels) {
    for (auto& kt : k.tensors) {
      if (kt.id != *tid) continue;
      if (kt.shape != gt.shape)
        refuse("layout: kernel " + k.name + " reads " + gt.name +
               " as a flat array (a reshape), "
               "which needs it row-major");
      // Stride along the innermost loop that reads it, before and after.
      const int slot = int(&kt - k.tensors.data());
      auto inner_stride = [&](const std::vector<int64_t>& st) -> std::pair<std::string, int64_t> {
        if (k.loops.empty()) return {"", 0};
        const LoweredKernel lk = build_loop_tree(k);
        for (const auto& ph : lk.phases) {
          std::pair<std::string, int64_t> r{"", 0};
          visit_loads(ph.phase.value, [&](const VExpr& l) {
            if (l.computed || l.tensor != slot || l.stage >= 0) return;
            std::vector<int> nest;
            for (int i = 0; i < lk.region_start; ++i) nest.push_back(i);
            for (int i : lk.phases[size_t(&ph - lk.phases.data())].loops) nest.push_back(i);
            if (nest.empty()) return;
            const std::string inner = k.loops[size_t(nest.back())].name;
            int64_t str = 0;
            for (size_t d = 0; d < l.index.size(); ++d) str += l.index[d].coef(inner) * st[d];
            r = {inner, str};
          });
          if (!r.first.empty()) return r;
        }
        return {"", 0};
      };
      auto [loop_before, before] = inner_stride(kt.strides);
      kt.layout = it->second;
      kt.strides = repack_strides(kt.shape, strides, kt.pad);
      auto [loop_after, after] = inner_stride(kt.strides);
      if (!loop_after.empty())
        e += "In " + k.name + ", the innermost loop " + loop_after + " now steps through " +
             gt.name + " " + std::to_string(std::abs(after)) + " element" +
             (std::abs(after) == 1 ? "" : "s") + " at a time (was " +
             std::to_string(std::abs(before)) + ")" +
             (std::abs(after) <= 1 && std::abs(before) > 1
                  ? ": consecutive iterations now share cache lines. "
              : std::abs(after) > 1 && std::abs(before) <= 1
                  ? ": each iteration now lands on a different cache line. "
                  : ". ");
      (void)loop_before;
    }
    check_or_refuse(k, t, "layout refused: ");
  }
  e += "A real program must also store the data this way: the producer writes it, or a "
       "transposing copy runs once.";
  p = next;
  return e;
}

std::string do_pad(Program& p, const TransformStep& s, const Target& t) {
  need_args(s, 3, 3, "a tensor or tile name, a dim and an amount");
  const int64_t dim = parse_int(s, s.args[1], "the dim");
  const int64_t amount = parse_int(s, s.args[2], "the amount");
  if (amount < 0 || amount > 64)
    refuse("pad: the amount must be between 0 and 64 elements, got " + std::to_string(amount));
  Kernel& k = p.kernels[size_t(p.current)];
  for (auto& st : k.stages) {
    if (st.buffer != s.args[0]) continue;
    const LoweredKernel before_lk = build_loop_tree(k);
    size_t rank = 0;
    for (const auto& pl : before_lk.stages)
      if (k.stages[size_t(pl.spec)].buffer == st.buffer) rank = pl.extents.size();
    if (dim < 0 || dim >= int64_t(rank))
      refuse("pad: tile " + st.buffer + " has " + std::to_string(rank) + " dims; dim " +
             std::to_string(dim) + " does not exist");
    const int64_t before = shared_read_conflict_degree(k, st.buffer, t);
    Kernel next = k;
    for (auto& o : next.stages)
      if (o.buffer == st.buffer) {
        o.pad.resize(rank, 0);
        o.pad[size_t(dim)] += amount;
      }
    check_or_refuse(next, t, "pad refused: ");
    const int64_t after = shared_read_conflict_degree(next, st.buffer, t);
    k = next;
    std::string e = "Each row of tile " + st.buffer + " along dim " + std::to_string(dim) +
                    " gets " + std::to_string(amount) + " unused element" +
                    (amount == 1 ? "" : "s") + ", changing the distance between rows. ";
    if (before > 0)
      e += "A warp's read of the tile in the main loop now hits " +
           (after == 1 ? std::string("32 different banks (conflict-free)")
                       : "banks " + std::to_string(after) + "-way conflicted") +
           "; before it was " +
           (before == 1 ? std::string("conflict-free")
                        : std::to_string(before) + "-way conflicted") +
           " (a " + std::to_string(before) + "-way conflict serializes the read into " +
           std::to_string(before) + " passes).";
    else
      e += "No thread-bound loop indexes this tile, so bank conflicts do not arise in its reads.";
    return e;
  }
  // A tensor in memory: every kernel that touches it sees the larger pitch.
  const auto tid = p.graph->find_tensor(s.args[0]);
  if (!tid) refuse("pad: there is no tile or tensor named '" + s.args[0] + "'");
  const graph::Tensor& gt = p.graph->tensor(*tid);
  if (dim < 0 || dim >= gt.rank())
    refuse("pad: " + gt.name + " has " + std::to_string(gt.rank()) + " dims; dim " +
           std::to_string(dim) + " does not exist");
  int64_t old_alloc = 0, new_alloc = 0;
  for (auto& kk : p.kernels)
    for (auto& kt : kk.tensors) {
      if (kt.id != *tid) continue;
      if (kt.shape != gt.shape)
        refuse("pad: kernel " + kk.name + " reads " + gt.name + " as a flat array (a reshape)");
      old_alloc = kt.alloc_elems();
      kt.pad.resize(kt.shape.size(), 0);
      kt.pad[size_t(dim)] += amount;
      kt.strides = repack_strides(kt.shape, kt.strides, kt.pad);
      new_alloc = kt.alloc_elems();
    }
  return gt.name + " dim " + std::to_string(dim) + " is padded by " + std::to_string(amount) +
         " element" + (amount == 1 ? "" : "s") + ": its buffer grows from " +
         format_bytes(old_alloc * 4) + " to " + format_bytes(new_alloc * 4) +
         ". Padding changes which cache sets and banks consecutive rows map to; the values are "
         "unchanged.";
}

// [SECTION] Dispatch

std::string apply_to(Program& p, const TransformStep& s, const Target& t) {
  if (p.kernels.empty()) refuse("the program has no kernels");
  // option() takes the first of a repeated key; the learner meant one of them, and picking one
  // silently would schedule something else than what they read in their step.
  for (size_t a = 0; a < s.options.size(); ++a)
    for (size_t b = a + 1; b < s.options.size(); ++b)
      if (s.options[a].first == s.options[b].first)
        refuse(s.name + ": " + s.options[a].first + "= is given twice (" + s.options[a].first +
               "=" + s.options[a].second + " and " + s.options[b].first + "=" +
               s.options[b].second + "); give it once");
  Kernel& k = p.kernels[size_t(p.current)];
  const std::string& n = s.name;
  if (n == "kernel") {
    need_args(s, 1, 1, "an op name");
    p.current = find_kernel_with_op(p, s.args[0], "kernel");
    return "Steps now apply to kernel " + p.kernels[size_t(p.current)].name + ".";
  }
  if (n == "split" || n == "tile") {
    if (n == "tile" && s.args.size() == 4) {
      const int64_t fa = parse_int(s, s.args[2], "the first factor");
      const int64_t fb = parse_int(s, s.args[3], "the second factor");
      std::string e = do_split(k, s, s.args[0], fa) + " ";
      e += do_split(k, s, s.args[1], fb) + " ";
      TransformStep r;
      r.name = "reorder";
      r.args = {s.args[0] + ".o", s.args[1] + ".o", s.args[0] + ".i", s.args[1] + ".i"};
      return e + do_reorder(k, r, t);
    }
    need_args(s, 2, 2, "a loop and a factor, e.g. tile(i, 64), or tile(i, j, 64, 64)");
    const int64_t f = parse_int(s, s.args[1], "the factor");
    Kernel next = k;
    std::string e = do_split(next, s, s.args[0], f);
    check_or_refuse(next, t, n + " refused: ");
    k = next;
    return e;
  }
  if (n == "reorder") return do_reorder(k, s, t);
  if (n == "unroll") return do_kind(k, s, LoopKind::Unrolled, t);
  if (n == "vectorize") return do_kind(k, s, LoopKind::Vectorized, t);
  if (n == "parallel" || n == "parallelize") return do_kind(k, s, LoopKind::Parallel, t);
  if (n == "bind") return do_bind(k, s, t);
  if (n == "stage") return do_stage(k, s, t);
  if (n == "block_order") return do_block_order(k, s, t);
  if (n == "fuse") return do_fuse(p, s, t);
  if (n == "compute_at") return do_compute_at(p, s, t);
  if (n == "im2col") return do_im2col(p, s, t);
  if (n == "layout") return do_layout(p, s, t);
  if (n == "pad") return do_pad(p, s, t);
  refuse("unknown step '" + n +
         "'; steps are kernel, fuse, compute_at, split, tile, reorder, "
         "unroll, vectorize, parallel, bind, stage, block_order, layout, pad, im2col");
}

}  // namespace

int64_t shared_read_conflict_degree(const Kernel& k, const std::string& buffer, const Target& t) {
  const LoweredKernel lk = build_loop_tree(k);
  int64_t tx = 1, ty = 1;
  std::string vx, vy;
  for (const auto& l : k.loops) {
    if (l.kind == LoopKind::ThreadX) tx = l.extent, vx = l.name;
    if (l.kind == LoopKind::ThreadY) ty = l.extent, vy = l.name;
  }
  if (vx.empty() && vy.empty()) return 0;
  int64_t worst = 0;
  for (const auto& ph : lk.phases)
    visit_loads(ph.phase.value, [&](const VExpr& l) {
      if (l.stage < 0 || lk.stages[size_t(l.stage)].buffer != buffer) return;
      const StagePlacement& pl = lk.stages[size_t(l.stage)];
      Affine off;
      for (size_t d = 0; d < l.buffer_index.size(); ++d) off += l.buffer_index[d] * pl.strides[d];
      const int64_t sx = vx.empty() ? 0 : off.coef(vx), sy = vy.empty() ? 0 : off.coef(vy);
      if (sx == 0 && sy == 0) return;
      // Lanes 0..31 of the first warp: lane = x + tx*y; each reads one 4-byte word.
      std::map<int64_t, std::set<int64_t>> bank_words;
      for (int64_t lane = 0; lane < std::min<int64_t>(t.warp_size, tx * ty); ++lane) {
        const int64_t word = (lane % tx) * sx + (lane / tx) * sy;
        bank_words[((word % t.smem_banks) + t.smem_banks) % t.smem_banks].insert(word);
      }
      int64_t deg = 0;
      for (const auto& [b, w] : bank_words) deg = std::max<int64_t>(deg, int64_t(w.size()));
      worst = std::max(worst, deg);
    });
  return worst;
}

StepResult apply_step(const Program& p, const TransformStep& step, const Target& target) {
  StepResult r;
  Program next = p;
  try {
    r.explanation = apply_to(next, step, target);
    r.ok = true;
    r.program = std::move(next);
  } catch (const Refused& f) {
    r.ok = false;
    r.explanation = f.reason;
  } catch (const ScheduleError& e) {
    r.ok = false;
    r.explanation = e.what();
  }
  return r;
}

// [SECTION] History

History::History(Program initial, Target target)
    : m_initial(std::move(initial)), m_target(target) {}

StepResult History::apply(const TransformStep& step) {
  StepResult r = apply_step(current(), step, m_target);
  if (!r.ok) return r;
  m_entries.resize(m_cursor);
  m_entries.push_back({step, r.program, r.explanation});
  ++m_cursor;
  return r;
}

bool History::undo() {
  if (!can_undo()) return false;
  --m_cursor;
  return true;
}

bool History::redo() {
  if (!can_redo()) return false;
  ++m_cursor;
  return true;
}

const Program& History::current() const {
  return m_cursor == 0 ? m_initial : m_entries[m_cursor - 1].program;
}

std::vector<TransformStep> History::steps() const {
  std::vector<TransformStep> v;
  for (size_t i = 0; i < m_cursor; ++i) v.push_back(m_entries[i].step);
  return v;
}

std::optional<StepRefusal> History::first_refused(const Target& t) const {
  Program p = m_initial;
  for (size_t i = 0; i < m_cursor; ++i) {
    StepResult r = apply_step(p, m_entries[i].step, t);
    if (!r.ok) return StepRefusal{i, m_entries[i].step.to_string(), r.explanation};
    p = std::move(r.program);
  }
  return std::nullopt;
}

History History::replay(Program initial, std::string_view text, Target target) {
  History h(std::move(initial), target);
  for (const TransformStep& s : parse_steps(text)) {
    StepResult r = h.apply(s);
    if (!r.ok)
      throw ScheduleError(
          (s.line ? std::to_string(s.line) + ":" + std::to_string(s.col) + ": " : "") +
          s.to_string() + " refused: " + r.explanation);
  }
  return h;
}

}  // namespace tilescope::schedule
