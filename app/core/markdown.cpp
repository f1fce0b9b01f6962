// Markdown → blocks of styled spans (md4c callbacks), LaTeX maths → Unicode text, and word wrap.
//
// Index:
//   [SECTION] LaTeX maths as text
//   [SECTION] md4c callbacks: a stack of open blocks and span styles
//   [SECTION] Word wrap
#include "app/core/markdown.h"

#ifdef TILESCOPE_HAVE_MD4C
#include <md4c.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace tilescope::core::md {

// [SECTION] LaTeX maths as text

namespace {

// UTF-8 of a code point (the maps below hold code points, the text is UTF-8).
std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return out;
}

const std::map<std::string, std::string>& latex_symbols() {
  static const std::map<std::string, std::string> kSymbols = {{"times", "\u00D7"},
                                                              {"cdot", "\u00B7"},
                                                              {"div", "\u00F7"},
                                                              {"pm", "\u00B1"},
                                                              {"le", "\u2264"},
                                                              {"leq", "\u2264"},
                                                              {"ge", "\u2265"},
                                                              {"geq", "\u2265"},
                                                              {"ne", "\u2260"},
                                                              {"neq", "\u2260"},
                                                              {"approx", "\u2248"},
                                                              {"sim", "~"},
                                                              {"to", "\u2192"},
                                                              {"rightarrow", "\u2192"},
                                                              {"leftarrow", "\u2190"},
                                                              {"infty", "\u221E"},
                                                              {"sum", "\u2211"},
                                                              {"prod", "\u220F"},
                                                              {"sqrt", "\u221A"},
                                                              {"ldots", "\u2026"},
                                                              {"dots", "\u2026"},
                                                              {"cdots", "\u22EF"},
                                                              {"in", "\u2208"},
                                                              {"lceil", "\u2308"},
                                                              {"rceil", "\u2309"},
                                                              {"lfloor", "\u230A"},
                                                              {"rfloor", "\u230B"},
                                                              {"prime", "\u2032"},
                                                              {"partial", "\u2202"},
                                                              {"nabla", "\u2207"},
                                                              {"alpha", "\u03B1"},
                                                              {"beta", "\u03B2"},
                                                              {"gamma", "\u03B3"},
                                                              {"delta", "\u03B4"},
                                                              {"epsilon", "\u03B5"},
                                                              {"eta", "\u03B7"},
                                                              {"theta", "\u03B8"},
                                                              {"lambda", "\u03BB"},
                                                              {"mu", "\u03BC"},
                                                              {"pi", "\u03C0"},
                                                              {"rho", "\u03C1"},
                                                              {"sigma", "\u03C3"},
                                                              {"tau", "\u03C4"},
                                                              {"phi", "\u03C6"},
                                                              {"omega", "\u03C9"},
                                                              {"Delta", "\u0394"},
                                                              {"Sigma", "\u03A3"},
                                                              {"Omega", "\u03A9"},
                                                              {"log", "log"},
                                                              {"max", "max"},
                                                              {"min", "min"},
                                                              {"exp", "exp"},
                                                              {"lg", "lg"},
                                                              {",", "\u2009"},
                                                              {";", " "},
                                                              {":", " "},
                                                              {"!", ""},
                                                              {"quad", "  "},
                                                              {"left", ""},
                                                              {"right", ""},
                                                              {"{", "{"},
                                                              {"}", "}"},
                                                              {"%", "%"},
                                                              {"_", "_"},
                                                              {"$", "$"},
                                                              {"\\", " "}};
  return kSymbols;
}

// Superscript and subscript forms of the characters that have one.
std::string script_char(char c, bool super) {
  static const std::map<char, char32_t> kSuper = {
      {'0', 0x2070}, {'1', 0x00B9}, {'2', 0x00B2}, {'3', 0x00B3}, {'4', 0x2074}, {'5', 0x2075},
      {'6', 0x2076}, {'7', 0x2077}, {'8', 0x2078}, {'9', 0x2079}, {'+', 0x207A}, {'-', 0x207B},
      {'=', 0x207C}, {'(', 0x207D}, {')', 0x207E}, {'n', 0x207F}, {'i', 0x2071}};
  static const std::map<char, char32_t> kSub = {
      {'0', 0x2080}, {'1', 0x2081}, {'2', 0x2082}, {'3', 0x2083}, {'4', 0x2084}, {'5', 0x2085},
      {'6', 0x2086}, {'7', 0x2087}, {'8', 0x2088}, {'9', 0x2089}, {'+', 0x208A}, {'-', 0x208B},
      {'=', 0x208C}, {'(', 0x208D}, {')', 0x208E}, {'a', 0x2090}, {'e', 0x2091}, {'o', 0x2092},
      {'x', 0x2093}, {'h', 0x2095}, {'k', 0x2096}, {'l', 0x2097}, {'m', 0x2098}, {'n', 0x2099},
      {'p', 0x209A}, {'s', 0x209B}, {'t', 0x209C}};
  const auto& table = super ? kSuper : kSub;
  const auto it = table.find(c);
  return it == table.end() ? std::string() : utf8(it->second);
}

