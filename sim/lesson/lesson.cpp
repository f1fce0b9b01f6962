// Lesson file structure by line scanning: front matter, fenced blocks with attributes, step
// markers.
#include "sim/lesson/lesson.h"

#include "sim/io/input.h"
#include "sim/lesson/quantity.h"
#include "sim/lesson/recorded.h"
#include "sim/predict/machine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

namespace tilescope::lesson {

std::vector<int> step_blocks(const Lesson& lesson, int step_index) {
  std::vector<int> out;
  if (step_index < 0 || step_index >= static_cast<int>(lesson.steps.size())) return out;
  const std::string& id = lesson.steps[static_cast<size_t>(step_index)].id;
  for (size_t i = 0; i < lesson.blocks.size(); ++i)
    if (lesson.blocks[i].step == id) out.push_back(static_cast<int>(i));
  return out;
}

std::string step_model(const Lesson& lesson, int step_index) {
  // The first named, not the first model block: a step that checks `layer`, then defines the
  // checkpoint's solution `layer128` for the reader, starts the learner on `layer` (issue #26:
  // entering lesson 1's step 2 loaded the solution and the checkpoint was met at once).
  for (int i : step_blocks(lesson, step_index)) {
    const Block& b = lesson.blocks[static_cast<size_t>(i)];
    if (b.kind == BlockKind::Model) return b.attr_value("id");
    if (b.kind != BlockKind::Steps && !b.attr_value("model").empty()) return b.attr_value("model");
  }
  return {};
}

std::string step_machine(const Lesson& lesson, int step_index) {
  if (step_index < 0 || step_index >= static_cast<int>(lesson.steps.size())) return {};
  const LessonStep& step = lesson.steps[static_cast<size_t>(step_index)];
  if (!step.machine.empty()) return step.machine;
  for (int i : step_blocks(lesson, step_index)) {
    const std::string m = lesson.blocks[static_cast<size_t>(i)].attr_value("machine");
    if (!m.empty()) return m;
  }
  return {};
}

int step_index(const Lesson& lesson, const std::string& step_id) {
  for (size_t i = 0; i < lesson.steps.size(); ++i)
    if (lesson.steps[i].id == step_id) return static_cast<int>(i);
  return -1;
}

const std::vector<std::string>& step_view_names() {
  static const std::vector<std::string> kViews = {"graph",    "schedule", "tiles", "memory",
                                                  "roofline", "timings",  "trace"};
  return kViews;
}

const char* block_kind_name(BlockKind k) {
  switch (k) {
    case BlockKind::Model:
      return "model";
    case BlockKind::Steps:
      return "steps";
    case BlockKind::Check:
      return "check";
    case BlockKind::Predict:
      return "predict";
    case BlockKind::Checkpoint:
      return "checkpoint";
  }
  return "?";
}

const Attribute* Block::attr(const std::string& key) const {
  for (const Attribute& a : attrs)
    if (a.key == key) return &a;
  return nullptr;
}

std::string Block::attr_value(const std::string& key, const std::string& fallback) const {
  const Attribute* a = attr(key);
  return a ? a->value : fallback;
}

int PredictBlock::tries_allowed() const {
  if (tries > 0) return tries;
  return is_choice() ? std::min(kDefaultPredictTries, static_cast<int>(choices.size()) - 1)
                     : kDefaultPredictTries;
}

bool PredictBlock::numeric_choices() const {
  return !choices.empty() && std::all_of(choices.begin(), choices.end(), [](const std::string& c) {
    return parse_quantity(c, "").ok;
  });
}

int PredictBlock::choice_for_number(double v) const {
  const int n = static_cast<int>(choices.size());
  if (numeric_choices()) {
    for (int k = 0; k < n; ++k) {
      const double c = parse_quantity(choices[static_cast<size_t>(k)], "").value;
      if (std::fabs(c - v) <= 1e-9 * std::max(std::fabs(c), std::fabs(v))) return k;
    }
    return -1;
  }
  return v == std::floor(v) && v >= 1 && v <= n ? static_cast<int>(v) - 1 : -1;
}

namespace {

struct Line {
  std::string_view text;
  int number = 0;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  size_t begin = 0;
  int number = 1;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(begin, end - begin);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back({l, number++});
    begin = end + 1;
  }
  return lines;
}

using io::trim;

bool is_id(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// Languages a prose code block may be shown in; any other info string is a mistake.
bool is_display_language(const std::string& lang) {
  static const std::set<std::string> kLanguages = {
      "",         "text", "txt",  "plaintext", "python",  "py",    "cpp",  "c++",
      "c",        "cuda", "sh",   "bash",      "console", "shell", "json", "diff",
      "markdown", "md",   "math", "yaml",      "pytorch", "output"};
  return kLanguages.count(lang) > 0;
}

class LessonParser {
 public:
  LessonParser(std::string_view text, const std::string& file) : m_file(file) {
    m_lesson.file = file;
    m_lesson.text = std::string(text);
    m_lines = split_lines(text);
  }

  Lesson run() {
    size_t i = front_matter();
    std::string pending_step;  // a `<!-- step: id -->` marker waiting for its heading
    graph::SourceLoc pending_loc;
    LessonStep pending_keys;  // the marker's view= and machine=
    for (; i < m_lines.size(); ++i) {
      const Line& line = m_lines[i];
      const std::string t = trim(line.text);
      const size_t indent = line.text.find_first_not_of(' ');
      if (t.rfind("```", 0) == 0 && indent <= 3) {
        i = fence(i);
        continue;
      }
      if (t.rfind("<!--", 0) == 0 && t.find("step:") != std::string::npos) {
        if (!pending_step.empty()) add_step(pending_step, pending_step, pending_loc, pending_keys);
        pending_keys = {};
        step_marker(line, pending_step, pending_loc, pending_keys);
        continue;
      }
      if (t.rfind("#", 0) == 0) {
        size_t hashes = 0;
        while (hashes < t.size() && t[hashes] == '#') ++hashes;
        const std::string heading = trim(t.substr(hashes));
        if (!pending_step.empty()) {
          add_step(pending_step, heading, pending_loc, pending_keys);
          pending_step.clear();
          continue;
        }
        if (heading.rfind("Step ", 0) == 0) {
          size_t j = 5;
          std::string number;
          while (j < heading.size() && std::isdigit(static_cast<unsigned char>(heading[j])))
            number += heading[j++];
          if (number.empty() || j >= heading.size() || (heading[j] != ':' && heading[j] != '.'))
            fail(line, static_cast<int>(hashes) + 2,
                 "a step heading reads '### Step N: title' (N a number, then ':')");
          add_step("step-" + number, trim(heading.substr(j + 1)),
                   loc(line, static_cast<int>(line.text.find('#')) + 1));
        }
      }
    }
    if (!pending_step.empty()) add_step(pending_step, pending_step, pending_loc, pending_keys);
    return std::move(m_lesson);
  }

 private:
  graph::SourceLoc loc(const Line& line, int col) const { return {m_file, line.number, col}; }
  [[noreturn]] void fail(const Line& line, int col, const std::string& message) const {
    throw LessonError(loc(line, col), message);
  }

  void add_step(const std::string& id, const std::string& title, const graph::SourceLoc& where,
                const LessonStep& keys = {}) {
    for (const LessonStep& s : m_lesson.steps)
      if (s.id == id)
        throw LessonError(where, "step id '" + id + "' is used twice (first at line " +
                                     std::to_string(s.loc.line) + ")");
    LessonStep step = keys;
    step.id = id;
    step.title = title;
    step.loc = where;
    m_lesson.steps.push_back(std::move(step));
    m_current_step = id;
  }

  // `<!-- step: ID [view=VIEW] [machine=PRESET] -->`: the id, then key=value words for the player.
  void step_marker(const Line& line, std::string& id, graph::SourceLoc& id_loc, LessonStep& keys) {
    const std::string_view t = line.text;
    const size_t colon = t.find("step:");
    const size_t close = t.find("-->", colon);
    if (close == std::string_view::npos)
      fail(line, static_cast<int>(t.find("<!--")) + 1,
           "a step marker must close on its line: <!-- step: id -->");
    // Words separated by blanks, each with its column (1-based) in the line.
    std::vector<std::pair<std::string, int>> words;
    for (size_t p = colon + 5; p < close;) {
      while (p < close && (t[p] == ' ' || t[p] == '\t')) ++p;
      if (p >= close) break;
      size_t end = p;
      while (end < close && t[end] != ' ' && t[end] != '\t') ++end;
      words.emplace_back(std::string(t.substr(p, end - p)), static_cast<int>(p) + 1);
      p = end;
    }
    if (words.empty()) fail(line, static_cast<int>(colon) + 6, "a step marker needs an id");
    id = words[0].first;
    id_loc = loc(line, words[0].second);
    // An id with a blank inside ("a b") reads as the id and a word that is no key=value; say what
    // is wrong with the id, as before keys existed.
    if (!is_id(id) || (words.size() > 1 && words[1].first.find('=') == std::string::npos)) {
      std::string whole;
      for (const auto& w : words)
        if (w.first.find('=') == std::string::npos) whole += (whole.empty() ? "" : " ") + w.first;
      throw LessonError(id_loc, "step id '" + whole + "' must be letters, digits, '-' or '_'");
    }
    for (size_t w = 1; w < words.size(); ++w) {
      const auto& [word, col] = words[w];
      const size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
        fail(line, col, "a step marker's keys read key=value (view=memory), not '" + word + "'");
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      const graph::SourceLoc value_loc = loc(line, col + static_cast<int>(eq) + 1);
      if (key == "view") {
        if (!keys.view.empty()) fail(line, col, "view= is given twice");
        const auto& views = step_view_names();
        if (std::find(views.begin(), views.end(), value) == views.end())
          throw LessonError(value_loc, "unknown view '" + value + "' (known: " + join(views) + ")");
        keys.view = value;
        keys.view_loc = value_loc;
      } else if (key == "machine") {
        if (!keys.machine.empty()) fail(line, col, "machine= is given twice");
        const std::vector<std::string> presets = predict::preset_names();
        if (std::find(presets.begin(), presets.end(), value) == presets.end())
          throw LessonError(value_loc, "unknown machine '" + value + "' (presets: " +
                                           (presets.empty() ? "none found" : join(presets)) + ")");
        keys.machine = value;
        keys.machine_loc = value_loc;
      } else if (key == "teaches") {
        if (!keys.teaches.empty()) fail(line, col, "teaches= is given twice");
        size_t at = 0;
        for (size_t comma = value.find(','); at <= value.size(); comma = value.find(',', at)) {
          const std::string item =
              value.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          if (!is_id(item))
            throw LessonError(loc(line, col + static_cast<int>(eq + 1 + at)),
                              "teaches= lists concept keys separated by commas "
                              "(letters, digits, '-' or '_'), not '" +
                                  item + "'");
          keys.teaches.push_back(item);
          if (comma == std::string::npos) break;
          at = comma + 1;
        }
        keys.teaches_loc = value_loc;
      } else if (key == "trace") {
        if (!keys.trace.empty()) fail(line, col, "trace= is given twice");
        std::string path;
        try {
          path = resolve_lesson_path(value, m_lesson.file);
        } catch (const RecordedError& e) {
          throw LessonError(value_loc, e.what());
        }
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
          throw LessonError(value_loc, "no trace file '" + value + "' (looked for " + path + ")");
        keys.trace = value;
        keys.trace_loc = value_loc;
      } else {
        fail(line, col, "unknown step key '" + key + "' (known: view, machine, teaches, trace)");
      }
    }
  }

  static std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  // Returns the index of the first line after the front matter.
  size_t front_matter() {
    if (m_lines.empty() || trim(m_lines[0].text) != "---")
      throw LessonError({m_file, 1, 1},
                        "a lesson starts with front matter: '---', then title:, level:, "
                        "minutes: lines, then '---'");
    size_t i = 1;
    bool closed = false;
    std::set<std::string> seen;
    for (; i < m_lines.size(); ++i) {
      const Line& line = m_lines[i];
      const std::string t = trim(line.text);
      if (t == "---") {
        closed = true;
        ++i;
        break;
      }
      if (t.empty() || t[0] == '#') continue;
      const size_t colon = line.text.find(':');
      if (colon == std::string_view::npos) fail(line, 1, "front matter lines read 'key: value'");
      const std::string key = trim(line.text.substr(0, colon));
      const std::string value = trim(line.text.substr(colon + 1));
      const int value_col = static_cast<int>(line.text.find_first_not_of(' ', colon + 1)) + 1;
      if (!seen.insert(key).second) fail(line, 1, "front matter key '" + key + "' is given twice");
      if (key == "title") {
        if (value.empty()) fail(line, value_col, "the title is empty");
        m_lesson.title = value;
      } else if (key == "level") {
        if (value != "beginner" && value != "intermediate" && value != "advanced")
          fail(line, value_col, "level is beginner, intermediate or advanced, not '" + value + "'");
        m_lesson.level = value;
      } else if (key == "minutes") {
        int m = 0;
        bool ok = !value.empty() && value.size() < 4;
        for (char c : value) ok = ok && std::isdigit(static_cast<unsigned char>(c));
        if (ok) m = std::stoi(value);
        if (!ok || m < 1 || m > 120)
          fail(line, value_col, "minutes is a whole number from 1 to 120, not '" + value + "'");
        m_lesson.minutes = m;
      } else if (key == "prerequisites") {
        std::string v = value;
        if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
        size_t begin = 0;
        while (begin <= v.size()) {
          size_t end = v.find(',', begin);
          if (end == std::string::npos) end = v.size();
          const std::string id = trim(std::string_view(v).substr(begin, end - begin));
          if (!id.empty()) {
            if (!is_id(id))
              fail(line, value_col, "prerequisite '" + id + "' is not a lesson id (a file stem)");
            m_lesson.prerequisites.push_back(id);
          }
          begin = end + 1;
        }
      } else if (key == "id") {
        if (!is_id(value))
          fail(line, value_col, "id '" + value + "' must be letters, digits, -, _");
        m_lesson.id = value;
      } else {
        fail(line, 1,
             "unknown front matter key '" + key +
                 "' (known: title, level, minutes, prerequisites, id)");
      }
    }
    if (!closed)
      throw LessonError({m_file, 1, 1}, "the front matter opened here is never closed with '---'");
    const graph::SourceLoc top{m_file, 1, 1};
    if (m_lesson.title.empty()) throw LessonError(top, "the front matter needs a title:");
    if (m_lesson.level.empty()) throw LessonError(top, "the front matter needs a level:");
    if (m_lesson.minutes == 0) throw LessonError(top, "the front matter needs minutes:");
    if (m_lesson.id.empty()) {
      std::string stem = m_file;
      const size_t slash = stem.find_last_of("/\\");
      if (slash != std::string::npos) stem = stem.substr(slash + 1);
      const size_t dot = stem.rfind('.');
      if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
      m_lesson.id = stem;
    }
    return i;
  }

  // Parses the fenced block opening at line `i`; returns the index of its closing fence.
  size_t fence(size_t i) {
    const Line& open = m_lines[i];
    const size_t start = open.text.find('`');
    size_t ticks = 0;
    while (start + ticks < open.text.size() && open.text[start + ticks] == '`') ++ticks;
    const std::string info = trim(open.text.substr(start + ticks));
    // Find the closing fence first, so an unclosed block is reported at its opening.
    size_t close = i + 1;
    for (; close < m_lines.size(); ++close) {
      const std::string t = trim(m_lines[close].text);
      size_t n = 0;
      while (n < t.size() && t[n] == '`') ++n;
      if (n >= ticks && n == t.size()) break;
    }
    if (close >= m_lines.size())
      fail(open, static_cast<int>(start) + 1,
           "this ``` block is never closed (a line of ``` is missing)");

    const size_t kind_end = info.find_first_of(" \t");
    const std::string kind = info.substr(0, kind_end);
    Block b;
    if (kind == "model") {
      b.kind = BlockKind::Model;
    } else if (kind == "steps") {
      b.kind = BlockKind::Steps;
    } else if (kind == "check") {
      b.kind = BlockKind::Check;
    } else if (kind == "predict") {
      b.kind = BlockKind::Predict;
    } else if (kind == "checkpoint") {
      b.kind = BlockKind::Checkpoint;
    } else {
      if (is_display_language(kind) && info.find('=') == std::string::npos) return close;
      fail(open, static_cast<int>(start + ticks) + 1,
           "unknown block kind '" + kind +
               "': the checker reads model, steps, check, predict and checkpoint blocks; a "
               "block shown as code uses a language such as text, python or cpp");
    }
    b.loc = loc(open, static_cast<int>(start) + 1);
    b.body_line = open.number + 1;
    b.step = m_current_step;
    attributes(open, start + ticks + kind.size(), b);
    for (size_t j = i + 1; j < close; ++j) b.body += std::string(m_lines[j].text) + "\n";
    if (b.kind == BlockKind::Check) {
      for (size_t j = i + 1; j < close; ++j) {
        const std::string t = trim(m_lines[j].text);
        if (t.empty() || t[0] == '#') continue;
        b.checks.push_back(parse_check(m_lines[j].text, loc(m_lines[j], 1)));
      }
      if (b.checks.empty()) fail(open, static_cast<int>(start) + 1, "this check block is empty");
    }
    if (b.kind == BlockKind::Predict) predict(i, close, b);
    if (b.kind == BlockKind::Checkpoint) checkpoint(i, close, b);
    m_lesson.blocks.push_back(std::move(b));
    return close;
  }

  void attributes(const Line& open, size_t from, Block& b) {
    static const std::map<BlockKind, std::vector<std::string>> kKnown = {
        {BlockKind::Model, {"id", "file", "train", "loss", "lr"}},
        {BlockKind::Steps, {"id", "model", "from", "expect"}},
        {BlockKind::Check, {"model", "machine"}},
        {BlockKind::Predict, {"id", "model", "machine"}},
        {BlockKind::Checkpoint, {"id", "model", "machine", "solution"}}};
    size_t p = from;
    const std::string_view t = open.text;
    while (p < t.size()) {
      while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
      if (p >= t.size()) break;
      size_t end = p;
      while (end < t.size() && t[end] != ' ' && t[end] != '\t') ++end;
      const std::string_view word = t.substr(p, end - p);
      const size_t eq = word.find('=');
      const int col = static_cast<int>(p) + 1;
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == word.size())
        fail(open, col, "block attributes read key=value, not '" + std::string(word) + "'");
      Attribute a{std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)),
                  loc(open, col)};
      const auto& known = kKnown.at(b.kind);
      if (std::find(known.begin(), known.end(), a.key) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(open, col,
             "unknown attribute '" + a.key + "' on a " + block_kind_name(b.kind) +
                 " block (known: " + list + ")");
      }
      if (b.attr(a.key)) fail(open, col, "attribute '" + a.key + "' is given twice");
      b.attrs.push_back(std::move(a));
      p = end;
    }
    const graph::SourceLoc where = b.loc;
    if (b.kind != BlockKind::Check) {
      const Attribute* id = b.attr("id");
      if (!id)
        throw LessonError(
            where,
            std::string("a ") + block_kind_name(b.kind) + " block needs id=NAME " +
                (b.kind == BlockKind::Predict ? "so the learner's progress can record the answer"
                 : b.kind == BlockKind::Checkpoint ? "so the learner's progress can record it"
                                                   : "so checks can refer to it"));
      if (!is_id(id->value))
        throw LessonError(id->loc, "id '" + id->value + "' must be letters, digits, '-' or '_'");
      if (id->value == kLearner)
        throw LessonError(id->loc, std::string("id '") + kLearner +
                                       "' is reserved: checkpoint checks use it for the "
                                       "learner's own model and schedule");
      for (const Block& other : m_lesson.blocks) {
        const Attribute* o = other.attr("id");
        if (other.kind != BlockKind::Check && o && o->value == id->value)
          throw LessonError(id->loc, "id '" + id->value + "' is already used by the " +
                                         block_kind_name(other.kind) + " block at line " +
                                         std::to_string(other.loc.line));
      }
    }
    if (b.kind == BlockKind::Steps && !b.attr("model") && !b.attr("from"))
      throw LessonError(where,
                        "a steps block needs model=ID (or from=STEPS_ID) to say what it "
                        "schedules");
    if (b.kind == BlockKind::Steps && b.attr("expect") && b.attr_value("expect") != "refused")
      throw LessonError(b.attr("expect")->loc, "expect= takes only 'refused'");
    if (b.kind == BlockKind::Checkpoint) {
      if (!b.attr("model"))
        throw LessonError(where,
                          "a checkpoint block needs model=ID: the model the learner starts from");
      if (!b.attr("solution"))
        throw LessonError(where,
                          "a checkpoint block needs solution=ID: the steps (or model) block that "
                          "reaches the goal, which `lesson check` verifies and \"Show me\" "
                          "applies");
    }
  }

  // [SECTION] Checkpoint blocks

  // The body of the checkpoint block whose fences are lines `open` and `close`: `goal:` and
  // `hint:` lines, then check lines (see CheckpointBlock in lesson.h).
  void checkpoint(size_t open, size_t close, Block& b) {
    CheckpointBlock& c = b.checkpoint;
    c.id = b.attr_value("id");
    c.model = b.attr_value("model");
    c.solution = b.attr_value("solution");
    std::map<std::string, int> seen;  // key → its line
    for (size_t j = open + 1; j < close; ++j) {
      const Line& line = m_lines[j];
      const std::string t = trim(line.text);
      if (t.empty() || t[0] == '#') continue;
      const size_t indent = line.text.find_first_not_of(" \t");
      // `goal:` and `hint:` lines; anything else is a check (a check never starts `word:`).
      const size_t colon = line.text.find(':');
      const std::string key =
          colon == std::string_view::npos ? "" : trim(line.text.substr(0, colon));
      if (!key.empty() && is_id(key) && key.find('-') == std::string::npos &&
          line.text.find_first_of("=<>!(", indent) > colon) {
        if (key != "goal" && key != "hint")
          fail(line, static_cast<int>(indent) + 1,
               "unknown key '" + key + "' in a checkpoint block" +
                   suggestion(key, {"goal", "hint"}) +
                   " (a checkpoint holds a 'goal:' line, a 'hint:' line and check lines)");
        if (const auto it = seen.find(key); it != seen.end())
          fail(line, static_cast<int>(indent) + 1,
               "'" + key + ":' is given twice in this checkpoint block (first at line " +
                   std::to_string(it->second) + ")");
        seen[key] = line.number;
        const std::string value = trim(line.text.substr(colon + 1));
        if (value.empty())
          fail(line, static_cast<int>(colon) + 2,
               "'" + key + ":' is empty: " +
                   (key == "goal" ? "say what the learner is to reach"
                                  : "say what to try after a failed attempt"));
        (key == "goal" ? c.goal : c.hint) = value;
        continue;
      }
      b.checks.push_back(parse_check(line.text, loc(line, 1)));
    }
    const std::string what = "a checkpoint block needs ";
    if (c.goal.empty())
      throw LessonError(b.loc, what + "a 'goal:' line: what the learner is to reach");
    if (c.hint.empty())
      throw LessonError(b.loc, what +
                                   "a 'hint:' line: what the player shows after a failed "
                                   "attempt");
    if (b.checks.empty())
      throw LessonError(b.loc, what +
                                   "at least one check line on `learner`, e.g. "
                                   "'kernels(learner) == 1'");
  }

  // [SECTION] Predict blocks

  // The body of the predict block whose fences are lines `open` and `close` (see lesson.h).
  void predict(size_t open, size_t close, Block& b) {
    PredictBlock& p = b.predict;
    p.id = b.attr_value("id");
    static const std::vector<std::string> kKeys = {"question", "answer",  "within", "unit",
                                                   "choices",  "explain", "hint",   "tries"};
    std::map<std::string, graph::SourceLoc> seen;  // key → where its line starts
    graph::SourceLoc tolerance_loc, tries_loc;
    for (size_t j = open + 1; j < close; ++j) {
      const Line& line = m_lines[j];
      const std::string t = trim(line.text);
      if (t.empty() || t[0] == '#') continue;
      const size_t indent = line.text.find_first_not_of(" \t");
      std::string key;
      size_t value_at = 0;  // offset in line.text where the value starts
      const bool within = t.rfind("within", 0) == 0 &&
                          (t.size() == 6 || t[6] == ' ' || t[6] == '\t' || t[6] == ':');
      if (within) {
        key = "within";
        value_at = indent + 6 + (t.size() > 6 && t[6] == ':' ? 1 : 0);
      } else {
        const size_t colon = line.text.find(':');
        key = colon == std::string_view::npos ? "" : trim(line.text.substr(0, colon));
        if (!is_id(key) || key.find('-') != std::string::npos)
          fail(line, static_cast<int>(indent) + 1,
               "a predict line reads 'key: value' (question, answer, choices, unit, hint, tries, "
               "explain) or 'within 10%', not '" +
                   t + "'");
        value_at = colon + 1;
      }
      const graph::SourceLoc key_loc = loc(line, static_cast<int>(indent) + 1);
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
        throw LessonError(key_loc, "unknown key '" + key + "' in a predict block" +
                                       suggestion(key, kKeys) +
                                       " (known: question, answer, choices, unit, hint, tries, "
                                       "explain, and a 'within 10%' line)");
      if (const auto it = seen.find(key); it != seen.end())
        throw LessonError(key_loc, "'" + key + (key == "within" ? "" : ":") +
                                       "' is given twice in this predict block (first at line " +
                                       std::to_string(it->second.line) + ")");
      seen[key] = key_loc;
      while (value_at < line.text.size() &&
             (line.text[value_at] == ' ' || line.text[value_at] == '\t'))
        ++value_at;
      const std::string value = trim(line.text.substr(std::min(value_at, line.text.size())));
      const graph::SourceLoc value_loc = loc(line, static_cast<int>(value_at) + 1);
      if (key == "explain") {
        p.explain_line = line.number;
        std::vector<std::string> lines{value};
        for (size_t k = j + 1; k < close; ++k) lines.push_back(trim(m_lines[k].text));
        while (!lines.empty() && lines.back().empty()) lines.pop_back();
        while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
        for (size_t k = 0; k < lines.size(); ++k) p.explain += (k ? "\n" : "") + lines[k];
        if (p.explain.empty())
          throw LessonError(value_loc,
                            "the explanation is empty: after 'explain:' say why the "
                            "answer is what it is");
        break;  // the explanation runs to the end of the block
      }
      if (value.empty() && key != "within") throw LessonError(value_loc, "'" + key + ":' is empty");
      if (key == "question") {
        p.question = value;
      } else if (key == "answer") {
        p.answer_text = value;
        p.answer_loc = value_loc;
      } else if (key == "within") {
        p.tolerance_text = value;
        tolerance_loc = value_loc;
      } else if (key == "unit") {
        if (!is_predict_unit(value)) {
          std::string known;
          for (const std::string& u : predict_units()) known += (known.empty() ? "" : ", ") + u;
          throw LessonError(value_loc,
                            "unknown unit '" + value + "'" + suggestion(value, predict_units()) +
                                " (known: " + known + "; leave unit: out for a plain number)");
        }
        p.unit = value;
      } else if (key == "choices") {
        choices(line, value_at, p);
      } else if (key == "hint") {
        p.hint = value;
      } else if (key == "tries") {
        const bool whole = value.size() == 1 && value[0] >= '1' && value[0] <= '9';
        p.tries = whole ? value[0] - '0' : 0;
        if (!whole || p.tries > kMaxPredictTries)
          throw LessonError(value_loc, "tries is a whole number from 1 to " +
                                           std::to_string(kMaxPredictTries) + ", not '" + value +
                                           "'");
        tries_loc = value_loc;
      }
    }
    const std::string what = "a predict block needs ";
    if (p.question.empty()) throw LessonError(b.loc, what + "a 'question:' line");
    if (p.answer_text.empty())
      throw LessonError(b.loc, what + "an 'answer:' line: the expression tilescope computes");
    if (p.explain.empty())
      throw LessonError(b.loc, what + "an 'explain:' line: what the learner reads after answering");
    if (p.is_choice()) {
      if (seen.count("within"))
        throw LessonError(seen.at("within"),
                          "'within' is for numeric answers; a multiple-choice "
                          "answer is right or wrong");
      if (seen.count("unit"))
        throw LessonError(seen.at("unit"),
                          "'unit:' is for numeric answers, not for a "
                          "multiple-choice one");
      if (p.tries >= static_cast<int>(p.choices.size()))
        throw LessonError(tries_loc, "tries: " + std::to_string(p.tries) + " with " +
                                         std::to_string(p.choices.size()) +
                                         " choices lets a learner try them all; allow fewer");
      choice_answer(p);
      return;
    }
    p.answer = parse_expr(p.answer_text, p.answer_loc);
    if (!calls_a_function(p.answer))
      throw LessonError(p.answer_loc,
                        "the answer '" + p.answer_text +
                            "' is typed, not computed: write the expression tilescope "
                            "evaluates (e.g. bytes(a) / bytes(b)), so the revealed number is "
                            "checked");
    if (!seen.count("within"))
      throw LessonError(b.loc, what +
                                   "a tolerance line for its numeric answer: 'within 10%' "
                                   "(relative) or 'within 0.5' (absolute, in the unit)");
    tolerance(tolerance_loc, p);
  }

  // `choices: A | B | C`, the value starting at line.text[at].
  void choices(const Line& line, size_t at, PredictBlock& p) {
    const std::string_view t = line.text;
    size_t begin = at;
    for (;;) {
      size_t end = t.find('|', begin);
      if (end == std::string_view::npos) end = t.size();
      const std::string choice = trim(t.substr(begin, end - begin));
      const size_t first = t.find_first_not_of(" \t", begin);
      const int col =
          static_cast<int>(first == std::string_view::npos || first >= end ? begin : first) + 1;
      const std::string number = std::to_string(p.choices.size() + 1);
      if (choice.empty())
        fail(line, col, "choice " + number + " is empty (choices read 'A | B | C')");
      for (size_t k = 0; k < p.choices.size(); ++k)
        if (p.choices[k] == choice)
          fail(line, col,
               "choice " + number + " '" + choice + "' repeats choice " + std::to_string(k + 1));
      if (p.choices.size() == 26)
        fail(line, col, "a predict block has at most 26 choices (A to Z)");
      p.choices.push_back(choice);
      if (end == t.size()) break;
      begin = end + 1;
    }
    if (p.choices.size() < 2)
      fail(line, static_cast<int>(at) + 1,
           "a multiple-choice question needs at least two choices, separated by '|'");
  }

  // A multiple-choice answer: a letter, a 1-based number, or an expression evaluated later.
  void choice_answer(PredictBlock& p) {
    const std::string& a = p.answer_text;
    const int n = static_cast<int>(p.choices.size());
    const std::string last(1, static_cast<char>('A' + n - 1));
    if (a.size() == 1 && a[0] >= 'A' && a[0] <= 'Z') {
      if (a[0] - 'A' >= n)
        throw LessonError(p.answer_loc,
                          "answer " + a + " is out of range: the choices are A to " + last);
      p.answer_choice = a[0] - 'A';
      return;
    }
    p.answer = parse_expr(a, p.answer_loc);
    if (p.answer.kind != Expr::Kind::Number) return;
    // A number written in the block: checked here, where its place in the file is known.
    p.answer_choice = p.choice_for_number(p.answer.number);
    if (p.answer_choice >= 0) return;
    if (p.numeric_choices())
      throw LessonError(p.answer_loc, "answer " + a +
                                          " is none of the choices: they are numbers, so a "
                                          "number answer names the choice of that value");
    throw LessonError(
        p.answer_loc,
        "answer " + a + " is out of range: the choices are numbered 1 to " + std::to_string(n));
  }

  // `within 10%` (relative), `within 0.5` or `within 1 MiB` (absolute, in the unit).
  void tolerance(const graph::SourceLoc& at, PredictBlock& p) {
    const std::string& t = p.tolerance_text;
    if (t.empty())
      throw LessonError(at,
                        "expected a tolerance after 'within': 'within 10%' (relative) or "
                        "'within 0.5' (absolute, in the unit)");
    if (t.back() == '%') {
      const Quantity q = parse_quantity(trim(t.substr(0, t.size() - 1)), "");
      const std::string digits = trim(t.substr(0, t.size() - 1));
      if (!q.ok || digits.find_first_not_of("0123456789.eE+-") != std::string::npos)
        throw LessonError(at, "bad tolerance '" + t + "': a relative tolerance reads 'within 10%'");
      if (q.value < 0) throw LessonError(at, "a tolerance cannot be negative, as '" + t + "' is");
      if (q.value >= 100)
        throw LessonError(at, "a relative tolerance of " + t +
                                  " would pass any guess of the right sign; keep it below 100%");
      p.relative = true;
      p.tolerance = q.value / 100;
      return;
    }
    const Quantity q = parse_quantity(t, p.unit);
    if (!q.ok)
      throw LessonError(at, "bad tolerance '" + t +
                                "': write 'within 10%' (relative) or an "
                                "absolute amount: " +
                                q.error);
    if (q.value < 0) throw LessonError(at, "a tolerance cannot be negative, as '" + t + "' is");
    p.relative = false;
    p.tolerance = q.value;
  }

  static bool calls_a_function(const Expr& e) {
    if (e.kind == Expr::Kind::Call) return true;
    return std::any_of(e.args.begin(), e.args.end(), calls_a_function);
  }

  std::string m_file;
  Lesson m_lesson;
  std::vector<Line> m_lines;
  std::string m_current_step;
};

}  // namespace

