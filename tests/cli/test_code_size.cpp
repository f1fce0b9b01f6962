// The size budget (issue #27): a function over 150 lines or a source file over 1,000 lines fails,
// unless it is one of today's exceptions listed below with its length now — a ceiling it may not
// grow past, paid down by splitting it (and then deleting its row). The measure is the project's
// style (Google style, clang-format): a function starts at a column-0 line with a '(' and ends at
// the next column-0 '}'; member functions defined inside a class body and lambdas count with the
// function around them.
#include "tests/support/source_tree.h"
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr int kMaxFunctionLines = 150;
constexpr int kMaxFileLines = 1000;

struct FunctionSize {
  std::string file;
  int line = 0;  // 1-based, where the definition starts
  std::string name;
  int lines = 0;
};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::string rtrim(const std::string& s) {
  const size_t end = s.find_last_not_of(" \t\r");
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

// The name before the first '(' of a definition line ("LessonSession::call").
std::string function_name(const std::string& line) {
  const size_t paren = line.find('(');
  size_t b = paren;
  while (b > 0 && (std::isalnum(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_' ||
                   line[b - 1] == ':'))
    --b;
  return line.substr(b, paren - b);
}

std::vector<FunctionSize> function_sizes(const std::string& file, const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<FunctionSize> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || !(std::isalpha(static_cast<unsigned char>(l[0])) || l[0] == '_') ||
        l.find('(') == std::string::npos)
      continue;
    bool skip = false;
    for (const char* kw : {"namespace", "struct", "class", "enum", "using", "template", "typedef",
                           "static_assert"})
      skip = skip || starts_with(l, kw);
    if (skip) continue;
    // The statement's end: a body opening ('{' ending a line) or a declaration (';').
    size_t j = i;
    std::string end;
    for (; j < lines.size() && j - i < 20; ++j) {
      end = rtrim(lines[j]);
      if (end.empty() || end.back() == '{' || end.back() == ';') break;
    }
    if (j >= lines.size() || end.empty() || end.back() != '{') continue;
    if (end.size() >= 3 && end.compare(end.size() - 3, 3, "= {") == 0)
      continue;  // a table's initializer, not a body
    size_t k = j + 1;
    while (k < lines.size() && !starts_with(lines[k], "}")) ++k;
    out.push_back({file, int(i) + 1, function_name(l), int(k - i) + 1});
    i = k;
  }
  return out;
}

int line_count(const std::string& text) {
  return int(std::count(text.begin(), text.end(), '\n')) + (text.empty() || text.back() == '\n' ? 0 : 1);
}

// Today's exceptions: "file:function" → its length when this test was written (a ceiling). Pay
// them down by splitting; the target is at most 6 rows.
const std::map<std::string, int> kLongFunctions = {
    {"app/gui/app.cpp:run_app", 394},
    {"sim/predict/analytic.cpp:analyze_kernel", 249},
    {"sim/graph/autodiff.cpp:Builder::backward_op", 205},
};

// What breaks the budget: functions and files over it and not listed, or listed and grown.
std::vector<std::string> over_budget(const std::map<std::string, std::string>& sources,
                                     const std::map<std::string, int>& exceptions,
                                     std::vector<std::string>* unused = nullptr) {
  std::vector<std::string> out;
  std::map<std::string, bool> seen;
  for (const auto& [file, text] : sources) {
    if (const int n = line_count(text); n > kMaxFileLines)
      out.push_back(file + ": " + std::to_string(n) + " lines, more than " +
                    std::to_string(kMaxFileLines) + " in one file");
    for (const FunctionSize& f : function_sizes(file, text)) {
      if (f.lines <= kMaxFunctionLines) continue;
      const std::string key = f.file + ":" + f.name;
      const auto it = exceptions.find(key);
      seen[key] = true;
      const std::string where = f.file + ":" + std::to_string(f.line) + ": " + f.name + " has " +
                                std::to_string(f.lines) + " lines";
      if (it == exceptions.end())
        out.push_back(where + ", more than " + std::to_string(kMaxFunctionLines) +
                      " (split it into named steps)");
      else if (f.lines > it->second)
        out.push_back(where + ", more than its listed " + std::to_string(it->second) +
                      " (an exception may shrink, never grow)");
    }
  }
  if (unused)
    for (const auto& [key, n] : exceptions)
      if (!seen.count(key)) unused->push_back(key);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("size budget: no function over 150 lines and no file over 1,000, but the listed ones") {
  const std::map<std::string, std::string> sources = tilescope::test::read_source_tree(tilescope::test::is_code_file);
  REQUIRE(sources.count("app/gui/app.cpp") == 1);  // the scan saw the tree
  std::vector<std::string> paid_down;
  const std::vector<std::string> over = over_budget(sources, kLongFunctions, &paid_down);
  INFO(joined(over));
  CHECK(over.empty());
  // A row whose function shrank under the budget (or went) is deleted, so the list stays true.
  INFO("listed but no longer over the budget: " << joined(paid_down));
  CHECK(paid_down.empty());
  CHECK(kLongFunctions.size() <= 6);  // 25 when the test came; the target, 6, is met
}

TEST_CASE("size budget: a long function, a grown exception and a long file are caught") {
  std::string body;
  for (int i = 0; i < 160; ++i) body += "  x += " + std::to_string(i) + ";\n";
  std::string big_file;
  for (int i = 0; i < 1001; ++i) big_file += "// line\n";
  const std::map<std::string, std::string> tree = {
      {"sim/a.cpp", "namespace t {\n\nint long_one(int x,\n             int y) {\n" + body +
                        "  return x;\n}\n\nint short_one() {\n  return 1;\n}\n}  // namespace t\n"},
      {"sim/b.cpp", "void Listed::grown() {\n" + body + "}\n"},
      {"sim/c.h", big_file},
      {"sim/d.cpp", "const int kTable[] = {f(1),\n" + body + "};\nconst Rows kRows = rows(1) = {\n" +
                        body + "};\nstruct S {\n  void f() {\n" + body + "  }\n};\n"},
  };
  const std::vector<FunctionSize> sizes = function_sizes("sim/a.cpp", tree.at("sim/a.cpp"));
  REQUIRE(sizes.size() == 2);
  CHECK(sizes[0].name == "long_one");
  CHECK(sizes[0].line == 3);
  CHECK(sizes[0].lines == 2 + 160 + 2);  // the signature's two lines, the body, return and }
  CHECK(sizes[1].name == "short_one");
  CHECK(sizes[1].lines == 3);
  std::vector<std::string> unused;
  const std::vector<std::string> over =
      over_budget(tree, {{"sim/b.cpp:Listed::grown", 150}, {"sim/x.cpp:gone", 200}}, &unused);
  INFO(joined(over));
  REQUIRE(over.size() == 3);
  CHECK(over[0] == "sim/a.cpp:3: long_one has 164 lines, more than 150 (split it into named steps)");
  CHECK(over[1] ==
        "sim/b.cpp:1: Listed::grown has 162 lines, more than its listed 150 (an exception may "
        "shrink, never grow)");
  CHECK(over[2] == "sim/c.h: 1001 lines, more than 1000 in one file");
  // The table's initializer and the member function in a class body are not column-0 functions.
  CHECK(function_sizes("sim/d.cpp", tree.at("sim/d.cpp")).empty());
  CHECK(unused == std::vector<std::string>{"sim/x.cpp:gone"});
}
