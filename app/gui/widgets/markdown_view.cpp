// Markdown drawn on ImDrawList: md::wrap_spans breaks the spans into lines, each run is drawn in
// its span's font, and an ImGui Dummy reserves the space so the window scrolls over it.
#include "app/gui/widgets/markdown_view.h"

#include "app/gui/widgets/image_cache.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

ImFont* font_for(uint8_t style, const MarkdownStyle& s, ImFont* base) {
  if (style & md::kCode) return s.mono;
  if (style & md::kStrong) return base == s.heading ? s.heading : s.bold;
  return base;
}

float text_width(ImFont* font, std::string_view text) {
  return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, text.data(), text.data() + text.size())
      .x;
}

// An image's drawn size: its own, scaled down to the line width.
ImVec2 image_size(const LoadedImage& img, float width) {
  if (!img.texture) return {0, 0};
  const float w = std::min(width, static_cast<float>(img.width));
  return {w, w * static_cast<float>(img.height) / std::max(1.0f, static_cast<float>(img.width))};
}

}  // namespace

void draw_rich_text(const std::vector<md::Span>& spans, const MarkdownStyle& style,
                    MarkdownAction& action, ImFont* base, ImU32 colour) {
  if (!base) base = style.body;
  if (!colour) colour = style.text;
  const float width = std::max(ImGui::GetContentRegionAvail().x, base->FontSize * 4);
  const auto measure = [&](std::string_view text, uint8_t st) -> float {
    if (st & md::kImage) {
      for (const md::Span& s : spans)
        if ((s.style & md::kImage) && s.text == text) {
          const LoadedImage& img = load_image(s.href, style.base_dir);
          if (img.texture) return image_size(img, width).x;
        }
      return text_width(style.body, "[image: " + std::string(text) + "]");
    }
    return text_width(font_for(st, style, base), text);
  };
  const std::vector<md::WrappedLine> lines = md::wrap_spans(spans, width, measure);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float lh = std::round(base->FontSize * 1.35f);
  const bool window_hovered = ImGui::IsWindowHovered();
  float y = origin.y;
  for (const md::WrappedLine& line : lines) {
    float line_h = lh;
    for (const md::WrappedRun& run : line.runs) {
      const md::Span& span = spans[run.span];
      if (span.style & md::kImage) {
        const LoadedImage& img = load_image(span.href, style.base_dir);
        line_h = std::max(line_h, image_size(img, width).y + lh * 0.3f);
      }
    }
    for (const md::WrappedRun& run : line.runs) {
      const md::Span& span = spans[run.span];
      const ImVec2 pos(origin.x + run.x, y);
      if (span.style & md::kImage) {
        const LoadedImage& img = load_image(span.href, style.base_dir);
        if (img.texture) {
          const ImVec2 size = image_size(img, width);
          dl->AddImage(img.texture, pos, ImVec2(pos.x + size.x, pos.y + size.y));
          if (window_hovered &&
              ImGui::IsMouseHoveringRect(pos, ImVec2(pos.x + size.x, pos.y + size.y)))
            ImGui::SetTooltip("%s", span.text.empty() ? span.href.c_str() : span.text.c_str());
        } else {
          const std::string shown = "[image: " + span.text + "]";
          dl->AddText(style.body, style.body->FontSize, pos, style.subtext, shown.c_str());
          if (window_hovered && ImGui::IsMouseHoveringRect(pos, ImVec2(pos.x + run.w, pos.y + lh)))
            ImGui::SetTooltip("%s", img.error.c_str());
        }
        continue;
      }
      ImFont* font = font_for(span.style, style, base);
      const float ty = y + (lh - font->FontSize) * 0.5f;
      ImU32 c = colour;
      if (span.style & md::kLink)
        c = style.link;
      else if (span.style & md::kEmph)
        c = style.emph;
      if (span.style & md::kCode) {
        // The blanks a word keeps after it are not part of the code box.
        std::string ink = run.text;
        while (!ink.empty() && ink.back() == ' ') ink.pop_back();
        const float w = text_width(font, ink);
        dl->AddRectFilled(ImVec2(pos.x - 2, ty - 1), ImVec2(pos.x + w + 2, ty + font->FontSize + 1),
                          style.code_bg, 3.0f);
      }
      dl->AddText(font, font->FontSize, ImVec2(pos.x, ty), c, run.text.c_str());
      if (span.style & md::kStrike)
        dl->AddLine(ImVec2(pos.x, ty + font->FontSize * 0.55f),
                    ImVec2(pos.x + run.w, ty + font->FontSize * 0.55f), c);
      if (span.style & md::kLink) {
        const ImVec2 a(pos.x, y), b(pos.x + run.w, y + lh);
        const bool hovered = window_hovered && ImGui::IsMouseHoveringRect(a, b);
        if (hovered) {
          dl->AddLine(ImVec2(a.x, ty + font->FontSize), ImVec2(b.x, ty + font->FontSize), c);
          ImGui::SetTooltip("%s", span.href.c_str());
          if (ImGui::IsMouseClicked(0)) action.link = span.href;
        }
      }
    }
    y += line_h;
  }
  ImGui::Dummy(ImVec2(width, y - origin.y));
}

