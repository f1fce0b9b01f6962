// The lesson player's views: the catalogue (centre, key 7), the open lesson's text beside the
// workbench (left panel; large type in presentation mode), and the first screen's "start here".
//
// Index:
//   [SECTION] Shared: Markdown style, caches of parsed snippets, small helpers
//   [SECTION] The catalogue
//   [SECTION] Lesson blocks: model, steps, check, predict
//   [SECTION] The lesson text panel
//   [SECTION] Start here
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/gui/widgets/markdown_view.h"
#include "sim/lesson/quantity.h"
#include "app/gui/widgets/text_mask.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <map>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// [SECTION] Shared: Markdown style, caches of parsed snippets, small helpers

// Keys in the lesson text window's ImGui storage (whatever the ID stack): the scroll serial it
// last scrolled for, and the width it was laid out at.
constexpr ImGuiID kScrolledSerialKey = 0x7E550001, kTextWidthKey = 0x7E550002;

constexpr const char* kCheck = "\u2713";  // ✓
constexpr const char* kCross = "\u2717";  // ✗

ImU32 with_alpha(ImU32 c, int alpha) {
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
}

// The fonts the lesson text is drawn in: the theme's, or the projector's large type while
// presenting (read from the back of a room).
const FontSet& lesson_fonts(const ViewContext& ctx) {
  return ctx.state.presentation && ctx.large ? *ctx.large : ctx.fonts;
}

MarkdownStyle markdown_style(const ViewContext& ctx) {
  const FontSet& f = lesson_fonts(ctx);
  const Palette& p = ctx.palette;
  MarkdownStyle s;
  s.body = f.ui;
  s.bold = f.ui_bold;
  s.mono = f.mono;
  // Headings one size up: the projector set's bold at a desk (the largest type loaded).
  s.heading = ctx.large && !ctx.state.presentation ? ctx.large->ui_bold : f.ui_bold;
  s.text = p.text;
  s.subtext = p.subtext;
  s.link = p.category[2];
  s.emph = p.category[5];
  s.code_bg = with_alpha(p.subtext, 36);
  s.rule = with_alpha(p.subtext, 90);
  s.quote_bar = with_alpha(p.subtext, 120);
  s.code = {p.text, p.category[2], p.category[5], p.subtext, p.subtext};
  s.base_dir = ctx.state.lessons.dir;
  return s;
}

// Short texts of a lesson (questions, explanations) parsed once: they hold `code` and $maths$.
const std::vector<md::Span>& spans_of(ViewContext& ctx, const std::string& text) {
  std::map<std::string, std::vector<md::Span>>& cache = ctx.caches.lesson_spans;
  const auto it = cache.find(text);
  if (it != cache.end()) return it->second;
  std::vector<md::Span> spans;
  for (const md::Block& b : md::parse_markdown(text)) {
    if (!spans.empty()) spans.push_back({"\n", md::kPlain, {}});
    spans.insert(spans.end(), b.spans.begin(), b.spans.end());
  }
  return cache[text] = std::move(spans);
}

void push_lesson(ViewContext& ctx, const std::string& args) {
  Command c;
  c.kind = CommandKind::Lesson;
  c.text = args;
  ctx.push(std::move(c));
}

void wrapped(const char* text, ImU32 colour) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colour));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

// A link in the lesson text: another lesson opens in the player; anything else is left alone
// (the app opens no browser) and its address shows in the tooltip.
void follow_link(ViewContext& ctx, const std::string& href) {
  if (href.empty()) return;
  std::string stem = href.substr(href.find_last_of('/') + 1);
  const size_t hash = stem.find('#');
  if (hash != std::string::npos) stem.resize(hash);
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == ".md") {
    stem.resize(stem.size() - 3);
    for (const LessonEntry& e : ctx.state.lessons.catalogue)
      if (e.id == stem || e.file.find(stem) != std::string::npos) {
        push_lesson(ctx, "open " + e.id);
        return;
      }
  }
}

// [SECTION] The catalogue

std::string prerequisites_text(const lesson::Lesson& l) {
  std::string out;
  for (const std::string& p : l.prerequisites) {
    // "01-model-to-graph" reads as "01" in a narrow column; the tooltip has the full ids.
    const std::string number = p.substr(0, p.find('-'));
    out += (out.empty() ? "" : ", ") + number;
  }
  return out.empty() ? "—" : out;
}

}  // namespace