Lesson parse_lesson(std::string_view text, const std::string& file) {
  return LessonParser(text, file).run();
}

Lesson load_lesson_file(const std::string& path) {
  // Capped, so a directory, a FIFO or /dev/zero given as a lesson is an error, not a hang.
  const io::TextInput input = io::read_text_input(path, io::kMaxLessonBytes, "a lesson file");
  if (!input.ok) throw LessonError({path, 0, 0}, input.error);
  return parse_lesson(input.text, path);
}

std::string render_for_terminal(const Lesson& lesson, const RenderOptions& options) {
  std::string out = lesson.title + "\n";
  size_t columns = 0;  // code points, so a title with "—" gets a rule of its own width
  for (unsigned char c : lesson.title) columns += (c & 0xC0) != 0x80 ? 1 : 0;
  out += std::string(std::min<size_t>(columns, 96), '=') + "\n";
  out += "level " + lesson.level + " · about " + std::to_string(lesson.minutes) + " minutes";
  if (!lesson.prerequisites.empty()) {
    out += " · after ";
    for (size_t i = 0; i < lesson.prerequisites.size(); ++i)
      out += (i ? ", " : "") + lesson.prerequisites[i];
  }
  out += "\n";
  // The steps, as the player lists them: id, heading, what the learner will be asked.
  if (!lesson.steps.empty()) out += "\nSteps:\n";
  for (size_t s = 0; s < lesson.steps.size(); ++s) {
    const LessonStep& step = lesson.steps[s];
    size_t checks = 0, predicts = 0, checkpoints = 0;
    for (const Block& b : lesson.blocks) {
      if (b.step != step.id) continue;
      if (b.kind == BlockKind::Check) checks += b.checks.size();
      predicts += b.kind == BlockKind::Predict ? 1 : 0;
      checkpoints += b.kind == BlockKind::Checkpoint ? 1 : 0;
    }
    out += "  " + std::to_string(s + 1) + ". " + step.title + "  [" + step.id + "] " +
           std::to_string(checks) + (checks == 1 ? " check" : " checks");
    if (predicts)
      out += ", " + std::to_string(predicts) + (predicts == 1 ? " prediction" : " predictions");
    if (checkpoints)
      out +=
          ", " + std::to_string(checkpoints) + (checkpoints == 1 ? " checkpoint" : " checkpoints");
    out += "\n";
  }
  std::map<int, const Block*> predict_at;     // opening fence line → predict block
  std::map<int, const Block*> checkpoint_at;  // opening fence line → checkpoint block
  for (const Block& b : lesson.blocks) {
    if (b.kind == BlockKind::Predict) predict_at[b.loc.line] = &b;
    if (b.kind == BlockKind::Checkpoint) checkpoint_at[b.loc.line] = &b;
  }
  const auto lines = split_lines(lesson.text);
  size_t i = 1;
  while (i < lines.size() && trim(lines[i].text) != "---") ++i;
  ++i;
  bool in_comment = false, in_fence = false;
  const Block* predict = nullptr;     // the predict block being printed
  const Block* checkpoint = nullptr;  // the checkpoint block being printed
  for (; i < lines.size(); ++i) {
    std::string l(lines[i].text);
    const std::string t = trim(l);
    if (!in_fence && (in_comment || t.rfind("<!--", 0) == 0)) {
      in_comment = t.find("-->") == std::string::npos;
      continue;
    }
    if (t.rfind("```", 0) == 0) {
      if (!in_fence) {
        const std::string info = trim(t.substr(3));
        out += info.empty() ? "    ┌──\n" : "    ┌── " + info + "\n";
        const auto it = predict_at.find(lines[i].number);
        predict = it == predict_at.end() ? nullptr : it->second;
        const auto cp = checkpoint_at.find(lines[i].number);
        checkpoint = cp == checkpoint_at.end() ? nullptr : cp->second;
      } else {
        predict = nullptr;
        checkpoint = nullptr;
        out += "    └──\n";
      }
      in_fence = !in_fence;
      continue;
    }
    if (checkpoint && !options.answers && t.rfind("hint:", 0) == 0) {
      // The player shows the hint after a failed attempt; a reader of the terminal asks for it.
      out += "    │ hint: (shown after a failed attempt; --answers shows it)\n";
      continue;
    }
    if (predict) {
      // The answer and the explanation are the reveal: hidden unless asked for.
      const PredictBlock& p = predict->predict;
      if (lines[i].number == p.answer_loc.line) {
        if (!options.answers) {
          out += "    │ answer: (hidden until you answer; --answers shows it)\n";
          continue;
        }
        const auto c = options.computed.find(p.id);
        out += "    │ " + l + (c == options.computed.end() ? "" : "   → " + c->second) + "\n";
        continue;
      }
      if (!options.answers && lines[i].number >= p.explain_line) continue;
      if (p.is_choice() && t.rfind("choices:", 0) == 0) {
        // Lettered, as the learner answers them.
        out += "    │ choices:";
        for (size_t k = 0; k < p.choices.size(); ++k)
          out +=
              (k ? " | " : " ") + std::string(1, static_cast<char>('A' + k)) + ") " + p.choices[k];
        out += "\n";
        continue;
      }
    }
    out += (in_fence ? "    │ " : "") + l + "\n";
  }
  return out;
}

}  // namespace tilescope::lesson