class LatexReader {
 public:
  explicit LatexReader(std::string_view s) : m_s(s) {}

  std::string all() {
    std::string out;
    while (m_i < m_s.size()) out += item();
    return out;
  }

 private:
  // One item: a group, a command with its arguments, a script, or one character.
  std::string item() {
    const char c = m_s[m_i];
    if (c == '{') return group();
    if (c == '}') {  // unbalanced: dropped
      ++m_i;
      return {};
    }
    if (c == '^' || c == '_') {
      ++m_i;
      const std::string arg = m_i < m_s.size() ? argument() : std::string();
      return script(arg, c == '^');
    }
    if (c == '\\') return command();
    ++m_i;
    return std::string(1, c);
  }

  std::string group() {
    ++m_i;  // '{'
    std::string out;
    while (m_i < m_s.size() && m_s[m_i] != '}') out += item();
    if (m_i < m_s.size()) ++m_i;  // '}'
    return out;
  }

  // A command's or script's argument: a group, or the next single item.
  std::string argument() {
    while (m_i < m_s.size() && m_s[m_i] == ' ') ++m_i;
    if (m_i >= m_s.size()) return {};
    return item();
  }

  std::string command() {
    ++m_i;  // '\'
    if (m_i >= m_s.size()) return "\\";
    size_t end = m_i;
    if (std::isalpha(static_cast<unsigned char>(m_s[end]))) {
      while (end < m_s.size() && std::isalpha(static_cast<unsigned char>(m_s[end]))) ++end;
    } else {
      ++end;  // \, \{ \% ...
    }
    const std::string name(m_s.substr(m_i, end - m_i));
    m_i = end;
    if (name == "frac" || name == "dfrac" || name == "tfrac") {
      const std::string a = argument(), b = argument();
      return wrap(a) + "/" + wrap(b);
    }
    if (name == "text" || name == "mathrm" || name == "mathbf" || name == "mathit" ||
        name == "operatorname" || name == "texttt" || name == "mathsf")
      return argument();
    if (name == "sqrt") return "\u221A" + wrap(argument());
    const auto& symbols = latex_symbols();
    if (const auto it = symbols.find(name); it != symbols.end()) {
      // A word-like symbol (log, max) keeps a blank after it when a letter follows.
      if (std::isalpha(static_cast<unsigned char>(it->second.empty() ? ' ' : it->second.back())) &&
          m_i < m_s.size() && std::isalnum(static_cast<unsigned char>(m_s[m_i])))
        return it->second + " ";
      return it->second;
    }
    return name;  // unknown: the name without its backslash
  }

  // A fraction's side in parentheses unless it is one number or one name.
  static std::string wrap(const std::string& s) {
    const bool simple = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
             static_cast<unsigned char>(c) >= 0x80;
    });
    return simple ? s : "(" + s + ")";
  }

  static std::string script(const std::string& arg, bool super) {
    std::string out;
    for (char c : arg) {
      const std::string s = script_char(c, super);
      if (s.empty()) {
        // Not every letter has a raised or lowered form: the whole script then reads as text.
        return std::string(super ? "^" : "_") + (arg.size() == 1 ? arg : "(" + arg + ")");
      }
      out += s;
    }
    return out;
  }

  std::string_view m_s;
  size_t m_i = 0;
};

}  // namespace

std::string latex_to_text(std::string_view tex) {
  return LatexReader(tex).all();
}

std::string plain_text(const std::vector<Span>& spans) {
  std::string out;
  for (const Span& s : spans) out += s.text;
  return out;
}

// [SECTION] md4c callbacks: a stack of open blocks and span styles

