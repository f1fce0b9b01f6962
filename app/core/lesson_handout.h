// A lesson as a printable HTML handout (`tilescope-cli lesson handout`): the text with its models
// and steps, each predict block as a numbered question with room to answer, each checkpoint as a
// "your turn" goal, pictures of the workbench at each step, and the answers (computed answers,
// explanations, hints, solutions) on a page of their own at the end.
//
// Pure text: the CLI makes the pictures (the app under Xvfb) and writes the files.
#pragma once

#include "app/core/lesson_player.h"
#include "app/core/markdown.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// Text as HTML character data (& < > " escaped).
std::string html_escape(std::string_view text);

// The Markdown model as HTML (headings, paragraphs, list items, code, tables, rules, styled
// spans, links and images).
std::string markdown_html(const std::vector<md::Block>& blocks);

struct HandoutOptions {
  std::map<int, std::string> pictures;  // step index → image path relative to the handout
  std::string pictures_note;            // why there are none, when there are none
};

// The whole handout page. `computed` holds the answers (compute_lesson); a lesson whose session
// could not be built has none, and the answers page says why.
std::string lesson_handout_html(const lesson::Lesson& lesson, const LessonComputed& computed,
                                const HandoutOptions& options);

}  // namespace tilescope::core