void draw_lessons_view(ViewContext& ctx, const Rect& rect) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  if (!begin_panel("Lessons", rect)) {
    end_panel();
    return;
  }
  ImGui::PushFont(ctx.large ? ctx.large->ui_bold : ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Lessons");
  ImGui::PopFont();
  wrapped(
      "Each lesson walks through one idea with the workbench beside it: it loads its models, "
      "asks you to predict a number before it shows it, and checks what you build. Start "
      "with 1; each builds on the ones before.",
      pal.subtext);
  bool teacher = p.teacher;
  if (ImGui::Checkbox("Teacher mode: answers visible", &teacher))
    ctx.push(command_from(teacher ? "teacher on" : "teacher off"));
  note_widget("lessons.teacher");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Shows every prediction's answer at once (not in presentation mode, F5, "
        "where R reveals it to the class). Flag: --teacher");
  ImGui::SameLine();
  if (ImGui::SmallButton("Export my grade\xE2\x80\xA6")) {
    Command c;
    c.kind = CommandKind::Files;
    c.text = "save-grade";
    ctx.push(std::move(c));
  }
  note_widget("lessons.export-grade");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Save what you did, one row per lesson (predictions right first time, after retries, "
        "shown; goals reached by you, shown; steps done), as CSV or JSON for your teacher.");
  ImGui::Spacing();
  if (p.catalogue.empty()) {
    wrapped(("No lessons found in " + p.dir +
             "/ (the app looks there, relative to the folder it was started in).")
                .c_str(),
            pal.error);
    end_panel();
    return;
  }
  // Wide: one column each for level, prerequisites and progress. Narrow (UI scale 150 % on a
  // 1280-pixel window, the projector theme): they go under the title, which keeps the width — as
  // columns they took it all, and titles wrapped one letter a line.
  const float em = ImGui::GetFontSize();
  const bool wide = ImGui::GetContentRegionAvail().x > em * 36;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  if (ImGui::BeginTable("catalogue", wide ? 6 : 2, flags, ImVec2(0, 0))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, em * 1.5f);
    ImGui::TableSetupColumn("Lesson", ImGuiTableColumnFlags_WidthStretch);
    if (wide) {
      ImGui::TableSetupColumn("Level", ImGuiTableColumnFlags_WidthFixed);
      ImGui::TableSetupColumn("Needs", ImGuiTableColumnFlags_WidthFixed, em * 7);
      ImGui::TableSetupColumn("Progress", ImGuiTableColumnFlags_WidthFixed, em * 6.5f);
      ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
    }
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < p.catalogue.size(); ++i) {
      const LessonEntry& e = p.catalogue[i];
      ImGui::PushID(static_cast<int>(i));
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::AlignTextToFramePadding();
      ImGui::Text("%zu", i + 1);
      ImGui::TableNextColumn();
      if (!e.lesson) {
        // A malformed lesson is listed with where it went wrong; the others still open.
        ImGui::PushFont(ctx.fonts.ui_bold);
        ImGui::TextUnformatted(e.file.c_str());
        ImGui::PopFont();
        wrapped(e.error.c_str(), pal.error);
        note_widget("lessons.error." + e.id);
        ImGui::PopID();
        continue;
      }
      const lesson::Lesson& l = *e.lesson;
      ImGui::PushFont(ctx.fonts.ui_bold);
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextUnformatted(l.title.c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopFont();
      note_widget("lessons.title." + l.id);  // a layout test counts its lines
      ImGui::PushTextWrapPos(0.0f);
      if (wide)
        ImGui::TextDisabled("%zu steps \xC2\xB7 %d min", l.steps.size(), l.minutes);
      else
        ImGui::TextDisabled("%s \xC2\xB7 %zu steps \xC2\xB7 %d min \xC2\xB7 needs %s",
                            l.level.c_str(), l.steps.size(), l.minutes,
                            prerequisites_text(l).c_str());
      // What the learner did, as a teacher's grade counts it (lesson_grade.h).
      const lesson::LessonGrade g = lesson_grade(p, i);
      if (g.predictions + g.checkpoints > 0 &&
          g.first_try + g.after_retries + g.revealed + g.reached + g.shown > 0)
        ImGui::TextDisabled(
            "predictions: %zu first try, %zu after retries, %zu shown \xC2\xB7 goals: %zu yours, "
            "%zu shown",
            g.first_try, g.after_retries, g.revealed, g.reached, g.shown);
      ImGui::PopTextWrapPos();
      const auto [done, total] = lesson_steps_done(p, i);
      const std::string progress = std::to_string(done) + "/" + std::to_string(total) + " steps";
      if (wide) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(l.level.c_str());
        ImGui::TableNextColumn();
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted(prerequisites_text(l).c_str());
        ImGui::PopTextWrapPos();
        if (ImGui::IsItemHovered() && !l.prerequisites.empty()) {
          std::string all;
          for (const std::string& pre : l.prerequisites) all += pre + "\n";
          ImGui::SetTooltip("Read first:\n%s", all.c_str());
        }
        ImGui::TableNextColumn();
      }
      ImGui::ProgressBar(total ? static_cast<float>(done) / static_cast<float>(total) : 0.0f,
                         ImVec2(wide ? -FLT_MIN : std::min(em * 6, ImGui::GetContentRegionAvail().x * 0.5f), 0),
                         progress.c_str());
      if (wide)
        ImGui::TableNextColumn();
      else
        ImGui::SameLine();
      const bool is_open = p.open == static_cast<int>(i);
      const char* label = is_open         ? "Reading"
                          : done == 0     ? "Open"
                          : done == total ? "Review"
                                          : "Continue";
      if (ImGui::Button(label)) push_lesson(ctx, "open " + l.id);
      note_widget("lessons.open." + l.id);
      if (done > 0) {
        if (wide) ImGui::SameLine();
        if (ImGui::SmallButton("Reset")) push_lesson(ctx, "reset " + l.id);
        note_widget("lessons.reset." + l.id);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("Forget this lesson's progress: steps done and predictions made.");
      }
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  end_panel();
}