#ifdef TILESCOPE_HAVE_MD4C
namespace {

std::string attribute_text(const MD_ATTRIBUTE& a) {
  return a.text ? std::string(a.text, a.size) : std::string();
}

std::string entity_text(std::string_view e) {
  static const std::map<std::string_view, std::string> kNamed = {
      {"&amp;", "&"},        {"&lt;", "<"},         {"&gt;", ">"},          {"&quot;", "\""},
      {"&apos;", "'"},       {"&nbsp;", "\u00A0"},  {"&times;", "\u00D7"},  {"&middot;", "\u00B7"},
      {"&mdash;", "\u2014"}, {"&ndash;", "\u2013"}, {"&hellip;", "\u2026"}, {"&rarr;", "\u2192"},
      {"&le;", "\u2264"},    {"&ge;", "\u2265"},    {"&asymp;", "\u2248"},  {"&micro;", "\u00B5"}};
  if (const auto it = kNamed.find(e); it != kNamed.end()) return it->second;
  if (e.size() > 3 && e[1] == '#') {
    const bool hex = e[2] == 'x' || e[2] == 'X';
    const std::string digits(e.substr(hex ? 3 : 2, e.size() - (hex ? 4 : 3)));
    char* end = nullptr;
    const unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
    if (end && *end == '\0' && cp > 0 && cp < 0x10000 && (cp < 0xD800 || cp > 0xDFFF))
      return utf8(static_cast<char32_t>(cp));
  }
  return std::string(e);
}

struct ListContext {
  bool ordered = false;
  unsigned next = 1;
};

class Builder {
 public:
  std::vector<Block> blocks;

