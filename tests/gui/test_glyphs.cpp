// Every character the app can draw has a glyph in the fonts it loads (issue #26: the file browser
// showed "?" for its folder mark, U+25B8, which Inter does not have). The fonts are loaded as the
// app loads them (theme.cpp's load_fonts, the same glyph ranges), and every non-ASCII character in
// the string literals of app/ and sim/ (the texts and messages a learner reads) and in the lessons
// (prose in Inter, fenced code in JetBrains Mono) is looked up without the fallback.
#include "app/gui/theme.h"

#include <doctest/doctest.h>
#include <imgui.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Found {
  char32_t cp;
  std::string where;  // file:line
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The code points of UTF-8 bytes (an invalid sequence is skipped a byte at a time).
std::vector<char32_t> decode(const std::string& bytes) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + static_cast<size_t>(n) > bytes.size()) {
      ++i;
      continue;
    }
    char32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = true;
    for (int k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(bytes[i + static_cast<size_t>(k)]);
      ok = ok && (c >> 6) == 2;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) {
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The non-ASCII characters of a C++ file's string literals, with their lines: comments and
// character literals are skipped, escapes (\xHH, \uXXXX, \UXXXXXXXX) decoded to the bytes the
// compiler makes of them.
std::vector<Found> literal_chars(const fs::path& file) {
  const std::string src = slurp(file);
  std::vector<Found> found;
  int line = 1;
  const auto hexval = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10;
  };
  for (size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '\n') {
      ++line;
    } else if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') ++i;
      --i;
    } else if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      i += 2;
      while (i + 1 < src.size() && !(src[i] == '*' && src[i + 1] == '/')) line += src[i++] == '\n';
      ++i;
    } else if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(src[i - 1])))) {
      // A character literal (a digit separator such as 1'000 follows a digit).
      for (++i; i < src.size() && src[i] != '\''; ++i)
        if (src[i] == '\\') ++i;
    } else if (c == '"' && i > 0 && src[i - 1] == 'R') {
      const size_t open = src.find('(', i);
      const std::string close = ")" + src.substr(i + 1, open - i - 1) + "\"";
      const size_t end = src.find(close, open);
      const std::string body = src.substr(open + 1, end - open - 1);
      for (char32_t cp : decode(body))
        if (cp >= 0x80) found.push_back({cp, file.string() + ":" + std::to_string(line)});
      for (char b : body) line += b == '\n';
      i = end + close.size() - 1;
    } else if (c == '"') {
      std::string bytes;
      for (++i; i < src.size() && src[i] != '"'; ++i) {
        if (src[i] != '\\') {
          bytes += src[i];
          continue;
        }
        const char e = src[++i];
        if (e == 'x') {
          int v = 0;
          while (i + 1 < src.size() && std::isxdigit(static_cast<unsigned char>(src[i + 1])))
            v = v * 16 + hexval(src[++i]);
          bytes += static_cast<char>(v);
        } else if (e == 'u' || e == 'U') {
          uint32_t v = 0;
          for (int k = 0; k < (e == 'u' ? 4 : 8); ++k) v = v * 16 + static_cast<uint32_t>(hexval(src[++i]));
          append_utf8(bytes, v);
        } else {
          bytes += ' ';  // \n, \t, \", \\ ...: ASCII
        }
      }
      for (char32_t cp : decode(bytes))
        if (cp >= 0x80) found.push_back({cp, file.string() + ":" + std::to_string(line)});
    }
  }
  return found;
}

std::string hex(char32_t cp) {
  char b[16];
  std::snprintf(b, sizeof b, "U+%04X", static_cast<unsigned>(cp));
  return b;
}

struct Fonts {
  tilescope::gui::Fonts fonts;
  Fonts() {
    ImGui::CreateContext();
    fonts = tilescope::gui::load_fonts(1.0f);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    ImGui::GetIO().Fonts->GetTexDataAsAlpha8(&pixels, &w, &h);  // builds the atlas
  }
  ~Fonts() { ImGui::DestroyContext(); }
};

}  // namespace

TEST_CASE("every character the app's texts, messages and lessons use has a glyph in its font") {
  REQUIRE_MESSAGE(fs::exists("/usr/share/fonts/opentype/inter/Inter-Regular.otf"),
                  "fonts-inter is not installed (scripts/install-deps.sh installs it)");
  REQUIRE_MESSAGE(fs::exists("/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf"),
                  "fonts-jetbrains-mono is not installed (scripts/install-deps.sh installs it)");
  const Fonts f;
  ImFont* ui = f.fonts.desk.ui;
  ImFont* mono = f.fonts.desk.mono;
  std::vector<std::string> missing;
  std::set<std::pair<char32_t, std::string>> seen;  // one report per character and file
  const auto need = [&](ImFont* font, const char* font_name, char32_t cp, const std::string& where) {
    if (cp > 0xFFFF || font->FindGlyphNoFallback(static_cast<ImWchar>(cp)) == nullptr) {
      const std::string file = where.substr(0, where.rfind(':'));
      if (seen.insert({cp, file}).second)
        missing.push_back(where + ": " + hex(cp) + " has no glyph in " + font_name);
    }
  };
  size_t checked = 0;
  for (const char* root : {"app", "sim"}) {
    REQUIRE(fs::is_directory(root));
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      for (const Found& c : literal_chars(e.path())) {
        need(ui, "Inter", c.cp, c.where);
        ++checked;
      }
    }
  }
  REQUIRE(fs::is_directory("lessons"));
  for (const auto& e : fs::directory_iterator("lessons")) {
    if (e.path().extension() != ".md") continue;
    std::istringstream in(slurp(e.path()));
    std::string text;
    bool code = false;
    for (int line = 1; std::getline(in, text); ++line) {
      if (text.rfind("```", 0) == 0) {
        code = !code;
        continue;
      }
      for (char32_t cp : decode(text)) {
        if (cp < 0x80) continue;
        need(code ? mono : ui, code ? "JetBrains Mono" : "Inter", cp,
             e.path().string() + ":" + std::to_string(line));
        ++checked;
      }
    }
  }
  INFO("non-ASCII characters checked: " << checked);
  CHECK(checked > 100);  // the scan found the texts (the app's arrows, ×, ≈, —, lessons' maths)
  std::string report;
  for (const std::string& m : missing) report += m + "\n";
  CHECK_MESSAGE(missing.empty(), report);
}
