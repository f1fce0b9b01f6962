// Draws the Markdown model (app/core/markdown.h) into the current ImGui window: wrapped rich text
// in three fonts, headings, lists, block quotes, code boxes, tables, links and images from
// assets/. A link to another lesson (NN-name.md) is reported back so the view can open it.
#pragma once

#include "app/core/markdown.h"
#include "app/gui/widgets/code_view.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace tilescope::gui {

struct MarkdownStyle {
  ImFont* body = nullptr;
  ImFont* bold = nullptr;
  ImFont* mono = nullptr;
  ImFont* heading = nullptr;  // larger type for # and ## (the projector set's bold at a desk)
  ImU32 text, subtext, link, code_bg, emph, rule, quote_bar;
  CodeColours code;
  std::string base_dir;  // where a relative image path is looked up after the working folder
};

struct MarkdownAction {
  std::string link;  // the href of a link the learner clicked ("" when none)
};

// Draws the blocks at the cursor, as wide as the content region.
void draw_markdown(const std::vector<core::md::Block>& blocks, const MarkdownStyle& style,
                   MarkdownAction& action);

// Wrapped rich text of one span list at the cursor, `indent` pixels in (used by the blocks above
// and by the lesson view for questions and explanations).
void draw_rich_text(const std::vector<core::md::Span>& spans, const MarkdownStyle& style,
                    MarkdownAction& action, ImFont* base = nullptr, ImU32 colour = 0);

}  // namespace tilescope::gui
