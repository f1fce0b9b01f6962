// The step language as text: parsing steps (with line:col for errors) and printing them back in
// canonical form, the replayable trace that sessions, lessons and the CLI use; and the edge
// between text and typed steps (to_spec, to_step).
//
// Index: [SECTION] Step text  [SECTION] Text to typed steps  [SECTION] Typed steps to text
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include <algorithm>
#include <cctype>
#include <type_traits>

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

// [SECTION] Text to typed steps

namespace {

// The words of each value, in the order refusals list them. "reg" and "double_buffer" are
// accepted spellings; the typed step prints the first word.
struct Word {
  std::string_view word;
  int value;
};
constexpr Word kGpuDims[] = {
    {"block.x", int(LoopKind::BlockX)},   {"block.y", int(LoopKind::BlockY)},
    {"block.z", int(LoopKind::BlockZ)},   {"thread.x", int(LoopKind::ThreadX)},
    {"thread.y", int(LoopKind::ThreadY)}, {"thread.z", int(LoopKind::ThreadZ)}};
constexpr Word kLevels[] = {{"shared", int(MemLevel::Shared)},
                            {"scratchpad", int(MemLevel::Scratchpad)},
                            {"registers", int(MemLevel::Registers)},
                            {"reg", int(MemLevel::Registers)}};
constexpr Word kLayouts[] = {{"rowmajor", int(graph::Layout::RowMajor)},
                             {"nchw", int(graph::Layout::NCHW)},
                             {"nhwc", int(graph::Layout::NHWC)},
                             {"transposed", int(graph::Layout::Transposed)}};

template <size_t N>
std::optional<int> find_word(const Word (&words)[N], std::string_view w) {
  for (const Word& x : words)
    if (x.word == w) return x.value;
  return std::nullopt;
}

template <size_t N>
std::string_view word_of(const Word (&words)[N], int value, std::string_view fallback) {
  for (const Word& x : words)
    if (x.value == value) return x.word;
  return fallback;
}

}  // namespace

namespace detail {

void refuse_gpu_dim(std::string_view word) {
  refuse("bind: '" + std::string(word) +
         "' is not a GPU dimension; use block.x, block.y, block.z, "
         "thread.x, thread.y or thread.z");
}

void refuse_mem_level(std::string_view word) {
  refuse("stage: '" + std::string(word) +
         "' is not a memory level; use shared, scratchpad or registers");
}

void refuse_layout(std::string_view word) {
  refuse("layout: '" + std::string(word) +
         "' is not a layout; use rowmajor, nchw, nhwc or transposed");
}

StepSpec parse_kernel(const TransformStep& s) {
  return KernelStep{s.args[0]};
}

StepSpec parse_fuse(const TransformStep& s) {
  return FuseStep{s.args[0], {s.args.begin() + 1, s.args.end()}};
}

StepSpec parse_compute_at(const TransformStep& s) {
  ComputeAtStep c{s.args[0], s.args[1], std::nullopt};
  for (const auto& [k, v] : s.options)
    if (k == "at") c.at = v;
  return c;
}

StepSpec parse_split(const TransformStep& s) {
  return SplitStep{s.args[0], parse_int(s, s.args[1], "the factor")};
}

StepSpec parse_tile(const TransformStep& s) {
  if (s.args.size() == 4)
    return TileStep{{s.args[0], s.args[1]},
                    {parse_int(s, s.args[2], "the first factor"),
                     parse_int(s, s.args[3], "the second factor")}};
  if (s.args.size() != 2) refuse_arg_count(s.name, s.args.size(), find_step("tile")->args_text);
  return TileStep{{s.args[0]}, {parse_int(s, s.args[1], "the factor")}};
}

StepSpec parse_reorder(const TransformStep& s) {
  return ReorderStep{s.args};
}

StepSpec parse_unroll(const TransformStep& s) {
  return UnrollStep{s.args[0]};
}

StepSpec parse_vectorize(const TransformStep& s) {
  return VectorizeStep{s.args[0]};
}

StepSpec parse_parallel(const TransformStep& s) {
  return ParallelStep{s.args[0]};
}

StepSpec parse_bind(const TransformStep& s) {
  const auto dim = find_word(kGpuDims, s.args[1]);
  if (!dim) refuse_gpu_dim(s.args[1]);
  return BindStep{s.args[0], LoopKind(*dim)};
}

StepSpec parse_stage(const TransformStep& s) {
  const auto level = find_word(kLevels, s.args[1]);
  if (!level) refuse_mem_level(s.args[1]);
  const bool dbl = s.args.size() == 3 && (s.args[2] == "double" || s.args[2] == "double_buffer");
  if (s.args.size() == 3 && !dbl)
    refuse("stage: unknown flag '" + s.args[2] + "'; the only flag is double");
  return StageStep{s.args[0], MemLevel(*level), s.option("at"), dbl};
}

StepSpec parse_block_order(const TransformStep& s) {
  if (s.args[0] == "row" || s.args[0] == "rowmajor")
    return BlockOrderStep{BlockOrder::RowMajor, {}};
  if (s.args[0] == "grouped") {
    BlockOrderStep b{BlockOrder::Grouped, {}};
    if (s.args.size() == 2) b.group = parse_int(s, s.args[1], "the group size");
    return b;
  }
  refuse("block_order: '" + s.args[0] + "' is not an order; use row or grouped");
}

StepSpec parse_layout(const TransformStep& s) {
  const auto layout = find_word(kLayouts, s.args[1]);
  if (!layout) refuse_layout(s.args[1]);
  return LayoutStep{s.args[0], graph::Layout(*layout)};
}

StepSpec parse_pad(const TransformStep& s) {
  return PadStep{s.args[0], parse_int(s, s.args[1], "the dim"),
                 parse_int(s, s.args[2], "the amount")};
}

StepSpec parse_im2col(const TransformStep& s) {
  return Im2colStep{s.args[0]};
}

StepSpec parse_online_softmax(const TransformStep& s) {
  return OnlineSoftmaxStep{s.args[0]};
}

StepSpec parse_split_k(const TransformStep& s) {
  return SplitKStep{s.args[0], parse_int(s, s.args[1], "the number of parts")};
}

}  // namespace detail