namespace {

// [SECTION] Lesson blocks: model, steps, check, predict

// Scrolls the lesson text so the cursor is at its top, once per `serial` (the player bumps it on
// a step change, a reveal, a focus). The text's child window keeps which serial it scrolled for.
void scroll_here_once(int serial) {
  ImGuiStorage* storage = ImGui::GetStateStorage();
  if (storage->GetInt(kScrolledSerialKey, -1) == serial) return;
  storage->SetInt(kScrolledSerialKey, serial);
  ImGui::SetScrollHereY(0.0f);
}

std::string block_id(const lesson::Block& b) {
  return b.kind == lesson::BlockKind::Predict ? b.predict.id : b.attr_value("id");
}

// A code box just tall enough for its lines (and a scrollbar only when a line is wider than it).
float code_height(const std::string& code, ImFont* mono) {
  const int n = std::max(1, static_cast<int>(std::count(code.begin(), code.end(), '\n')));
  const ImGuiStyle& st = ImGui::GetStyle();
  float widest = 0;
  for (size_t start = 0; start < code.size();) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    widest = std::max(
        widest,
        mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, code.data() + start, code.data() + end).x);
    start = end + 1;
  }
  // The listing's line-number gutter is about four characters.
  const bool scrolls =
      widest + mono->FontSize * 3.5f + st.WindowPadding.x * 2 > ImGui::GetContentRegionAvail().x;
  return (mono->FontSize + st.ItemSpacing.y) * static_cast<float>(n) + st.WindowPadding.y * 2 +
         (scrolls ? st.ScrollbarSize : 0);
}

void block_label(const ViewContext& ctx, const char* kind, const std::string& what) {
  ImGui::PushFont(lesson_fonts(ctx).ui_bold);
  ImGui::TextUnformatted(kind);
  ImGui::PopFont();
  if (!what.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", what.c_str());
  }
}

void draw_model_block(ViewContext& ctx, const lesson::Block& b, const MarkdownStyle& ms) {
  const std::string id = b.attr_value("id");
  const LessonPlayer& p = ctx.state.lessons;
  std::string why;
  const auto text = lesson_model_text(*p.lesson, id, why);
  std::string what = id;
  if (b.attr("file")) what += " \xC2\xB7 " + b.attr_value("file");
  if (b.attr("train")) what += " \xC2\xB7 training graph of " + b.attr_value("train");
  block_label(ctx, "Model", what);
  const std::string shown = text ? *text : b.body;
  if (!shown.empty())
    draw_code(("model-" + id).c_str(), shown, ms.mono, ms.code,
              ImVec2(ImGui::GetContentRegionAvail().x, code_height(shown, ms.mono)));
  if (!text) {
    wrapped(why.c_str(), ctx.palette.subtext);
  } else if (*text == ctx.state.model.text) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ctx.palette.ok), "%s in the editor", kCheck);
  } else {
    if (ImGui::Button(("Load model " + id).c_str())) push_lesson(ctx, "load-model " + id);
    note_widget("lesson.load." + id);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Puts this model into the model text (yours is kept: Restore brings it "
          "back).");
  }
}

void draw_steps_block(ViewContext& ctx, const lesson::Block& b, const MarkdownStyle& ms) {
  const std::string id = b.attr_value("id");
  const LessonPlayer& p = ctx.state.lessons;
  std::string what = id + " \xC2\xB7 on " +
                     (b.attr("model") ? b.attr_value("model") : "after " + b.attr_value("from"));
  block_label(ctx, "Schedule steps", what);
  draw_code(("steps-" + id).c_str(), b.body, ms.mono, ms.code,
            ImVec2(ImGui::GetContentRegionAvail().x, code_height(b.body, ms.mono)));
  const LessonProgramInfo* info = nullptr;
  if (p.computed)
    if (const auto it = p.computed->programs.find(id); it != p.computed->programs.end())
      info = &it->second;
  if (!p.computed) {
    ImGui::BeginDisabled();
    ImGui::Button("Apply these steps");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("(the lesson is being computed)");
    return;
  }
  if (!info) return;
  if (ImGui::Button("Apply these steps")) push_lesson(ctx, "apply " + id);
  note_widget("lesson.apply." + id);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Loads model %s and applies the steps in the Schedule view, where Ctrl+Z "
        "takes them back one by one.",
        info->model.c_str());
  if (info->refused) {
    ImGui::SameLine();
    disabled_wrapped("the last step is refused, as the lesson expects");
  }
}

void draw_check_block(ViewContext& ctx, int index, const lesson::Block& b) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  if (!p.computed) {
    ImGui::TextDisabled("%zu checks: being computed\xE2\x80\xA6", b.checks.size());
    return;
  }
  const auto it = p.computed->checks.find(index);
  if (it == p.computed->checks.end()) {
    // The session could not be built: nothing was evaluated, and the panel's top says why.
    ImGui::TextDisabled("%zu checks: not evaluated", b.checks.size());
    return;
  }
  const std::vector<lesson::CheckResult>& results = it->second;
  const size_t pass = static_cast<size_t>(
      std::count_if(results.begin(), results.end(), [](const auto& r) { return r.pass; }));
  const bool all = pass == results.size();
  const std::string label =
      all ? std::to_string(results.size()) + (results.size() == 1 ? " check " : " checks ") + kCheck
          : std::to_string(results.size() - pass) + " of " + std::to_string(results.size()) +
                " checks fail on this machine " + kCross;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(all ? pal.ok : pal.error));
  const bool open = ImGui::TreeNodeEx(("check-" + std::to_string(index)).c_str(),
                                      ImGuiTreeNodeFlags_SpanAvailWidth, "%s", label.c_str());
  ImGui::PopStyleColor();
  note_widget("lesson.checks." + std::to_string(b.loc.line));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The numbers the text claims, checked against what tilescope computes "
        "(line %d of the lesson). Open to see each.",
        b.loc.line);
  if (!open) return;
  for (const lesson::CheckResult& r : results) {
    ImGui::PushStyleColor(ImGuiCol_Text,
                          ImGui::ColorConvertU32ToFloat4(r.pass ? pal.ok : pal.error));
    ImGui::TextUnformatted(r.pass ? kCheck : kCross);
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::PushFont(lesson_fonts(ctx).mono);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(r.check.text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    ImGui::Indent();
    if (!r.error.empty()) {
      wrapped(("line " + std::to_string(r.check.loc.line) + ": " + r.error).c_str(), pal.error);
    } else {
      const std::string values = r.lhs.to_string() + "  vs  " + r.rhs.to_string();
      wrapped(values.c_str(), pal.subtext);
    }
    ImGui::Unindent();
  }
  ImGui::TreePop();
}

