// The check language's curriculum functions (lessons 07 onward): strides, waves and the first
// wave, dtype formats, predicted time over the simulated roofline, generated source, graph
// dependencies and the compiler pass of each step, one function per family of
// check_functions.cpp's rows. Validation of their argument kinds lives here too.
#include "sim/lesson/check_functions.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/check_call.h"

#include "sim/predict/occupancy.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace tilescope::lesson {

using detail::EvalError;

namespace {

// An IEEE-754-style binary format: sign, `exponent` bits, `mantissa` stored bits.
// `finite`: no infinity (OCP FP8 E4M3): the top exponent holds normal numbers too, all but the
// all-ones mantissa (NaN), so its largest value is 1.75 × 2^8 = 448.
struct FloatFormat {
  const char* name;
  int exponent, mantissa, bytes;  // bytes: storage (tf32 is stored in 32 bits)
  bool finite = false;
};
constexpr FloatFormat kFloatFormats[] = {
    {"fp32", 8, 23, 4},          {"tf32", 8, 10, 4},     {"fp16", 5, 10, 2},
    {"bf16", 8, 7, 2},           {"fp8_e4m3", 4, 3, 1, true}, {"fp8_e5m2", 5, 2, 1},
};

int bias_of(const FloatFormat& f) {
  return (1 << (f.exponent - 1)) - 1;
}

double largest(const FloatFormat& f) {
  // IEEE style: every mantissa bit set under the largest exponent below the one kept for infinity
  // and NaN. Finite-only (E4M3): the top exponent too, with the last mantissa code kept for NaN.
  if (f.finite)
    return (2.0 - std::ldexp(1.0, 1 - f.mantissa)) *
           std::ldexp(1.0, (1 << f.exponent) - 1 - bias_of(f));
  return (2.0 - std::ldexp(1.0, -f.mantissa)) * std::ldexp(1.0, bias_of(f));
}

// x stored in format f: rounded to the nearest representable value (ties to even), through the
// subnormals down to zero; past the largest finite value infinity, or the largest value for the
// FP8 formats, whose conversions saturate (PTX cvt.satfinite).
double round_to(const FloatFormat& f, double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double a = std::fabs(x);
  const int emin = 1 - bias_of(f);
  int e = std::ilogb(a);
  if (e < emin) e = emin;  // subnormal: the spacing of the smallest binade
  const double quantum = std::ldexp(1.0, e - f.mantissa);
  double r = std::nearbyint(a / quantum) * quantum;
  const double top = largest(f);
  if (r > top) {
    const bool saturate = f.finite || f.bytes == 1;
    // IEEE rounding overflows only past the largest value plus half a step.
    r = saturate ? top
                 : (a >= top + std::ldexp(1.0, std::ilogb(top) - f.mantissa - 1)
                        ? std::numeric_limits<double>::infinity()
                        : top);
  }
  return std::copysign(r, x);
}

const FloatFormat* float_format(const std::string& name) {
  for (const FloatFormat& f : kFloatFormats)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

std::string compiler_pass(std::string_view step) {
  if (step == "layout" || step == "pad") return "layout";
  if (step == "fuse" || step == "compute_at") return "fusion";
  if (step == "im2col" || step == "online_softmax") return "lowering";
  for (std::string_view s : {"kernel", "split", "tile", "reorder", "unroll", "vectorize",
                             "parallel", "bind", "stage", "block_order", "split_k"})
    if (step == s) return "scheduling";
  return "";
}

void LessonSession::validate_curriculum_arg(const Expr& call, const Expr& arg, bool subject_list,
                                            const Context& c) const {
  if (subject_list) {
    if (arg.kind != Expr::Kind::List || arg.args.empty())
      throw LessonError(arg.loc,
                        call.text + "() expects a list of model or steps ids, [a, b, ...]");
    for (const Expr& item : arg.args)
      if (item.kind != Expr::Kind::Name || !is_subject(item.text, c))
        throw LessonError(item.loc,
                          call.text + "(): '" + item.to_string() + "' is not a model or steps id");
    return;
  }
  // A tensor of the model that the first argument (a subject, validated before) schedules.
  if (arg.kind != Expr::Kind::Name)
    throw LessonError(arg.loc, call.text + "() expects a tensor name here, not " + arg.to_string());
  const std::string& subject = call.args[0].text;
  std::string model_id = subject;
  if (!m_models.count(subject)) {
    auto it = m_programs.find(subject);
    model_id = it == m_programs.end() ? c.model : it->second.model;
  }
  auto g = model(model_id);
  if (!g || !g->find_tensor(arg.text)) {
    std::vector<std::string> names;
    if (g)
      for (const auto& t : g->tensors()) names.push_back(t.name);
    throw LessonError(arg.loc, "model " + model_id + " has no tensor '" + arg.text + "'" +
                                   suggestion(arg.text, names));
  }
}

namespace detail {

namespace {

const schedule::Kernel& current_kernel(const LessonProgram& lp) {
  if (lp.program.kernels.empty()) throw EvalError{lp.id + " has no kernels"};
  return lp.program.kernels.at(size_t(lp.program.current));
}

}  // namespace

Value eval_strides(CheckCall& call) {
  const std::string arg0 = call.arg0();
  const LessonProgram* lp = call.program(arg0);
  const std::string& tensor = call.e.args[1].text;
  // The current kernel first: it is the one the steps acted on.
  std::vector<const schedule::Kernel*> order{&current_kernel(*lp)};
  for (const auto& k : lp->program.kernels) order.push_back(&k);
  for (const schedule::Kernel* k : order)
    for (const auto& t : k->tensors)
      if (t.name == tensor) {
        std::vector<Value> v;
        for (int64_t s : t.strides) v.push_back(Value::of(double(s)));
        return Value::list(std::move(v));
      }
  throw EvalError{"no kernel of " + arg0 + " keeps " + tensor +
                  " in memory (it was fused away or folded into another kernel)"};
}

Value eval_grid(CheckCall& call) {
  const std::string& f = call.name();
  const std::string arg0 = call.arg0();
  const predict::Machine& m = call.machine(f == "cores" ? arg0 : call.e.args[1].text);
  if (f == "cores") return Value::of(double(m.cores));
  if (m.kind != "gpu") throw EvalError{f + "() needs a GPU machine; " + m.name + " is a CPU"};
  const schedule::Kernel& k = current_kernel(*call.program(arg0));
  const schedule::LaunchConfig lc = schedule::launch_config(k);
  const int64_t blocks = lc.blocks();
  const int64_t per_wave = predict::resident_blocks(m);
  if (f == "waves") return Value::of(double((blocks + per_wave - 1) / per_wave));
  // The rows (block.y) and columns (block.x) of tiles the first wave's blocks cover, in the
  // kernel's launch order: the operand panels those blocks need in L2 at once.
  std::set<int64_t> rows, cols;
  for (int64_t b = 0; b < std::min(blocks, per_wave); ++b) {
    const auto at = schedule::block_coords(k, b);
    cols.insert(at[0]);
    rows.insert(at[1]);
  }
  return Value::list({Value::of(double(rows.size())), Value::of(double(cols.size()))});
}

// The current kernel's block on an SM (predict::occupancy): its threads and dynamic shared memory
// from the launch, 32 registers a thread (a schedule not compiled yet has no ptxas count; the
// lesson says so where it uses it).
Value eval_occupancy(CheckCall& call) {
  const std::string& f = call.name();
  const predict::Machine& m = call.machine(call.e.args[1].text);
  if (m.kind != "gpu" || !m.sm.known())
    throw EvalError{f + "() needs a GPU machine with per-SM limits; " + m.name + " has none"};
  const schedule::Kernel& k = current_kernel(*call.program(call.arg0()));
  const schedule::LaunchConfig lc = schedule::launch_config(k);
  const predict::Occupancy o =
      predict::occupancy(m, {lc.threads(), 32, int64_t(lc.dynamic_smem_bytes)});
  if (!o.error.empty()) throw EvalError{f + "(): " + o.error};
  if (f == "occupancy") return Value::of(o.occupancy);
  return Value::of(double(predict::resident_warps(m, o, lc.blocks())));
}

Value eval_clock(CheckCall& call) {
  const predict::Machine& m = call.machine(call.arg0());
  if (m.clock_hz <= 0) throw EvalError{"machine " + m.name + " states no clock"};
  return Value::of(m.clock_hz);
}

Value eval_dtype(CheckCall& call) {
  auto g = call.model(call.model_for());
  if (!g) throw EvalError{"no model for dtype()"};
  return Value::of(std::string(graph::dtype_name(g->tensor(*g->find_tensor(call.arg0())).dtype)));
}

// to_dtype(x, F): x as format F stores it. quantize(x, scale, F): x / scale stored in F (int8:
// rounded to an integer, clamped to -128..127), times scale: what dequantising gives.
// overflows(x, F): 1 when x becomes infinity in F.
Value eval_stored(CheckCall& call) {
  const std::string& f = call.name();
  const Value xv = call.arg(0);
  if (xv.kind != Value::Kind::Number)
    throw EvalError{f + "() argument 1 must be a number, not " + xv.to_string()};
  double scale = 1;
  if (f == "quantize") {
    const Value sv = call.arg(1);
    if (sv.kind != Value::Kind::Number || !(sv.number > 0))
      throw EvalError{"quantize() takes a scale above 0, not " + sv.to_string()};
    scale = sv.number;
  }
  const std::string name = call.str(f == "quantize" ? 2 : 1);
  if (f == "overflows" && name == "int8")
    throw EvalError{"overflows() takes a float format; int8 clamps to -128..127"};
  const double x = xv.number / scale;
  if (name == "int8") return Value::of(std::clamp(std::nearbyint(x), -128.0, 127.0) * scale);
  const FloatFormat* ff = float_format(name);
  if (!ff)
    throw EvalError{f + "() knows fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2 and int8, not '" +
                    name + "'"};
  const double stored = round_to(*ff, x);
  if (f == "overflows") return Value::of(std::isinf(stored) ? 1.0 : 0.0);
  if (std::isinf(stored))
    throw EvalError{f + "(): " + Value::of(x).to_string() + " is past " + name +
                    "'s largest finite value and becomes infinity (overflows() says so)"};
  return Value::of(stored * scale);
}

Value eval_format(CheckCall& call) {
  const std::string& f = call.name();
  const std::string name = call.str(0);
  const FloatFormat* ff = float_format(name);
  if (f == "dtype_bytes" && !ff && (name == "int8" || name == "fp8")) return Value::of(1.0);
  if (!ff)
    throw EvalError{f + "() knows fp32, tf32, fp16, bf16, fp8_e4m3 and fp8_e5m2" +
                    std::string(f == "dtype_bytes" ? ", int8 and fp8" : "") + ", not '" + name +
                    "'"};
  if (f == "dtype_bytes") return Value::of(double(ff->bytes));
  // The gap between 1 and the next representable number: one unit in the last stored bit.
  if (f == "dtype_eps") return Value::of(std::ldexp(1.0, -ff->mantissa));
  // The smallest normal number is 2^(1 - bias); below it the subnormals step down by one unit of
  // the last mantissa bit, the smallest 2^(1 - bias - mantissa bits). Gradients smaller than
  // these flush to zero (why fp16 training scales the loss).
  if (f == "dtype_min_normal" || f == "dtype_min_subnormal")
    return Value::of(
        std::ldexp(1.0, 1 - bias_of(*ff) - (f == "dtype_min_subnormal" ? ff->mantissa : 0)));
  return Value::of(largest(*ff));
}

Value eval_time(CheckCall& call) {
  const SimResult& s = call.simulate(call.arg0(), call.machine_for());
  if (s.roofline.binding.empty())
    throw EvalError{"machine " + call.machine_for() + " gives no peak or bandwidth to predict with"};
  return call.name() == "bound" ? Value::of(s.roofline.binding) : Value::of(s.roofline.seconds);
}

Value eval_fastest(CheckCall& call) {
  std::string best;
  double best_s = 0;
  for (const Expr& item : call.e.args[0].args) {
    const SimResult& s = call.simulate(item.text, call.machine_for());
    if (s.roofline.binding.empty())
      throw EvalError{"machine " + call.machine_for() + " gives no peak or bandwidth"};
    if (best.empty() || s.roofline.seconds < best_s) best = item.text, best_s = s.roofline.seconds;
  }
  return Value::of(best);
}

Value eval_source(CheckCall& call) {
  const std::string dialect = call.str(1);
  const schedule::Kernel& k = current_kernel(*call.program(call.arg0()));
  if (dialect == "cuda") return Value::of(schedule::emit_cuda(k));
  if (dialect == "cpp") return Value::of(schedule::emit_cpp(k));
  if (dialect == "pseudo") return Value::of(schedule::print_loop_nest(k));
  throw EvalError{"source() emits \"cuda\", \"cpp\" or \"pseudo\", not \"" + dialect + "\""};
}

Value eval_count(CheckCall& call) {
  const std::string text = call.str(0), part = call.str(1);
  if (part.empty()) throw EvalError{"count() needs a non-empty text to look for"};
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size()))
    ++n;
  return Value::of(double(n));
}

Value eval_dependencies(CheckCall& call) {
  const std::string& f = call.name();
  const std::string arg0 = call.arg0();
  auto g = call.model(f == "critical_flops" && !arg0.empty()
                          ? (call.is_model(arg0) ? arg0 : call.program(arg0)->model)
                          : call.model_for());
  if (!g) throw EvalError{"no model for " + f + "()"};
  const auto& ops = g->ops();
  if (f == "depends") {
    // Walk back from A through the producers of its inputs.
    const graph::OpId a = *g->find_op(arg0), b = *g->find_op(call.e.args[1].text);
    std::vector<bool> seen(ops.size(), false);
    std::vector<graph::OpId> todo{a};
    bool found = false;
    while (!todo.empty() && !found) {
      const graph::OpId o = todo.back();
      todo.pop_back();
      for (graph::TensorId t : ops[size_t(o)].inputs) {
        const graph::OpId p = g->tensor(t).producer;
        if (p < 0 || seen[size_t(p)]) continue;
        seen[size_t(p)] = true;
        found = found || p == b;
        todo.push_back(p);
      }
    }
    return Value::of(found ? 1.0 : 0.0);
  }
  // Ops are stored in dependency order (each after its inputs' producers), so one pass finds the
  // heaviest chain ending at each op.
  std::vector<double> chain(ops.size(), 0);
  double heaviest = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    double before = 0;
    for (graph::TensorId t : ops[i].inputs) {
      const graph::OpId p = g->tensor(t).producer;
      if (p >= 0) before = std::max(before, chain[size_t(p)]);
    }
    chain[i] = before + double(g->op_cost(graph::OpId(i)).flops);
    heaviest = std::max(heaviest, chain[i]);
  }
  return Value::of(heaviest);
}

Value eval_passes(CheckCall& call) {
  std::vector<Value> v;
  for (const std::string& step : call.program(call.arg0())->applied) {
    const std::string pass = compiler_pass(step.substr(0, step.find('(')));
    if (v.empty() || v.back().text != pass) v.push_back(Value::of(pass));
  }
  return Value::list(std::move(v));
}

}  // namespace detail

}  // namespace tilescope::lesson