  int enter_block(MD_BLOCKTYPE type, void* detail) {
    switch (type) {
      case MD_BLOCK_QUOTE:
        ++m_quote;
        break;
      case MD_BLOCK_UL:
        m_lists.push_back({false, 1});
        break;
      case MD_BLOCK_OL:
        m_lists.push_back({true, static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start});
        break;
      case MD_BLOCK_LI: {
        Block& b = start(BlockKind::ListItem);
        b.level = static_cast<int>(m_lists.size());
        if (!m_lists.empty() && m_lists.back().ordered)
          b.bullet = std::to_string(m_lists.back().next++) + ".";
        else
          b.bullet = "\u2022";
        m_item_fresh = true;
        break;
      }
      case MD_BLOCK_HR:
        start(BlockKind::Rule);
        m_current = -1;
        break;
      case MD_BLOCK_H:
        start(BlockKind::Heading).level =
            static_cast<int>(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
        break;
      case MD_BLOCK_CODE: {
        Block& b = start(BlockKind::Code);
        const auto* d = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
        b.lang = attribute_text(d->lang);
        m_in_code = true;
        break;
      }
      case MD_BLOCK_HTML:
        ++m_skip;  // raw HTML (the step markers are comments): not shown
        break;
      case MD_BLOCK_P:
        // The first paragraph of a loose list item is the item's own text.
        if (m_item_fresh && m_current >= 0) {
          m_item_fresh = false;
          break;
        }
        if (!m_lists.empty() && m_in_item_depth > 0) {
          Block& b = start(BlockKind::ListItem);  // a further paragraph of the item: no bullet
          b.level = static_cast<int>(m_lists.size());
        } else {
          start(BlockKind::Paragraph);
        }
        break;
      case MD_BLOCK_TABLE:
        start(BlockKind::Table);
        m_table = m_current;
        break;
      case MD_BLOCK_TR:
        if (m_table >= 0) blocks[size_t(m_table)].rows.emplace_back();
        break;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        if (m_table >= 0 && !blocks[size_t(m_table)].rows.empty())
          blocks[size_t(m_table)].rows.back().emplace_back();
        break;
      default:
        break;
    }
    if (type == MD_BLOCK_LI) ++m_in_item_depth;
    return 0;
  }

  int leave_block(MD_BLOCKTYPE type, void*) {
    switch (type) {
      case MD_BLOCK_QUOTE:
        --m_quote;
        break;
      case MD_BLOCK_UL:
      case MD_BLOCK_OL:
        if (!m_lists.empty()) m_lists.pop_back();
        break;
      case MD_BLOCK_LI:
        --m_in_item_depth;
        m_item_fresh = false;
        m_current = -1;
        break;
      case MD_BLOCK_HTML:
        --m_skip;
        break;
      case MD_BLOCK_CODE:
        m_in_code = false;
        m_current = -1;
        break;
      case MD_BLOCK_TABLE:
        m_table = -1;
        m_current = -1;
        break;
      case MD_BLOCK_H:
      case MD_BLOCK_P:
        m_current = -1;
        break;
      default:
        break;
    }
    return 0;
  }

  int enter_span(MD_SPANTYPE type, void* detail) {
    uint8_t bit = 0;
    switch (type) {
      case MD_SPAN_EM:
        bit = kEmph;
        break;
      case MD_SPAN_STRONG:
        bit = kStrong;
        break;
      case MD_SPAN_CODE:
        bit = kCode;
        break;
      case MD_SPAN_DEL:
        bit = kStrike;
        break;
      case MD_SPAN_A:
        bit = kLink;
        m_href.push_back(attribute_text(static_cast<MD_SPAN_A_DETAIL*>(detail)->href));
        break;
      case MD_SPAN_IMG:
        bit = kImage;
        m_image_src = attribute_text(static_cast<MD_SPAN_IMG_DETAIL*>(detail)->src);
        m_image_alt.clear();
        break;
      case MD_SPAN_LATEXMATH:
      case MD_SPAN_LATEXMATH_DISPLAY:
        bit = kMath;
        m_math.clear();
        break;
      default:
        break;
    }
    m_styles.push_back(bit);
    return 0;
  }

  int leave_span(MD_SPANTYPE type, void*) {
    if (!m_styles.empty()) m_styles.pop_back();
    if (type == MD_SPAN_A && !m_href.empty()) m_href.pop_back();
    if (type == MD_SPAN_IMG) {
      Span s{m_image_alt, static_cast<uint8_t>(style() | kImage), m_image_src};
      append(std::move(s));
    }
    if (type == MD_SPAN_LATEXMATH || type == MD_SPAN_LATEXMATH_DISPLAY) {
      Span s{latex_to_text(m_math), static_cast<uint8_t>(style() | kMath), href()};
      m_math.clear();
      append(std::move(s));
    }
    return 0;
  }

  int text(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size) {
    if (m_skip > 0 || type == MD_TEXT_HTML) return 0;
    std::string t(text, size);
    if (type == MD_TEXT_NULLCHAR) t = "\uFFFD";
    if (type == MD_TEXT_ENTITY) t = entity_text(t);
    if (type == MD_TEXT_SOFTBR) t = " ";
    if (type == MD_TEXT_BR) t = "\n";
    if (m_in_code && m_current >= 0) {
      blocks[size_t(m_current)].code += t;
      return 0;
    }
    const uint8_t st = style();
    if (st & kImage) {
      m_image_alt += t;
      return 0;
    }
    if (st & kMath) {
      m_math += t;
      return 0;
    }
    append(Span{std::move(t), st, href()});
    return 0;
  }

 private:
  Block& start(BlockKind kind) {
    Block b;
    b.kind = kind;
    b.quote = m_quote;
    blocks.push_back(std::move(b));
    m_current = static_cast<int>(blocks.size()) - 1;
    return blocks.back();
  }

  uint8_t style() const {
    uint8_t s = 0;
    for (uint8_t b : m_styles) s |= b;
    return s;
  }
  std::string href() const { return m_href.empty() ? std::string() : m_href.back(); }

  // Adds a span to the open block (or table cell), merging with the previous span of the same
  // style so the wrap sees whole words.
  void append(Span s) {
    std::vector<Span>* target = nullptr;
    if (m_table >= 0) {
      Block& t = blocks[size_t(m_table)];
      if (!t.rows.empty() && !t.rows.back().empty()) target = &t.rows.back().back();
    } else {
      if (m_current < 0) start(BlockKind::Paragraph);  // text outside any block (tight list tail)
      target = &blocks[size_t(m_current)].spans;
    }
    if (!target) return;
    if (!target->empty() && target->back().style == s.style && target->back().href == s.href &&
        !(s.style & kImage) && s.text != "\n" && target->back().text != "\n")
      target->back().text += s.text;
    else
      target->push_back(std::move(s));
  }

  int m_current = -1;  // the block text goes to
  int m_table = -1;
  int m_quote = 0;
  int m_skip = 0;
  int m_in_item_depth = 0;
  bool m_item_fresh = false;
  bool m_in_code = false;
  std::vector<ListContext> m_lists;
  std::vector<uint8_t> m_styles;
  std::vector<std::string> m_href;
  std::string m_image_src, m_image_alt, m_math;
};

}  // namespace

std::vector<Block> parse_markdown(std::string_view text) {
  Builder builder;
  MD_PARSER parser{};
  parser.abi_version = 0;
  parser.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_LATEXMATHSPANS |
                 MD_FLAG_PERMISSIVEURLAUTOLINKS | MD_FLAG_NOINDENTEDCODEBLOCKS;
  parser.enter_block = [](MD_BLOCKTYPE t, void* d, void* u) {
    return static_cast<Builder*>(u)->enter_block(t, d);
  };
  parser.leave_block = [](MD_BLOCKTYPE t, void* d, void* u) {
    return static_cast<Builder*>(u)->leave_block(t, d);
  };
  parser.enter_span = [](MD_SPANTYPE t, void* d, void* u) {
    return static_cast<Builder*>(u)->enter_span(t, d);
  };
  parser.leave_span = [](MD_SPANTYPE t, void* d, void* u) {
    return static_cast<Builder*>(u)->leave_span(t, d);
  };
  parser.text = [](MD_TEXTTYPE t, const MD_CHAR* s, MD_SIZE n, void* u) {
    return static_cast<Builder*>(u)->text(t, s, n);
  };
  md_parse(text.data(), static_cast<MD_SIZE>(text.size()), &parser, &builder);
  // A block left without content (an empty paragraph after a dropped comment) draws nothing.
  std::vector<Block> out;
  for (Block& b : builder.blocks) {
    const bool empty = (b.kind == BlockKind::Paragraph || b.kind == BlockKind::Heading) &&
                       plain_text(b.spans).find_first_not_of(" \n") == std::string::npos &&
                       std::none_of(b.spans.begin(), b.spans.end(),
                                    [](const Span& s) { return s.style & kImage; });
    if (!empty) out.push_back(std::move(b));
  }
  return out;
}
#else
// Without md4c (the headless GPU machine's build, which draws no lesson) each blank-line
// separated part of the text is one plain paragraph.
std::vector<Block> parse_markdown(std::string_view text) {
  std::vector<Block> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n\n", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(start, end - start);
    if (part.find_first_not_of(" \n") != std::string_view::npos) {
      Block b;
      b.spans.push_back({std::string(part), kPlain, {}});
      out.push_back(std::move(b));
    }
    start = end + 2;
  }
  return out;
}
#endif