// The reveal: the learner's value beside the computed answer, how far off, the explanation.
void draw_reveal(ViewContext& ctx, const lesson::Block& b, const lesson::PredictionRecord* r,
                 const MarkdownStyle& ms) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  const lesson::PredictBlock& q = b.predict;
  MarkdownAction action;
  const lesson::Answer* answer = nullptr;
  if (p.computed)
    if (const auto it = p.computed->answers.find(q.id); it != p.computed->answers.end())
      answer = &it->second;
  if (r) {
    const char* mark = r->pass ? kCheck : kCross;
    std::string verdict;
    if (r->choice) {
      verdict = r->pass ? "Right." : "Not this one.";
    } else if (r->pass) {
      verdict = "Right: within " + q.tolerance_text + ".";
    } else if (std::isfinite(r->relative_error)) {
      verdict = "Off by " + format_percent(r->relative_error) + " (within " + q.tolerance_text +
                " counts as right).";
    } else {
      verdict = "Off: the answer is 0.";
    }
    ImGui::PushFont(ms.bold);
    wrapped((std::string(mark) + " " + verdict).c_str(), r->pass ? pal.ok : pal.error);
    ImGui::PopFont();
    const auto choice_text = [&](int c) {
      return c >= 0 && c < static_cast<int>(q.choices.size())
                 ? std::string(1, static_cast<char>('A' + c)) + ") " + q.choices[size_t(c)]
                 : std::string("?");
    };
    const std::string you = r->choice ? "You chose " + choice_text(r->learner_choice)
                                      : "You said " + lesson::format_quantity(r->value, q.unit) +
                                            " (typed \"" + r->input + "\")";
    const std::string truth = r->choice ? "The answer: " + choice_text(r->answer_choice)
                                        : "Computed: " + lesson::format_quantity(r->answer, q.unit);
    wrapped(you.c_str(), pal.text);
    wrapped(truth.c_str(), pal.text);
  } else if (answer) {
    const bool presenting = ctx.state.presentation;
    ImGui::PushFont(ms.bold);
    wrapped(presenting ? "Revealed to the class" : "Teacher mode: the answer", pal.subtext);
    ImGui::PopFont();
    wrapped(answer->ok ? ("Computed: " + answer->shown).c_str()
                       : ("Cannot be computed here: " + answer->error).c_str(),
            answer->ok ? pal.text : pal.error);
  }
  draw_rich_text(spans_of(ctx, q.explain), ms, action, nullptr, pal.text);
  follow_link(ctx, action.link);
}

