// The lesson handout's HTML: the Markdown model written out, the lesson's blocks as a learner on
// paper needs them, and the answers after a page break.
#include "app/core/lesson_handout.h"

#include "sim/lesson/quantity.h"

#include <algorithm>
#include <cstdio>

namespace tilescope::core {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

namespace {

std::string spans_html(const std::vector<md::Span>& spans) {
  std::string out;
  for (const md::Span& s : spans) {
    if (s.text == "\n") {
      out += "<br>";
      continue;
    }
    if (s.style & md::kImage) {
      out += "<img src=\"" + html_escape(s.href) + "\" alt=\"" + html_escape(s.text) + "\">";
      continue;
    }
    std::string t = html_escape(s.text);
    if (s.style & md::kCode) t = "<code>" + t + "</code>";
    if (s.style & md::kMath) t = "<span class=\"math\">" + t + "</span>";
    if (s.style & md::kEmph) t = "<em>" + t + "</em>";
    if (s.style & md::kStrong) t = "<strong>" + t + "</strong>";
    if (s.style & md::kStrike) t = "<s>" + t + "</s>";
    if (s.style & md::kLink) t = "<a href=\"" + html_escape(s.href) + "\">" + t + "</a>";
    out += t;
  }
  return out;
}

// A short text of a block (a question, an explanation) with its `code` and $maths$.
std::string inline_html(const std::string& text) {
  std::string out;
  for (const md::Block& b : md::parse_markdown(text))
    out += (out.empty() ? "" : "<br>") + spans_html(b.spans);
  return out;
}

}  // namespace

std::string markdown_html(const std::vector<md::Block>& blocks) {
  std::string out;
  for (const md::Block& b : blocks) {
    std::string html;
    switch (b.kind) {
      case md::BlockKind::Heading: {
        const std::string h = "h" + std::to_string(std::clamp(b.level, 1, 6));
        html = "<" + h + ">" + spans_html(b.spans) + "</" + h + ">";
        break;
      }
      case md::BlockKind::Paragraph:
        html = "<p>" + spans_html(b.spans) + "</p>";
        break;
      case md::BlockKind::ListItem: {
        char indent[32];
        std::snprintf(indent, sizeof indent, "%.1fem", 1.4 * b.level);
        html = "<p class=\"li\" style=\"margin-left:" + std::string(indent) +
               "\"><span class=\"bullet\">" + html_escape(b.bullet) + "</span> " +
               spans_html(b.spans) + "</p>";
        break;
      }
      case md::BlockKind::Code:
        html = "<pre><code>" + html_escape(b.code) + "</code></pre>";
        break;
      case md::BlockKind::Table:
        html = "<table>";
        for (size_t r = 0; r < b.rows.size(); ++r) {
          html += "<tr>";
          for (const auto& cell : b.rows[r])
            html += (r == 0 ? "<th>" : "<td>") + spans_html(cell) + (r == 0 ? "</th>" : "</td>");
          html += "</tr>";
        }
        html += "</table>";
        break;
      case md::BlockKind::Rule:
        html = "<hr>";
        break;
    }
    if (b.quote > 0) html = "<blockquote>" + html + "</blockquote>";
    out += html + "\n";
  }
  return out;
}

namespace {

constexpr const char* kStyle =
    R"(body { font-family: "Inter", "Helvetica", sans-serif; max-width: 46em;
  margin: 2em auto; padding: 0 1em; line-height: 1.45; color: #111; }
h1 { font-size: 1.6em; } h3 { margin-top: 1.6em; }
.meta { color: #555; }
pre, code { font-family: "JetBrains Mono", monospace; background: #f3f3f1; }
pre { padding: .5em .7em; border-radius: 4px; overflow-x: auto; }
code { padding: 0 .15em; border-radius: 3px; }
.label { font-weight: 600; margin-top: .8em; } .label code { font-weight: normal; }
.checks { color: #555; font-size: .9em; }
.question, .goal { border: 1.5px solid #444; border-radius: 6px; padding: .6em .8em; margin: 1em 0; }
.goal { border-style: dashed; }
.write { border-bottom: 1px solid #000; height: 1.8em; width: 60%; }
.choice { margin: .2em 0 .2em 1em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #bbb; }
figcaption { color: #555; font-size: .9em; }
table { border-collapse: collapse; } td, th { border: 1px solid #bbb; padding: .2em .5em; }
blockquote { border-left: 3px solid #bbb; margin-left: 0; padding-left: 1em; color: #333; }
.answers { page-break-before: always; break-before: page; }
.after-goal { color: #555; font-style: italic; page-break-after: always; break-after: page; }
.answers li { margin-bottom: .8em; }
@media print { a { color: inherit; } }
)";

}  // namespace

std::string lesson_handout_html(const lesson::Lesson& l, const LessonComputed& computed,
                                const HandoutOptions& options) {
  std::string body;
  std::string answers;
  int question = 0;
  int pending_picture = -1;  // a step whose picture follows its opening prose
  const auto picture = [&](int step) {
    const auto it = options.pictures.find(step);
    if (it == options.pictures.end()) return std::string();
    const lesson::LessonStep& s = l.steps[size_t(step)];
    return "<figure><img src=\"" + html_escape(it->second) + "\" alt=\"the workbench at step " +
           std::to_string(step + 1) + "\"><figcaption>The workbench as step " +
           std::to_string(step + 1) + " (" + html_escape(s.title) +
           ") sets it up in tilescope.</figcaption></figure>\n";
  };
  const std::vector<LessonDocItem> doc = lesson_document(l);
  for (size_t i = 0; i < doc.size(); ++i) {
    const LessonDocItem& item = doc[i];
    switch (item.kind) {
      case LessonDocItem::Kind::Markdown:
        body += markdown_html(item.markdown);
        if (pending_picture >= 0) body += picture(pending_picture);
        pending_picture = -1;
        break;
      case LessonDocItem::Kind::Step:
        if (pending_picture >= 0) body += picture(pending_picture);
        pending_picture = item.step;
        break;
      case LessonDocItem::Kind::Block: {
        if (pending_picture >= 0) body += picture(pending_picture);
        pending_picture = -1;
        const lesson::Block& b = l.blocks[size_t(item.block)];
        const std::string id = html_escape(b.attr_value("id"));
        switch (b.kind) {
          case lesson::BlockKind::Model: {
            std::string why;
            const auto text = lesson_model_text(l, b.attr_value("id"), why);
            body += "<div class=\"label\">Model <code>" + id + "</code></div><pre><code>" +
                    html_escape(text ? *text : b.body) + "</code></pre>\n";
            break;
          }
          case lesson::BlockKind::Steps:
            body += "<div class=\"label\">Schedule steps <code>" + id + "</code> on <code>" +
                    html_escape(b.attr("model") ? b.attr_value("model")
                                                : "after " + b.attr_value("from")) +
                    "</code></div><pre><code>" + html_escape(b.body) + "</code></pre>\n";
            break;
          case lesson::BlockKind::Check: {
            const auto it = computed.checks.find(item.block);
            size_t pass = 0;
            if (it != computed.checks.end())
              for (const lesson::CheckResult& r : it->second) pass += r.pass ? 1 : 0;
            body += "<p class=\"checks\">&#10003; " + std::to_string(b.checks.size()) +
                    (b.checks.size() == 1 ? " claim" : " claims") +
                    " above checked by <code>tilescope-cli lesson check</code>" +
                    (it != computed.checks.end() && pass < it->second.size()
                         ? " (" + std::to_string(it->second.size() - pass) +
                               " fail on the machine that made this handout)"
                         : "") +
                    "</p>\n";
            break;
          }
          case lesson::BlockKind::Predict: {
            const lesson::PredictBlock& q = b.predict;
            ++question;
            body += "<div class=\"question\"><p><strong>Question " + std::to_string(question) +
                    ".</strong> " + inline_html(q.question) + "</p>";
            if (q.is_choice()) {
              for (size_t c = 0; c < q.choices.size(); ++c)
                body += "<p class=\"choice\">&#9744; " + std::string(1, char('A' + c)) + ") " +
                        inline_html(q.choices[c]) + "</p>";
            } else {
              body += "<p>Your prediction" +
                      (q.unit.empty() ? std::string() : " (" + html_escape(q.unit) + ")") +
                      ":</p><div class=\"write\"></div>";
            }
            body += "</div>\n";
            // The answer goes on the last page only.
            std::string shown = "not computed";
            if (const auto a = computed.answers.find(q.id); a != computed.answers.end())
              shown = a->second.ok ? a->second.shown : "cannot be computed: " + a->second.error;
            answers += "<li><strong>Question " + std::to_string(question) + "</strong> (<code>" +
                       html_escape(q.id) + "</code>): <strong>" + html_escape(shown) + "</strong>" +
                       (q.is_choice() ? std::string()
                                      : " &mdash; right within " + html_escape(q.tolerance_text)) +
                       ".<br>" + inline_html(q.explain) + "</li>\n";
            break;
          }
          case lesson::BlockKind::Checkpoint: {
            const lesson::CheckpointBlock& cp = b.checkpoint;
            body += "<div class=\"goal\"><strong>Your turn.</strong> " + inline_html(cp.goal) +
                    " <em>(A hint and a solution are on the last page.)</em></div>\n";
            // On paper the rest of the step (the lesson's solution, what it measures) starts a
            // new page: the screen keeps it closed until the goal is reached (view_lessons.cpp).
            if (step_continues_after(doc, i))
              body += "<p class=\"after-goal\">Turn the page when you have tried: the rest of "
                      "this step shows the lesson's solution.</p>\n";
            std::string solution;
            if (const auto s = computed.solutions.find(cp.id); s != computed.solutions.end())
              solution =
                  s->second.error.empty()
                      ? (s->second.steps.empty() ? "write model " + cp.solution : s->second.steps)
                      : "cannot be built: " + s->second.error;
            answers +=
                "<li><strong>Your turn</strong> (<code>" + html_escape(cp.id) +
                "</code>): " + inline_html(cp.goal) + "<br>Hint: " + inline_html(cp.hint) +
                (solution.empty() ? std::string()
                                  : "<br>A solution: <code>" + html_escape(solution) + "</code>") +
                "</li>\n";
            break;
          }
        }
        break;
      }
    }
  }
  if (pending_picture >= 0) body += picture(pending_picture);

  std::string meta = html_escape(l.level) + " &middot; " + std::to_string(l.minutes) + " minutes";
  if (!l.prerequisites.empty()) {
    std::string pre;
    for (const std::string& p : l.prerequisites) pre += (pre.empty() ? "" : ", ") + p;
    meta += " &middot; read first: " + html_escape(pre);
  }
  std::string page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
                     html_escape(l.title) + " &mdash; handout</title>\n<style>\n" + kStyle +
                     "</style></head>\n<body>\n<p class=\"meta\">tilescope lesson <code>" +
                     html_escape(l.id) + "</code> &middot; " + meta + "</p>\n";
  if (!options.pictures_note.empty())
    page += "<p class=\"meta\">" + html_escape(options.pictures_note) + "</p>\n";
  page += body;
  page += "<section class=\"answers\"><h2>Answers</h2>\n";
  if (!computed.error.empty())
    page += "<p>The answers could not be computed: " + html_escape(computed.error) + "</p>\n";
  page += answers.empty()
              ? "<p>This lesson asks no questions.</p>\n"
              : "<ul style=\"list-style: none; padding-left: 0\">\n" + answers + "</ul>\n";
  page += "</section>\n</body></html>\n";
  return page;
}

}  // namespace tilescope::core