// [SECTION] Word wrap

namespace {

// Splits a span's text into words, each keeping the blanks after it ("fused, " "DRAM ").
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    while (j < text.size() && text[j] == ' ') ++j;
    words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

size_t utf8_next(const std::string& s, size_t i) {
  ++i;
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  return i;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::vector<WrappedLine> wrap_spans(const std::vector<Span>& spans, float width,
                                    const SpanMeasure& measure) {
  std::vector<WrappedLine> lines(1);
  float x = 0;
  const auto new_line = [&] {
    lines.push_back({});
    x = 0;
  };
  // Puts `text` of span `index` at the end of the current line (merging with a run of the same
  // span, so a line draws one run per span).
  const auto place = [&](size_t index, const std::string& text, float w) {
    WrappedLine& line = lines.back();
    if (!line.runs.empty() && line.runs.back().span == index) {
      line.runs.back().text += text;
      line.runs.back().w += w;
    } else {
      line.runs.push_back({index, text, x, w});
    }
    x += w;
    line.width = x;
  };
  for (size_t si = 0; si < spans.size(); ++si) {
    const Span& span = spans[si];
    if (span.text == "\n") {
      new_line();
      continue;
    }
    if (span.style & kImage) {
      if (!lines.back().runs.empty()) new_line();
      place(si, span.text, std::min(width, measure(span.text, span.style)));
      new_line();
      continue;
    }
    for (const std::string& word : words_of(span.text)) {
      const float w = measure(word, span.style);
      // The blanks that end a word may hang past the edge; only the ink must fit.
      const float ink = measure(rstrip(word), span.style);
      if (x > 0 && x + ink > width) {
        new_line();
        if (word.find_first_not_of(' ') == std::string::npos) continue;  // no blanks at a start
      }
      if (ink <= width || x > 0) {
        place(si, word, w);
        continue;
      }
      // A word wider than the whole line (a long path in code): broken between characters.
      std::string part;
      float part_w = 0;
      for (size_t i = 0; i < word.size();) {
        const size_t next = utf8_next(word, i);
        const std::string ch = word.substr(i, next - i);
        const float cw = measure(part + ch, span.style) - part_w;
        if (!part.empty() && part_w + cw > width) {
          place(si, part, part_w);
          new_line();
          part.clear();
          part_w = 0;
        }
        part += ch;
        part_w = measure(part, span.style);
        i = next;
      }
      if (!part.empty()) place(si, part, part_w);
    }
  }
  if (lines.size() > 1 && lines.back().runs.empty()) lines.pop_back();
  return lines;
}

}  // namespace tilescope::core::md