void draw_predict_block(ViewContext& ctx, const lesson::Block& b, const MarkdownStyle& ms) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  const lesson::PredictBlock& q = b.predict;
  // `r` once the prediction is settled (right, out of tries, or given up); a wrong try with tries
  // left keeps the field open and the answer hidden.
  const lesson::PredictionRecord* tried = p.progress ? p.progress->prediction(q.id) : nullptr;
  const lesson::PredictionRecord* r = tried && tried->settled() ? tried : nullptr;
  const bool visible = answer_visible(p, ctx.state.presentation, q.id);
  // A framed card: the question is the thing to do on this step.
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  const float pad = ms.body->FontSize * 0.5f;
  ImGui::Indent(pad);
  ImGui::Dummy(ImVec2(0, pad * 0.5f));
  ImGui::PushFont(ms.bold);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.category[2]), "Predict");
  ImGui::PopFont();
  ImGui::SameLine();
  const int tries = p.progress ? p.progress->tries_for(q.id) : lesson::kDefaultPredictTries;
  const int left = tries - (tried ? tried->attempts : 0);
  const std::string status = r && r->pass ? "answered"
                             : r          ? "answer shown"
                             : tried      ? std::to_string(left) + " of " + std::to_string(tries) +
                                           (tries == 1 ? " try" : " tries") + " left"
                                          : "before you read on (" + std::to_string(tries) +
                                           (tries == 1 ? " try)" : " tries)");
  ImGui::TextDisabled("%s", status.c_str());
  MarkdownAction action;
  ImGui::PushItemWidth(width - pad * 2);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - pad * 2);
  std::optional<TextMaskPause> question;  // the question and its choices, as the author wrote them
  question.emplace();
  draw_rich_text(spans_of(ctx, q.question), ms, action, ms.bold);
  follow_link(ctx, action.link);
  if (q.is_choice()) {
    for (size_t c = 0; c < q.choices.size(); ++c) {
      const std::string letter(1, static_cast<char>('A' + c));
      const std::string label = letter + ")  " + q.choices[c];
      const bool picked = r && r->learner_choice == static_cast<int>(c);
      const bool right = visible && p.computed && p.computed->answers.count(q.id) &&
                         p.computed->answers.at(q.id).choice == static_cast<int>(c);
      if (picked || right)
        ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(
                                                   with_alpha(right ? pal.ok : pal.error, 90)));
      if (r) ImGui::BeginDisabled();
      if (ImGui::Button(label.c_str())) push_lesson(ctx, "predict " + q.id + " " + letter);
      if (r) ImGui::EndDisabled();
      if (picked || right) ImGui::PopStyleColor();
      note_widget("lesson.choice." + q.id + "." + letter);
    }
  }
  question.reset();
  if (!q.is_choice() && !r) {
    std::string draft;
    if (const auto it = p.drafts.find(q.id); it != p.drafts.end()) draft = it->second;
    const float em = ms.body->FontSize;
    ImGui::SetNextItemWidth(std::min(em * 9, width * 0.5f));
    const std::string field = "##answer-" + q.id;
    // The empty field says what kind of number it wants (a bare "x" would read as typed text).
    const char* placeholder = q.unit == "x"        ? "a ratio"
                              : q.unit == "bytes"  ? "bytes"
                              : q.unit == "%"      ? "a percentage"
                              : q.unit == "s"      ? "a time"
                              : q.unit == "B/s"    ? "bytes per second"
                              : q.unit == "FLOP"   ? "FLOPs"
                              : q.unit == "FLOP/s" ? "FLOP per second"
                                                   : "a number";
    const TextMaskPause typed;  // the learner's own input is never masked
    const bool enter = ImGui::InputTextWithHint(field.c_str(), placeholder, &draft,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    note_widget("lesson.predict." + q.id + ".input");
    if (ImGui::IsItemEdited()) push_lesson(ctx, "draft " + q.id + " " + draft);
    ImGui::SameLine();
    const bool check = ImGui::Button("Check my answer");
    note_widget("lesson.predict." + q.id + ".check");
    if ((enter || check) && draft.find_first_not_of(' ') != std::string::npos)
      push_lesson(ctx, "predict " + q.id + " " + draft);
    const std::string hint = q.unit == "bytes" ? "e.g. 2.5 MiB, 4e6, 512 KB"
                             : q.unit == "x"   ? "e.g. 3x or 2.5"
                             : q.unit == "%"   ? "e.g. 37%"
                             : q.unit == "s"   ? "e.g. 1.2 ms"
                                               : "e.g. 4e6 or 120k";
    ImGui::TextDisabled("%s; the answer shows after you check.", hint.c_str());
  }
  if (const auto n = p.notes.find(q.id); n != p.notes.end() && !r)
    wrapped(n->second.c_str(), pal.error);
  // Giving up is allowed once the learner has tried: the answer shows, graded as revealed.
  if (tried && !r && !visible) {
    if (ImGui::SmallButton("Show me the answer")) push_lesson(ctx, "show-answer " + q.id);
    note_widget("lesson.predict." + q.id + ".show-answer");
  }
  if (visible) {
    ImGui::Separator();
    draw_reveal(ctx, b, r, ms);
  } else if (p.teacher && ctx.state.presentation) {
    disabled_wrapped("Teacher: press R to reveal the answer to the class.");
  }
  ImGui::PopTextWrapPos();
  ImGui::PopItemWidth();
  ImGui::Dummy(ImVec2(0, pad * 0.5f));
  ImGui::Unindent(pad);
  const ImVec2 bottom = ImGui::GetCursorScreenPos();
  dl->ChannelsSetCurrent(0);
  const ImU32 frame = r ? (r->pass ? pal.ok : pal.error) : pal.category[2];
  dl->AddRectFilled(top, ImVec2(top.x + width, bottom.y), with_alpha(frame, 22), 6.0f);
  dl->AddRect(top, ImVec2(top.x + width, bottom.y), with_alpha(frame, 160), 6.0f, 0, 1.5f);
  dl->ChannelsMerge();
  ImGui::Dummy(ImVec2(0, ms.body->FontSize * 0.4f));
}

