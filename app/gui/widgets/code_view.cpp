// Syntax-coloured source listing (C++, CUDA and the loop-nest pseudo-code share one tokenizer).
#include "app/gui/widgets/code_view.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <vector>

namespace tilescope::gui {

namespace {

bool is_keyword(std::string_view w) {
  static constexpr std::array<std::string_view, 38> kKeywords = {
      "for",        "if",         "else",         "return",        "const",  "float",  "int",
      "int64_t",    "void",       "extern",       "static",        "inline", "auto",   "unsigned",
      "__global__", "__shared__", "__restrict__", "__syncthreads", "extern", "struct", "double",
      "while",      "break",      "continue",     "include",       "std",    "bool",   "true",
      "false",      "parallel",   "vectorized",   "unrolled",      "in",     "range",  "stage",
      "guard",      "namespace",  "char"};
  for (std::string_view k : kKeywords)
    if (w == k) return true;
  return false;
}

}  // namespace

std::string classify_code_line(std::string_view line) {
  std::string cls(line.size(), '0');
  size_t i = 0;
  while (i < line.size()) {
    const char ch = line[i];
    if ((ch == '/' && i + 1 < line.size() && line[i + 1] == '/') || ch == '#') {
      // '#' starts a pseudo-code comment or a preprocessor line: both read as "not code".
      for (size_t j = i; j < line.size(); ++j) cls[j] = '3';
      break;
    }
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      size_t j = i;
      while (j < line.size() &&
             (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_'))
        ++j;
      if (is_keyword(line.substr(i, j - i)))
        for (size_t k = i; k < j; ++k) cls[k] = '1';
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      size_t j = i;
      while (j < line.size() &&
             (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '.'))
        ++j;
      for (size_t k = i; k < j; ++k) cls[k] = '2';
      i = j;
      continue;
    }
    ++i;
  }
  return cls;
}

void draw_code(const char* id, std::string_view source, ImFont* mono, const CodeColours& colours,
               ImVec2 size) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= source.size()) {
    size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) nl = source.size();
    if (nl == source.size() && start == source.size()) break;
    lines.push_back(source.substr(start, nl - start));
    start = nl + 1;
  }
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::PushFont(mono);
  const float lh = ImGui::GetTextLineHeightWithSpacing();
  // The font's own advance: CalcTextSize rounds up, and runs drawn at column * rounded width
  // would drift right of the text before them.
  const float cw =
      ImGui::GetFont()->GetCharAdvance('0') * ImGui::GetFontSize() / ImGui::GetFont()->FontSize;
  const float gutter = cw * 5;
  float widest = 0;
  for (std::string_view l : lines) widest = std::max(widest, static_cast<float>(l.size()));
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(lines.size()), lh);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 by_class[4] = {colours.text, colours.keyword, colours.number, colours.comment};
  while (clipper.Step()) {
    for (int n = clipper.DisplayStart; n < clipper.DisplayEnd; ++n) {
      const ImVec2 pos = ImGui::GetCursorScreenPos();
      const std::string_view line = lines[static_cast<size_t>(n)];
      char num[16];
      std::snprintf(num, sizeof num, "%4d", n + 1);
      dl->AddText(pos, colours.line_number, num);
      const std::string cls = classify_code_line(line);
      size_t i = 0;
      float col = 0;  // in characters: UTF-8 continuation bytes take no column (× in pseudo-code)
      while (i < line.size()) {
        size_t j = i;
        float run = 0;
        while (j < line.size() && cls[j] == cls[i]) {
          if ((static_cast<unsigned char>(line[j]) & 0xC0) != 0x80) run += 1;
          ++j;
        }
        dl->AddText(ImVec2(pos.x + gutter + cw * col, pos.y), by_class[cls[i] - '0'],
                    line.data() + i, line.data() + j);
        col += run;
        i = j;
      }
      ImGui::Dummy(ImVec2(gutter + cw * widest, lh - ImGui::GetStyle().ItemSpacing.y));
    }
  }
  ImGui::PopFont();
  ImGui::EndChild();
}

}  // namespace tilescope::gui
