// The step table and dispatch: apply_step looks a step up in one table of step kinds, checks its
// arguments and options against it and runs its primitive on a copy of the program; plus the
// helpers every primitive shares.
//
// Index: [SECTION] Helpers  [SECTION] Dispatch
// The primitives: transform_loops.cpp, transform_fusion.cpp, transform_memory.cpp; the step text:
// transform_text.cpp; History: transform_history.cpp.
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/lower.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace tilescope::schedule::detail {

// [SECTION] Helpers

namespace {

std::string loop_names(const Kernel& k) {
  std::vector<std::string> v;
  for (const auto& l : k.loops) v.push_back(l.name);
  return join(v);
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
      for (const auto& pl : lk.stages) b = std::max(b, pl.footprint * k.tensors[t].elem_bytes());
      out.emplace_back(k.tensors[t].name, b);
    } catch (const ScheduleError&) {
      // The tensor is not read inside this loop (e.g. a bias read by the epilogue only).
    }
  }
  return out;
}

}  // namespace

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
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

int need_loop(const Kernel& k, std::string_view step, const std::string& name) {
  const int l = k.find_loop(name);
  if (l < 0)
    refuse(std::string(step) + ": kernel " + k.name + " has no loop named '" + name +
           "'; its loops are " + loop_names(k));
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
  // The target machine's own L1: one SM's on a GPU, one core's on a CPU (issue #26: the GPU
  // machines were told of the default x86 core's 48 KiB).
  const bool gpu = t.gpu_l1_bytes > 0;
  const int64_t l1 = gpu ? t.gpu_l1_bytes : t.cpu_l1_bytes;
  const std::string whose = t.machine.empty() ? std::string(gpu ? " of one SM" : "")
                            : gpu             ? " of one " + t.machine + " SM"
                                              : " of one " + t.machine + " core";
  const std::string cache = format_bytes(l1) + " L1" + (gpu ? "" : " cache") + whose;
  s += total <= l1
           ? ", which fits the " + cache + "."
           : ", more than the " + cache + ", so some of it is fetched again from further away.";
  return s;
}

void check_or_refuse(const Kernel& k, const Target& t, const std::string& prefix) {
  if (auto why = check_kernel(k, t)) refuse(prefix + *why);
}

void refuse_arg_count(std::string_view step, size_t args, std::string_view args_text) {
  refuse(std::string(step) + " takes " + std::string(args_text) + "; got " + std::to_string(args) +
         " argument" + (args == 1 ? "" : "s"));
}

// [SECTION] Dispatch