// A checkpoint: the goal the learner reaches with their own steps, green once the workbench's
// state passes it; the hint after a failed attempt; "Show me" applies the lesson's solution.
void draw_checkpoint_block(ViewContext& ctx, const lesson::Block& b, const MarkdownStyle& ms) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  const lesson::CheckpointBlock& cp = b.checkpoint;
  const lesson::CheckpointState state =
      p.progress ? p.progress->checkpoint_state(cp.id) : lesson::CheckpointState::NotYet;
  const bool reached = state == lesson::CheckpointState::Reached;
  const bool shown = state == lesson::CheckpointState::Shown;
  const auto it = p.checkpoints.find(cp.id);
  const CheckpointStatus* st = it == p.checkpoints.end() ? nullptr : &it->second;
  const bool on_step = p.current_step() && p.current_step()->id == b.step;
  const bool passing = st && st->evaluated && st->pass;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  const float pad = ms.body->FontSize * 0.5f;
  ImGui::Indent(pad);
  ImGui::Dummy(ImVec2(0, pad * 0.5f));
  ImGui::PushFont(ms.bold);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(reached ? pal.ok : pal.category[5]), "%s",
                     reached ? (std::string(kCheck) + " Goal reached by you").c_str()
                     : shown ? "Goal shown (the lesson's doing; yours still to do)"
                             : "Your turn");
  ImGui::PopFont();
  ImGui::SameLine();
  std::string status;
  if (!on_step)
    status = reached ? "" : "(go to this step to try it)";
  else if (!p.computed || p.checkpoint_job.running() ||
           (st && st->key != learner_key(ctx.state.workbench)))
    status = "checking your schedule\xE2\x80\xA6";
  else if (st && !st->error.empty())
    status = "cannot check: " + st->error;
  else if (st && st->shown && passing)
    status = "passing with the lesson's own state (shown, not counted as yours)";
  else if (passing)
    status = "your schedule passes";
  else if (st && st->evaluated && reached)
    status = "your schedule has changed since; the goal still counts as reached";
  else if (st && st->evaluated)
    status = "not yet";
  ImGui::TextDisabled("%s", status.c_str());
  MarkdownAction action;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - pad * 2);
  draw_rich_text(spans_of(ctx, cp.goal), ms, action);
  if (st && !st->checks.empty() && on_step) {
    const size_t pass = static_cast<size_t>(
        std::count_if(st->checks.begin(), st->checks.end(), [](const auto& r) { return r.pass; }));
    const std::string label = std::to_string(pass) + " of " + std::to_string(st->checks.size()) +
                              " goal checks hold for your schedule";
    if (ImGui::TreeNodeEx(("cp-" + cp.id).c_str(), ImGuiTreeNodeFlags_SpanAvailWidth, "%s",
                          label.c_str())) {
      for (const lesson::CheckResult& r : st->checks) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(r.pass ? pal.ok : pal.error), "%s",
                           r.pass ? kCheck : kCross);
        ImGui::SameLine();
        ImGui::PushFont(ms.mono);
        text_wrapped("%s", r.check.text.c_str());
        ImGui::PopFont();
        ImGui::Indent();
        wrapped(
            (r.error.empty() ? r.lhs.to_string() + "  vs  " + r.rhs.to_string() : r.error).c_str(),
            pal.subtext);
        ImGui::Unindent();
      }
      ImGui::TreePop();
    }
    note_widget("lesson.checkpoint." + cp.id + ".checks");
  }
  // The hint after a failed attempt (or at once for a teacher); "Show me" once the learner wants.
  if ((st && st->attempted && !passing) || (p.teacher && !ctx.state.presentation && !reached)) {
    ImGui::PushFont(ms.bold);
    ImGui::TextUnformatted("Hint");
    ImGui::PopFont();
    draw_rich_text(spans_of(ctx, cp.hint), ms, action);
  }
  if (on_step && !reached) {
    if (ImGui::SmallButton("Show me")) push_lesson(ctx, "show-me " + cp.id);
    note_widget("lesson.show-me." + cp.id);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Applies the lesson's solution (%s). It does not count as reached: undo "
          "it and do it yourself.",
          cp.solution.c_str());
  }
  follow_link(ctx, action.link);
  ImGui::PopTextWrapPos();
  ImGui::Dummy(ImVec2(0, pad * 0.5f));
  ImGui::Unindent(pad);
  const ImVec2 bottom = ImGui::GetCursorScreenPos();
  dl->ChannelsSetCurrent(0);
  const ImU32 frame = reached || passing ? pal.ok : pal.category[5];
  dl->AddRectFilled(top, ImVec2(top.x + width, bottom.y), with_alpha(frame, 24), 6.0f);
  dl->AddRect(top, ImVec2(top.x + width, bottom.y), with_alpha(frame, 170), 6.0f, 0, 1.5f);
  dl->ChannelsMerge();
  note_widget("lesson.checkpoint." + cp.id);
  ImGui::Dummy(ImVec2(0, ms.body->FontSize * 0.4f));
}

void draw_step_strip(ViewContext& ctx, int step, const MarkdownStyle& ms) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  const lesson::LessonStep& s = p.lesson->steps[size_t(step)];
  const bool current = step == p.step;
  const bool done = p.progress && p.progress->is_done(s.id);
  // The text scrolls to the current step when it changes (next, prev, a restart).
  if (current && p.focus.empty()) scroll_here_once(p.scroll_serial);
  ImGui::Dummy(ImVec2(0, ms.body->FontSize * 0.5f));
  const ImVec2 a = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetFrameHeight() + 4;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(a, ImVec2(a.x + w, a.y + h),
                    with_alpha(current ? pal.category[2] : pal.subtext, current ? 50 : 22), 4.0f);
  dl->AddRectFilled(a, ImVec2(a.x + 4, a.y + h), current ? pal.category[2] : pal.subtext, 2.0f);
  ImGui::SetCursorScreenPos(ImVec2(a.x + 10, a.y + 2));
  ImGui::AlignTextToFramePadding();
  ImGui::PushFont(ms.bold);
  ImGui::Text("Step %d of %zu", step + 1, p.lesson->steps.size());
  ImGui::PopFont();
  ImGui::SameLine();
  if (done) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.ok), "%s done", kCheck);
  } else if (current) {
    ImGui::TextDisabled("you are here");
  }
  if (!current) {
    ImGui::SameLine(w - ImGui::CalcTextSize("Go to this step").x - 12);
    if (ImGui::SmallButton("Go to this step")) push_lesson(ctx, "goto " + s.id);
    note_widget("lesson.goto." + s.id);
  }
  ImGui::SetCursorScreenPos(ImVec2(a.x, a.y + h));
  ImGui::Dummy(ImVec2(w, 1));
}