void draw_markdown(const std::vector<md::Block>& blocks, const MarkdownStyle& style,
                   MarkdownAction& action) {
  const float em = style.body->FontSize;
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const md::Block& b = blocks[bi];
    ImGui::PushID(static_cast<int>(bi));
    const float quote_indent = em * 1.0f * static_cast<float>(b.quote);
    if (quote_indent > 0) ImGui::Indent(quote_indent);
    const ImVec2 start = ImGui::GetCursorScreenPos();
    switch (b.kind) {
      case md::BlockKind::Paragraph:
        draw_rich_text(b.spans, style, action);
        ImGui::Dummy(ImVec2(0, em * 0.35f));
        break;
      case md::BlockKind::Heading: {
        ImGui::Dummy(ImVec2(0, em * (b.level <= 2 ? 0.6f : 0.35f)));
        ImFont* font = b.level <= 2 ? style.heading : style.bold;
        draw_rich_text(b.spans, style, action, font);
        if (b.level <= 2) {
          const ImVec2 p = ImGui::GetCursorScreenPos();
          ImGui::GetWindowDrawList()->AddLine(
              p, ImVec2(p.x + ImGui::GetContentRegionAvail().x, p.y), style.rule);
        }
        ImGui::Dummy(ImVec2(0, em * 0.25f));
        break;
      }
      case md::BlockKind::ListItem: {
        const float indent = em * 1.3f * static_cast<float>(std::max(b.level, 1));
        ImGui::Indent(indent);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        if (!b.bullet.empty()) {
          const float bw = text_width(style.body, b.bullet);
          const float lh = std::round(em * 1.35f);
          ImGui::GetWindowDrawList()->AddText(style.body, em,
                                              ImVec2(p.x - bw - em * 0.4f, p.y + (lh - em) * 0.5f),
                                              style.subtext, b.bullet.c_str());
        }
        draw_rich_text(b.spans, style, action);
        ImGui::Unindent(indent);
        ImGui::Dummy(ImVec2(0, em * 0.1f));
        break;
      }
      case md::BlockKind::Code: {
        ImGui::PushFont(style.mono);
        const float lh = ImGui::GetTextLineHeightWithSpacing();
        ImGui::PopFont();
        const int n = std::max(1, static_cast<int>(std::count(b.code.begin(), b.code.end(), '\n')));
        const ImGuiStyle& st = ImGui::GetStyle();
        // Room for every line, and for a horizontal scrollbar when a line is wider than the box.
        const float h = lh * static_cast<float>(n) + st.WindowPadding.y * 2 + st.ScrollbarSize;
        draw_code("code", b.code, style.mono, style.code,
                  ImVec2(ImGui::GetContentRegionAvail().x, h));
        ImGui::Dummy(ImVec2(0, em * 0.3f));
        break;
      }
      case md::BlockKind::Table: {
        size_t cols = 0;
        for (const auto& row : b.rows) cols = std::max(cols, row.size());
        if (cols == 0) break;
        const ImGuiTableFlags flags =
            ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
        if (ImGui::BeginTable("table", static_cast<int>(cols), flags)) {
          for (size_t r = 0; r < b.rows.size(); ++r) {
            ImGui::TableNextRow(r == 0 ? ImGuiTableRowFlags_Headers : 0);
            for (size_t c = 0; c < cols; ++c) {
              ImGui::TableNextColumn();
              if (c < b.rows[r].size())
                draw_rich_text(b.rows[r][c], style, action, r == 0 ? style.bold : style.body);
            }
          }
          ImGui::EndTable();
        }
        ImGui::Dummy(ImVec2(0, em * 0.35f));
        break;
      }
      case md::BlockKind::Rule:
        ImGui::Dummy(ImVec2(0, em * 0.3f));
        ImGui::Separator();
        ImGui::Dummy(ImVec2(0, em * 0.3f));
        break;
    }
    if (quote_indent > 0) {
      const ImVec2 end = ImGui::GetCursorScreenPos();
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(start.x - em * 0.6f, start.y),
                                                ImVec2(start.x - em * 0.6f + 3, end.y),
                                                style.quote_bar);
      ImGui::Unindent(quote_indent);
    }
    ImGui::PopID();
  }
}

}  // namespace tilescope::gui