namespace {

Kernel& current_kernel(Program& p) {
  return p.kernels[size_t(p.current)];
}

std::string do_kernel(Program& p, const KernelStep& s, const Target&) {
  p.current = find_kernel_with_op(p, s.op, "kernel");
  return "Steps now apply to kernel " + p.kernels[size_t(p.current)].name + ".";
}

// split(L, F) and tile(L, F): L → L.o × L.i.
std::string split_one(Program& p, std::string_view step, const std::string& loop, int64_t f,
                      const Target& t) {
  Kernel& k = current_kernel(p);
  Kernel next = k;
  std::string e = do_split(next, step, loop, f);
  check_or_refuse(next, t, std::string(step) + " refused: ");
  k = next;
  return e;
}

std::string do_split_step(Program& p, const SplitStep& s, const Target& t) {
  return split_one(p, s.kName, s.loop, s.factor, t);
}

constexpr std::string_view kTileArgs =
    "a loop and a factor, e.g. tile(i, 64), or tile(i, j, 64, 64)";

// tile(A, B, FA, FB) splits both and orders the tiles A.o, B.o, A.i, B.i.
std::string do_tile(Program& p, const TileStep& s, const Target& t) {
  if (s.loops.size() != s.factors.size() || s.loops.empty() || s.loops.size() > 2)
    refuse_arg_count(s.kName, s.loops.size() + s.factors.size(), kTileArgs);
  if (s.loops.size() == 1) return split_one(p, s.kName, s.loops[0], s.factors[0], t);
  Kernel& k = current_kernel(p);
  const std::string& a = s.loops[0];
  const std::string& b = s.loops[1];
  std::string e = do_split(k, s.kName, a, s.factors[0]) + " ";
  e += do_split(k, s.kName, b, s.factors[1]) + " ";
  return e + do_reorder(k, ReorderStep{{a + ".o", b + ".o", a + ".i", b + ".i"}}, t);
}

// A step that changes only the current kernel.
template <class S, std::string (*F)(Kernel&, const S&, const Target&)>
std::string on_kernel(Program& p, const S& s, const Target& t) {
  return F(current_kernel(p), s, t);
}

template <class S, LoopKind K>
std::string do_loop_kind(Program& p, const S& s, const Target& t) {
  return do_kind(current_kernel(p), s.kName, s.loop, K, t);
}

// A row's function: the primitive for the row's typed step.
template <class S, std::string (*F)(Program&, const S&, const Target&)>
std::string run(Program& p, const StepSpec& s, const Target& t) {
  return F(p, std::get<S>(s), t);
}

constexpr size_t kMany = std::numeric_limits<size_t>::max();

// The rows of steps that change what is stored or computed, not only how it is walked: layout,
// pad and the rewrites (im2col, the online softmax, split_k).
std::vector<StepInfo> rewrite_rows() {
  return {
      {"layout",
       {},
       2,
       2,
       {},
       "a tensor and a layout (rowmajor, nchw, nhwc, transposed)",
       "layout(x, nhwc)",
       "store a tensor in another memory order",
       &parse_layout,
       &run<LayoutStep, do_layout>},
      {"pad",
       {},
       3,
       3,
       {},
       "a tensor or tile name, a dim and an amount",
       "pad(W_shared, 1, 1)",
       "add unused elements to a dim's pitch (bank or cache-set conflicts)",
       &parse_pad,
       &run<PadStep, do_pad>},
      {"im2col",
       {},
       1,
       1,
       {},
       "the conv op",
       "im2col(conv0)",
       "unfold a convolution's input windows into a matrix and run it as a GEMM",
       &parse_im2col,
       &run<Im2colStep, do_im2col>},
      {"online_softmax",
       {},
       1,
       1,
       {},
       "the softmax op",
       "online_softmax(softmax0)",
       "compute a softmax's maximum and sum in one pass: rescale the sum when the maximum grows",
       &parse_online_softmax,
       &run<OnlineSoftmaxStep, do_online_softmax>},
      {"split_k",
       {},
       2,
       2,
       {},
       "a reduction loop and a number of parts",
       "split_k(k, 8)",
       "cut a reduction into parallel slices that write partial sums, then add them in a second "
       "kernel",
       &parse_split_k,
       &run<SplitKStep, do_split_k>},
  };
}

// In the order refusals and listings name them.
const std::vector<StepInfo>& steps() {
  static const std::vector<StepInfo> table = [] {
    std::vector<StepInfo> t = {
        {"kernel",
         {},
         1,
         1,
         {},
         "an op name",
         "kernel(matmul0)",
         "apply the following steps to the kernel that computes this op",
         &parse_kernel,
         &run<KernelStep, do_kernel>},
        {"fuse",
         {},
         2,
         kMany,
         {},
         "a producer op and one or more elementwise consumers",
         "fuse(matmul0, add0, relu0)",
         "run elementwise consumers in the producer's epilogue: the intermediate never goes to "
         "memory",
         &parse_fuse,
         &run<FuseStep, do_fuse>},
        {"compute_at",
         {},
         2,
         2,
         {"at"},
         "a producer op and a consumer op, plus at=LOOP or at=inline",
         "compute_at(relu0, matmul1, at=inline)",
         "compute an elementwise producer inside its consumer, per read or per tile of a loop",
         &parse_compute_at,
         &run<ComputeAtStep, do_compute_at>},
        {"split",
         {},
         2,
         2,
         {},
         "a loop and a factor, e.g. split(i, 64)",
         "split(k, 16)",
         "split loop L into L.o × L.i, F iterations inside (a guarded tail when F does not divide)",
         &parse_split,
         &run<SplitStep, do_split_step>},
        {"tile",
         {},
         2,
         4,
         {},
         kTileArgs,
         "tile(i, j, 32, 32)",
         "split one loop like split, or two loops and order them A.o, B.o, A.i, B.i",
         &parse_tile,
         &run<TileStep, do_tile>},
        {"reorder",
         {},
         2,
         kMany,
         {},
         "two or more loop names",
         "reorder(i.o, j.o, k, i.i, j.i)",
         "these loops take the positions they occupy, in the order given",
         &parse_reorder,
         &run<ReorderStep, on_kernel<ReorderStep, do_reorder>>},
        {"unroll",
         {},
         1,
         1,
         {},
         "one loop name",
         "unroll(k.i)",
         "write a loop's body out once per iteration",
         &parse_unroll,
         &run<UnrollStep, do_loop_kind<UnrollStep, LoopKind::Unrolled>>},
        {"vectorize",
         {},
         1,
         1,
         {},
         "one loop name",
         "vectorize(j.i)",
         "run the innermost loop's iterations as SIMD lanes",
         &parse_vectorize,
         &run<VectorizeStep, do_loop_kind<VectorizeStep, LoopKind::Vectorized>>},
        {"parallel",
         {"parallelize"},
         1,
         1,
         {},
         "one loop name",
         "parallel(i.o)",
         "spread a loop's iterations over CPU threads",
         &parse_parallel,
         &run<ParallelStep, do_loop_kind<ParallelStep, LoopKind::Parallel>>},
        {"bind",
         {},
         2,
         2,
         {},
         "a loop and a GPU dimension, e.g. bind(i.o, block.y)",
         "bind(i.o, block.y)",
         "map a loop to a GPU grid or block dimension (block.x ... thread.z)",
         &parse_bind,
         &run<BindStep, on_kernel<BindStep, do_bind>>},
        {"stage",
         {},
         2,
         3,
         {"at"},
         "a tensor, a level (shared, scratchpad or registers), at=LOOP and optionally double",
         "stage(W, shared, at=k.o, double)",
         "copy the tile of a tensor one iteration of a loop reads into a closer memory",
         &parse_stage,
         &run<StageStep, on_kernel<StageStep, do_stage>>},
        {"block_order",
         {},
         1,
         2,
         {},
         "row, or grouped and a group size",
         "block_order(grouped, 8)",
         "launch GPU blocks row-major or in groups of rows of tiles (L2 reuse)",
         &parse_block_order,
         &run<BlockOrderStep, on_kernel<BlockOrderStep, do_block_order>>},
    };
    for (StepInfo& r : rewrite_rows()) t.push_back(std::move(r));
    return t;
  }();
  return table;
}

std::string step_names() {
  std::string s;
  for (const StepInfo& i : steps()) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

// The row of a text step, after the checks the table makes: the name, the options, the count.
const StepInfo& checked_row(const TransformStep& s) {
  const StepInfo* info = find_step(s.name);
  if (!info)
    refuse("unknown step '" + s.name + "'" +
           (s.line > 0 ? " at " + std::to_string(s.line) + ":" + std::to_string(s.col) : "") +
           "; steps are " + step_names());
  // option() takes the first of a repeated key; the learner meant one of them, and picking one
  // silently would schedule something else than what they read in their step.
  for (size_t a = 0; a < s.options.size(); ++a)
    for (size_t b = a + 1; b < s.options.size(); ++b)
      if (s.options[a].first == s.options[b].first)
        refuse(s.name + ": " + s.options[a].first + "= is given twice (" + s.options[a].first +
               "=" + s.options[a].second + " and " + s.options[b].first + "=" +
               s.options[b].second + "); give it once");
  // An option the step does not read would be silently ignored: what ran is not what was written.
  for (const auto& [key, value] : s.options) {
    if (std::find(info->keys.begin(), info->keys.end(), key) != info->keys.end()) continue;
    std::string known;
    for (std::string_view k : info->keys)
      known += (known.empty() ? "" : ", ") + std::string(k) + "=";
    refuse(s.name + ": unknown option '" + key + "=" + value + "'; " +
           (info->keys.empty() ? s.name + " takes no key=value options"
                               : "the options of " + s.name + " are " + known));
  }
  if (s.args.size() < info->min_args || s.args.size() > info->max_args)
    refuse_arg_count(s.name, s.args.size(), info->args_text);
  return *info;
}

std::string apply_text(Program& p, const TransformStep& s, const Target& t) {
  if (p.kernels.empty()) refuse("the program has no kernels");
  const StepInfo& row = checked_row(s);
  return row.apply(p, row.parse(s), t);
}

std::string apply_spec(Program& p, const StepSpec& s, const Target& t) {
  if (p.kernels.empty()) refuse("the program has no kernels");
  const StepInfo& row = *find_step(step_name(s));
  // A list field (fuse's consumers, reorder's loops) can hold too few: the text form's count.
  const size_t args = to_step(s).args.size();
  if (args < row.min_args || args > row.max_args) refuse_arg_count(row.name, args, row.args_text);
  return row.apply(p, s, t);
}

// Runs `apply` on a copy of `p`: the new program, or the refusal with `p` unchanged.
template <class F>
StepResult attempt(const Program& p, F apply) {
  StepResult r;
  Program next = p;
  try {
    r.explanation = apply(next);
    r.ok = true;
    r.program = std::move(next);
  } catch (const ScheduleError& e) {  // a Refused, or bad input found further down
    r.ok = false;
    r.explanation = e.what();
  }
  return r;
}

}  // namespace

}  // namespace tilescope::schedule::detail

namespace tilescope::schedule {

const std::vector<StepInfo>& step_table() {
  return detail::steps();
}

const StepInfo* find_step(std::string_view name) {
  for (const StepInfo& i : detail::steps())
    if (i.name == name || std::find(i.aliases.begin(), i.aliases.end(), name) != i.aliases.end())
      return &i;
  return nullptr;
}

StepSpec to_spec(const TransformStep& step) {
  return detail::checked_row(step).parse(step);
}

StepResult apply_step(const Program& p, const TransformStep& step, const Target& target) {
  return detail::attempt(p, [&](Program& next) { return detail::apply_text(next, step, target); });
}

StepResult apply_step(const Program& p, const StepSpec& step, const Target& target) {
  return detail::attempt(p, [&](Program& next) { return detail::apply_spec(next, step, target); });
}

}  // namespace tilescope::schedule