// [SECTION] The lesson text panel

void draw_header(ViewContext& ctx, const MarkdownStyle& ms) {
  const LessonPlayer& p = ctx.state.lessons;
  const Palette& pal = ctx.palette;
  const lesson::Lesson& l = *p.lesson;
  ImGui::PushFont(ms.bold);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(l.title.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  const int n = static_cast<int>(l.steps.size());
  const lesson::LessonStep* step = p.current_step();
  if (n > 0) {
    ImGui::BeginDisabled(p.step <= 0);
    if (ImGui::Button("\xE2\x97\x80 Prev")) push_lesson(ctx, "prev");  // ◀
    ImGui::EndDisabled();
    note_widget("lesson.prev");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("Previous step (Alt+Left, or P)");
    ImGui::SameLine();
    ImGui::BeginDisabled(p.step + 1 >= n);
    if (ImGui::Button("Next \xE2\x96\xB6")) push_lesson(ctx, "next");  // ▶
    ImGui::EndDisabled();
    note_widget("lesson.next");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("Next step (Alt+Right, or N; the arrows in presentation mode)");
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    ImGui::Text("Step %d/%d", p.step + 1, n);
    ImGui::SameLine();
    ImGui::TextDisabled("\xC2\xB7 %zu done", p.progress ? p.progress->done_count() : size_t(0));
    if (step) {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("%s", step->title.c_str());
      ImGui::PopTextWrapPos();
      // What this step asks of the learner, each a jump to its card in the text.
      bool first = true;
      for (int i : step_blocks(l, p.step)) {
        const lesson::Block& b = l.blocks[size_t(i)];
        std::string label, id;
        if (b.kind == lesson::BlockKind::Predict) {
          id = b.predict.id;
          const lesson::PredictionRecord* r = p.progress ? p.progress->prediction(id) : nullptr;
          label = !r                         ? "Predict \xE2\x86\x93"  // ↓
                  : r->pass                  ? std::string("Predict ") + kCheck
                  : r->settled()             ? std::string("Predict ") + kCross + " (shown)"
                                             : std::string("Predict: try again");
        } else if (b.kind == lesson::BlockKind::Checkpoint) {
          id = b.checkpoint.id;
          const lesson::CheckpointState st =
              p.progress ? p.progress->checkpoint_state(id) : lesson::CheckpointState::NotYet;
          label = st == lesson::CheckpointState::Reached ? std::string("Goal ") + kCheck
                  : st == lesson::CheckpointState::Shown ? std::string("Goal shown")
                                                         : "Your turn \xE2\x86\x93";
        } else {
          continue;
        }
        if (first) {
          ImGui::TextUnformatted("This step:");
          first = false;
        }
        ImGui::SameLine();
        ImGui::PushID(i);
        if (ImGui::SmallButton(label.c_str())) push_lesson(ctx, "focus " + id);
        ImGui::PopID();
        note_widget("lesson.todo." + id);
      }
    }
  }
  if (!ctx.state.presentation) {
    if (ImGui::SmallButton("All lessons")) ctx.push(command_from("view lessons"));
    note_widget("lesson.catalogue");
    ImGui::SameLine();
    if (ImGui::SmallButton("Model text")) push_lesson(ctx, "panel model");
    note_widget("lesson.panel.model");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Edit the model in this panel; \"Back to the lesson\" returns here.");
    ImGui::SameLine();
    if (ImGui::SmallButton(p.teacher ? "Teacher: on" : "Teacher: off"))
      ctx.push(command_from(p.teacher ? "teacher off" : "teacher on"));
    note_widget("lesson.teacher");
    ImGui::SameLine();
    if (ImGui::SmallButton("Close")) push_lesson(ctx, "close");
    note_widget("lesson.close");
  }
  // What the player did to the workbench, and the choices it left to the learner.
  if (!p.model_offer.empty()) {
    wrapped(("This step works on model " + p.model_offer +
             ". Your model text has your own edits, so it was not replaced.")
                .c_str(),
            pal.text);
    if (ImGui::Button(("Load model " + p.model_offer).c_str()))
      push_lesson(ctx, "load-model " + p.model_offer);
    note_widget("lesson.offer");
  } else if (!p.notice.empty()) {
    wrapped(p.notice.c_str(), pal.subtext);
  }
  if (!p.stash.empty()) {
    if (ImGui::SmallButton("Restore my model text")) push_lesson(ctx, "restore-model");
    note_widget("lesson.restore");
  }
  if (p.loading()) {
    job_progress_line(ctx, "Computing the lesson's numbers\xE2\x80\xA6", p.job.fraction(),
                      p.job.phase());
  } else if (p.computed && !p.computed->error.empty()) {
    // A lesson whose models cannot be built on this machine: which and why, never a crash.
    wrapped(("This lesson's numbers cannot be computed here: " + p.computed->error).c_str(),
            pal.error);
  }
  ImGui::Separator();
}

}  // namespace