// [SECTION] Typed steps to text

namespace {

struct Printer {
  TransformStep out;
  explicit Printer(std::string_view name) { out.name = name; }
  Printer& arg(std::string_view a) {
    out.args.emplace_back(a);
    return *this;
  }
  Printer& arg(int64_t v) { return arg(std::to_string(v)); }
  Printer& args(const std::vector<std::string>& v) {
    for (const auto& a : v) arg(a);
    return *this;
  }
  Printer& option(std::string_view key, std::string_view value) {
    out.options.emplace_back(std::string(key), std::string(value));
    return *this;
  }
};

TransformStep print(const KernelStep& s) {
  return Printer(s.kName).arg(s.op).out;
}
TransformStep print(const FuseStep& s) {
  return Printer(s.kName).arg(s.producer).args(s.consumers).out;
}
TransformStep print(const ComputeAtStep& s) {
  Printer p(s.kName);
  p.arg(s.producer).arg(s.consumer);
  if (s.at) p.option("at", *s.at);
  return p.out;
}
TransformStep print(const SplitStep& s) {
  return Printer(s.kName).arg(s.loop).arg(s.factor).out;
}
TransformStep print(const TileStep& s) {
  Printer p(s.kName);
  p.args(s.loops);
  for (int64_t f : s.factors) p.arg(f);
  return p.out;
}
TransformStep print(const ReorderStep& s) {
  return Printer(s.kName).args(s.loops).out;
}
TransformStep print(const UnrollStep& s) {
  return Printer(s.kName).arg(s.loop).out;
}
TransformStep print(const VectorizeStep& s) {
  return Printer(s.kName).arg(s.loop).out;
}
TransformStep print(const ParallelStep& s) {
  return Printer(s.kName).arg(s.loop).out;
}
TransformStep print(const BindStep& s) {
  return Printer(s.kName).arg(s.loop).arg(loop_kind_name(s.dim)).out;
}
TransformStep print(const StageStep& s) {
  Printer p(s.kName);
  p.arg(s.tensor).arg(word_of(kLevels, int(s.level), mem_level_name(s.level)));
  if (s.double_buffer) p.arg("double");
  if (!s.at.empty()) p.option("at", s.at);
  return p.out;
}
TransformStep print(const BlockOrderStep& s) {
  Printer p(s.kName);
  if (s.order == BlockOrder::RowMajor) return p.arg("row").out;
  p.arg("grouped");
  if (s.group) p.arg(*s.group);
  return p.out;
}
TransformStep print(const LayoutStep& s) {
  return Printer(s.kName).arg(s.tensor).arg(word_of(kLayouts, int(s.layout), "strided")).out;
}
TransformStep print(const PadStep& s) {
  return Printer(s.kName).arg(s.target).arg(s.dim).arg(s.amount).out;
}
TransformStep print(const Im2colStep& s) {
  return Printer(s.kName).arg(s.op).out;
}
TransformStep print(const OnlineSoftmaxStep& s) {
  return Printer(s.kName).arg(s.op).out;
}
TransformStep print(const SplitKStep& s) {
  return Printer(s.kName).arg(s.loop).arg(s.parts).out;
}

}  // namespace

TransformStep to_step(const StepSpec& s) {
  return std::visit([](const auto& x) { return print(x); }, s);
}

std::string to_string(const StepSpec& s) {
  return to_step(s).to_string();
}

}  // namespace tilescope::schedule
