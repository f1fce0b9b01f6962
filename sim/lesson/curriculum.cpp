// The checker's curriculum functions (lessons 07 onward): strides, waves and the first wave, dtype
// formats, predicted time over the simulated roofline, generated source, graph dependencies and the
// compiler pass of each step (listed in checker.h). Validation of their argument kinds lives here
// too; checker.cpp dispatches to call_curriculum after its own functions.
#include "sim/lesson/checker.h"
#include "sim/lesson/checker_impl.h"

#include "sim/model/run.h"
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
  if (step == "im2col") return "lowering";
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

bool LessonSession::call_curriculum(const Expr& e, const Context& c, Value& out) {
  const std::string& f = e.text;
  auto str = [&](size_t i) {
    const Value v = eval(e.args[i], c);
    if (v.kind != Value::Kind::String)
      throw EvalError{f + "() argument " + std::to_string(i + 1) + " must be a string, not " +
                      v.to_string()};
    return v.text;
  };
  const std::string arg0 =
      e.positional() > 0 && e.args[0].kind == Expr::Kind::Name ? e.args[0].text : std::string();
  auto list = [](std::vector<Value> items) {
    Value v;
    v.kind = Value::Kind::List;
    v.items = std::move(items);
    return v;
  };
  auto current_kernel = [&](const LessonProgram& lp) -> const schedule::Kernel& {
    if (lp.program.kernels.empty()) throw EvalError{lp.id + " has no kernels"};
    return lp.program.kernels.at(size_t(lp.program.current));
  };

  if (f == "strides") {
    const LessonProgram* lp = program(arg0);
    const std::string& tensor = e.args[1].text;
    // The current kernel first: it is the one the steps acted on.
    std::vector<const schedule::Kernel*> order{&current_kernel(*lp)};
    for (const auto& k : lp->program.kernels) order.push_back(&k);
    for (const schedule::Kernel* k : order)
      for (const auto& t : k->tensors)
        if (t.name == tensor) {
          std::vector<Value> v;
          for (int64_t s : t.strides) v.push_back(Value::of(double(s)));
          out = list(std::move(v));
          return true;
        }
    throw EvalError{"no kernel of " + arg0 + " keeps " + tensor +
                    " in memory (it was fused away or folded into another kernel)"};
  }
  if (f == "waves" || f == "first_wave" || f == "cores") {
    const model::Machine& m = machine(f == "cores" ? arg0 : e.args[1].text);
    if (f == "cores") {
      out = Value::of(double(m.cores));
      return true;
    }
    if (m.kind != "gpu") throw EvalError{f + "() needs a GPU machine; " + m.name + " is a CPU"};
    const schedule::Kernel& k = current_kernel(*program(arg0));
    const schedule::LaunchConfig lc = schedule::launch_config(k);
    const int64_t blocks = lc.blocks();
    const int64_t per_wave = model::resident_blocks(m);
    if (f == "waves") {
      out = Value::of(double((blocks + per_wave - 1) / per_wave));
      return true;
    }
    // The rows (block.y) and columns (block.x) of tiles the first wave's blocks cover, in the
    // kernel's launch order: the operand panels those blocks need in L2 at once.
    std::set<int64_t> rows, cols;
    for (int64_t b = 0; b < std::min(blocks, per_wave); ++b) {
      const auto at = schedule::block_coords(k, b);
      cols.insert(at[0]);
      rows.insert(at[1]);
    }
    out = list({Value::of(double(rows.size())), Value::of(double(cols.size()))});
    return true;
  }
  if (f == "dtype") {
    auto g = model(model_for(e, c));
    if (!g) throw EvalError{"no model for dtype()"};
    out = Value::of(std::string(graph::dtype_name(g->tensor(*g->find_tensor(arg0)).dtype)));
    return true;
  }
  if (f == "clock") {
    const model::Machine& m = machine(arg0);
    if (m.clock_hz <= 0) throw EvalError{"machine " + m.name + " states no clock"};
    out = Value::of(m.clock_hz);
    return true;
  }
  if (f == "to_dtype" || f == "quantize" || f == "overflows") {
    // to_dtype(x, F): x as format F stores it. quantize(x, scale, F): x / scale stored in F
    // (int8: rounded to an integer, clamped to -128..127), times scale: what dequantising gives.
    const Value xv = eval(e.args[0], c);
    if (xv.kind != Value::Kind::Number)
      throw EvalError{f + "() argument 1 must be a number, not " + xv.to_string()};
    double scale = 1;
    if (f == "quantize") {
      const Value sv = eval(e.args[1], c);
      if (sv.kind != Value::Kind::Number || !(sv.number > 0))
        throw EvalError{"quantize() takes a scale above 0, not " + sv.to_string()};
      scale = sv.number;
    }
    const std::string name = str(f == "quantize" ? 2 : 1);
    if (f == "overflows" && name == "int8")
      throw EvalError{"overflows() takes a float format; int8 clamps to -128..127"};
    const double x = xv.number / scale;
    if (name == "int8") {
      out = Value::of(std::clamp(std::nearbyint(x), -128.0, 127.0) * scale);
      return true;
    }
    const FloatFormat* ff = float_format(name);
    if (!ff)
      throw EvalError{f + "() knows fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2 and int8, not '" +
                      name + "'"};
    const double stored = round_to(*ff, x);
    if (f == "overflows") {
      out = Value::of(std::isinf(stored) ? 1.0 : 0.0);
      return true;
    }
    if (std::isinf(stored))
      throw EvalError{f + "(): " + Value::of(x).to_string() + " is past " + name +
                      "'s largest finite value and becomes infinity (overflows() says so)"};
    out = Value::of(stored * scale);
    return true;
  }
  if (f == "dtype_bytes" || f == "dtype_max" || f == "dtype_eps" || f == "dtype_min_normal" ||
      f == "dtype_min_subnormal") {
    const std::string name = str(0);
    const FloatFormat* ff = float_format(name);
    if (f == "dtype_bytes" && !ff && (name == "int8" || name == "fp8")) {
      out = Value::of(1.0);
      return true;
    }
    if (!ff)
      throw EvalError{f + "() knows fp32, tf32, fp16, bf16, fp8_e4m3 and fp8_e5m2" +
                      std::string(f == "dtype_bytes" ? ", int8 and fp8" : "") + ", not '" + name +
                      "'"};
    if (f == "dtype_bytes") {
      out = Value::of(double(ff->bytes));
    } else if (f == "dtype_eps") {
      // The gap between 1 and the next representable number: one unit in the last stored bit.
      out = Value::of(std::ldexp(1.0, -ff->mantissa));
    } else if (f == "dtype_min_normal" || f == "dtype_min_subnormal") {
      // The smallest normal number is 2^(1 - bias); below it the subnormals step down by one
      // unit of the last mantissa bit, the smallest 2^(1 - bias - mantissa bits). Gradients
      // smaller than these flush to zero (why fp16 training scales the loss).
      out = Value::of(
          std::ldexp(1.0, 1 - bias_of(*ff) - (f == "dtype_min_subnormal" ? ff->mantissa : 0)));
    } else {
      out = Value::of(largest(*ff));
    }
    return true;
  }
  if (f == "predicted_time" || f == "bound") {
    const SimResult& s = simulate(arg0, machine_for(e, c));
    if (s.roofline.binding.empty())
      throw EvalError{"machine " + machine_for(e, c) +
                      " gives no peak or bandwidth to predict with"};
    out = f == "bound" ? Value::of(s.roofline.binding) : Value::of(s.roofline.seconds);
    return true;
  }
  if (f == "fastest") {
    std::string best;
    double best_s = 0;
    for (const Expr& item : e.args[0].args) {
      const SimResult& s = simulate(item.text, machine_for(e, c));
      if (s.roofline.binding.empty())
        throw EvalError{"machine " + machine_for(e, c) + " gives no peak or bandwidth"};
      if (best.empty() || s.roofline.seconds < best_s)
        best = item.text, best_s = s.roofline.seconds;
    }
    out = Value::of(best);
    return true;
  }
  if (f == "source") {
    const std::string dialect = str(1);
    const schedule::Kernel& k = current_kernel(*program(arg0));
    if (dialect == "cuda")
      out = Value::of(schedule::emit_cuda(k));
    else if (dialect == "cpp")
      out = Value::of(schedule::emit_cpp(k));
    else if (dialect == "pseudo")
      out = Value::of(schedule::print_loop_nest(k));
    else
      throw EvalError{"source() emits \"cuda\", \"cpp\" or \"pseudo\", not \"" + dialect + "\""};
    return true;
  }
  if (f == "count") {
    const std::string text = str(0), part = str(1);
    if (part.empty()) throw EvalError{"count() needs a non-empty text to look for"};
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos;
         at = text.find(part, at + part.size()))
      ++n;
    out = Value::of(double(n));
    return true;
  }
  if (f == "depends" || f == "critical_flops") {
    auto g = model(f == "critical_flops" && !arg0.empty()
                       ? (m_models.count(arg0) ? arg0 : program(arg0)->model)
                       : model_for(e, c));
    if (!g) throw EvalError{"no model for " + f + "()"};
    const auto& ops = g->ops();
    if (f == "depends") {
      // Walk back from A through the producers of its inputs.
      const graph::OpId a = *g->find_op(arg0), b = *g->find_op(e.args[1].text);
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
      out = Value::of(found ? 1.0 : 0.0);
      return true;
    }
    // Ops are stored in dependency order (each after its inputs' producers), so one pass finds
    // the heaviest chain ending at each op.
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
    out = Value::of(heaviest);
    return true;
  }
  if (f == "passes") {
    std::vector<Value> v;
    for (const std::string& step : program(arg0)->applied) {
      const std::string pass = compiler_pass(step.substr(0, step.find('(')));
      if (v.empty() || v.back().text != pass) v.push_back(Value::of(pass));
    }
    out = list(std::move(v));
    return true;
  }
  return false;
}

}  // namespace tilescope::lesson