void draw_lesson_text_view(ViewContext& ctx, const Rect& rect) {
  const LessonPlayer& p = ctx.state.lessons;
  if (!begin_panel("Lesson", rect)) {
    end_panel();
    return;
  }
  const MarkdownStyle ms = markdown_style(ctx);
  ImGui::PushFont(ms.body);
  draw_header(ctx, ms);
  ImGui::BeginChild("lesson-text", ImVec2(0, 0), false);
  {
    // A new width (presentation mode, a resize) reflows the text: scroll to the step again.
    ImGuiStorage* storage = ImGui::GetStateStorage();
    const float w = ImGui::GetContentRegionAvail().x;
    if (storage->GetFloat(kTextWidthKey, -1.0f) != w) {
      storage->SetFloat(kTextWidthKey, w);
      storage->SetInt(kScrolledSerialKey, -1);
    }
  }
  const lesson::Lesson& l = *p.lesson;
  MarkdownAction action;
  // After a goal not yet reached, the rest of its step (the lesson's solution, what it measures)
  // stays closed: one line says so, until the next step begins.
  bool closed = false;
  for (size_t i = 0; i < p.doc.size(); ++i) {
    const LessonDocItem& item = p.doc[i];
    if (item.kind == LessonDocItem::Kind::Step) closed = false;
    if (closed) continue;
    ImGui::PushID(static_cast<int>(i));
    switch (item.kind) {
      case LessonDocItem::Kind::Markdown: {
        // The author's prose is drawn as written (its "16 threads" may equal an answer); the
        // mask keeps computed numbers — checks, the workbench — from answering.
        const TextMaskPause prose;
        draw_markdown(item.markdown, ms, action);
        break;
      }
      case LessonDocItem::Kind::Step:
        draw_step_strip(ctx, item.step, ms);
        break;
      case LessonDocItem::Kind::Block: {
        const lesson::Block& b = l.blocks[size_t(item.block)];
        if (!p.focus.empty() && block_id(b) == p.focus) scroll_here_once(p.scroll_serial);
        switch (b.kind) {
          case lesson::BlockKind::Model:
            draw_model_block(ctx, b, ms);
            break;
          case lesson::BlockKind::Steps:
            draw_steps_block(ctx, b, ms);
            break;
          case lesson::BlockKind::Check:
            draw_check_block(ctx, item.block, b);
            break;
          case lesson::BlockKind::Predict:
            draw_predict_block(ctx, b, ms);
            break;
          case lesson::BlockKind::Checkpoint:
            draw_checkpoint_block(ctx, b, ms);
            closed = after_checkpoint_closed(p, ctx.state.presentation, b.checkpoint.id) &&
                     step_continues_after(p.doc, i);
            if (closed)
              wrapped("The rest of this step (the lesson's own solution and what it shows) "
                      "opens when you reach the goal, or press Show me.",
                      ctx.palette.subtext);
            break;
        }
        ImGui::Dummy(ImVec2(0, ms.body->FontSize * 0.3f));
        break;
      }
    }
    ImGui::PopID();
  }
  // The end of the lesson: where to go next.
  ImGui::Dummy(ImVec2(0, ms.body->FontSize));
  if (p.progress && p.progress->finished()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ctx.palette.ok), "%s Every step done.",
                       kCheck);
  }
  const size_t next = static_cast<size_t>(p.open) + 1;
  if (next < p.catalogue.size() && p.catalogue[next].lesson) {
    if (ImGui::Button(("Next lesson: " + p.catalogue[next].lesson->title).c_str()))
      push_lesson(ctx, "open " + p.catalogue[next].id);
    note_widget("lesson.next-lesson");
  }
  ImGui::Dummy(ImVec2(0, rect.h * 0.5f));  // the last step can scroll to the top too
  follow_link(ctx, action.link);
  ImGui::EndChild();
  ImGui::PopFont();
  end_panel();
}

// [SECTION] Start here

void draw_start_here(ViewContext& ctx, const Rect& centre) {
  // A dialog (the file browser, an open's choice) is never under the card.
  if (ctx.state.files.mode != FileBrowser::Mode::Closed || ctx.state.pending_open) return;
  const float em = ctx.fonts.px;
  const float w = std::min(centre.w - em * 2, em * 26);
  ImGui::SetNextWindowPos(ImVec2(centre.x + (centre.w - w) / 2, centre.y + em * 2.6f));
  ImGui::SetNextWindowSize(ImVec2(w, 0));
  ImGui::PushStyleColor(ImGuiCol_WindowBg,
                        ImGui::ColorConvertU32ToFloat4(with_alpha(ctx.palette.node_bg, 245)));
  ImGui::PushStyleColor(ImGuiCol_Border, ImGui::ColorConvertU32ToFloat4(ctx.palette.category[2]));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 2.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 8.0f);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse;
  if (ImGui::Begin("Start here", nullptr, flags)) {
    ImGui::PushFont(ctx.fonts.ui_bold);
    ImGui::TextUnformatted("New to tilescope?");
    ImGui::PopFont();
    ImGui::PushTextWrapPos(w - em);
    ImGui::TextUnformatted(
        "The lessons walk you through it: each one loads its models here, asks you to predict a "
        "number, then shows what tilescope computes.");
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Start here: Lessons  \xE2\x96\xB6")) ctx.push(command_from("view lessons"));
    note_widget("start-here");
    ImGui::SameLine();
    ImGui::TextDisabled("or key 7");
    ImGui::SameLine();
    if (ImGui::SmallButton("Not now")) ctx.push(command_from("start-here off"));
    note_widget("start-here.dismiss");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide this card. The lessons stay in the Lessons tab (key 7).");
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
  ImGui::PopStyleColor(2);
}

}  // namespace tilescope::gui
