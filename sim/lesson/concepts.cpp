// The concept table of lessons/README.md, made from lessons/concepts.txt and the step markers'
// teaches= (concepts.h).
#include "sim/lesson/concepts.h"

#include "sim/lesson/check_language.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace tilescope::lesson {

namespace {

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return std::string(s.substr(a, b - a));
}

bool is_key(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

}  // namespace

std::vector<Concept> parse_concepts(std::string_view text, const std::string& file) {
  std::vector<Concept> out;
  std::map<std::string, int> seen;
  int number = 0;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    ++number;
    at = end + 1;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const size_t a = line.find('|');
    const size_t b = a == std::string_view::npos ? a : line.find('|', a + 1);
    if (b == std::string_view::npos)
      throw LessonError({file, number, 1}, "a concept reads KEY | SOURCE | TEXT");
    Concept c;
    c.key = trim(line.substr(0, a));
    c.source = trim(line.substr(a + 1, b - a - 1));
    c.text = trim(line.substr(b + 1));
    c.loc = {file, number, 1};
    if (!is_key(c.key))
      throw LessonError(c.loc, "a concept key is letters, digits, '-' or '_', not '" + c.key + "'");
    if (c.source != "000" && c.source != "001" && c.source != "both" && c.source != "review")
      throw LessonError({file, number, int(a) + 2},
                        "a concept's source is 000, 001, both or review, not '" + c.source + "'");
    if (c.text.empty() || c.text.find('|') != std::string::npos)
      throw LessonError({file, number, int(b) + 2},
                        "a concept's text is one table cell: not empty, no '|'");
    if (auto it = seen.find(c.key); it != seen.end())
      throw LessonError(c.loc, "concept '" + c.key + "' is listed twice (first at line " +
                                   std::to_string(it->second) + ")");
    seen[c.key] = number;
    out.push_back(std::move(c));
    if (end == text.size()) break;
  }
  return out;
}

std::vector<Concept> load_concepts_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LessonError({path, 1, 1}, "cannot read the concepts file");
  std::stringstream s;
  s << in.rdbuf();
  return parse_concepts(s.str(), path);
}

std::string concept_table(const std::vector<Concept>& concepts,
                          const std::vector<Lesson>& lessons) {
  std::map<std::string, std::vector<std::string>> links;
  for (const Concept& c : concepts) links[c.key];
  for (const Lesson& l : lessons) {
    const std::string file = std::filesystem::path(l.file).filename().string();
    const std::string number = file.substr(0, 2);
    for (const LessonStep& s : l.steps)
      for (const std::string& key : s.teaches) {
        auto it = links.find(key);
        if (it == links.end())
          throw LessonError(s.teaches_loc, "step " + s.id + " teaches '" + key +
                                               "', which lessons/concepts.txt does not list");
        it->second.push_back("[" + number + " · " + s.id + "](" + file + ")");
      }
  }
  std::string out = "| concept | source | where (lesson · step) |\n|---|---|---|\n";
  for (const Concept& c : concepts) {
    const std::vector<std::string>& where = links[c.key];
    if (where.empty())
      throw LessonError(c.loc, "no step teaches concept '" + c.key +
                                   "': add it to a step marker's teaches=");
    std::string cell;
    for (const std::string& w : where) cell += (cell.empty() ? "" : ", ") + w;
    out += "| " + c.text + " | " + c.source + " | " + cell + " |\n";
  }
  return out;
}

}  // namespace tilescope::lesson
