// The lesson player's commands, which drive the workbench as a learner would (entering a step
// loads its model, chooses its machine, brings its view forward), its session fields, and the
// state JSON tests read. Split from lesson_player.cpp, which needs no AppState.
//
// Index:
//   [SECTION] Driving the workbench
//   [SECTION] Commands
//   [SECTION] Session restore and state JSON
#include "app/core/lesson_commands.h"

#include "app/core/app_state.h"
#include "sim/io/input.h"
#include "sim/lang/parser.h"
#include "sim/lesson/quantity.h"
#include "sim/lesson/recorded.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tilescope::core {

// [SECTION] Driving the workbench

namespace {

std::string model_label(const lesson::Lesson& l, const std::string& id) {
  return "model " + id + " of lesson " + l.id;
}

// Text the player may replace without asking: what it loaded itself, the built-in example, or
// nothing at all. Anything else is the learner's own work.
bool text_is_disposable(const AppState& s) {
  const std::string& t = s.model.text;
  return t == s.lessons.model_loaded || t == lang::default_model_text() ||
         t.find_first_not_of(" \n\r\t") == std::string::npos;
}

// Puts `text` into the model editor with a fresh schedule history (a lesson model's steps start
// from its default lowering), keeping the learner's text when it was their own. `name` labels
// it (status bar, parse errors): "model epi of lesson 02-data-movement-fusion".
void load_model(AppState& s, const std::string& text, const std::string& name) {
  LessonPlayer& p = s.lessons;
  if (s.model.text != p.model_loaded && s.model.text != lang::default_model_text() &&
      s.model.text.find_first_not_of(" \n\r\t") != std::string::npos) {
    p.stash = s.model.text;
    p.stash_path = s.model.path;
  }
  workbench_clear_schedule(s.workbench);
  s.model.text = text;
  s.model.loaded_text = text;
  s.model.path = name;
  s.model.path_chosen = false;
  s.model.reparse_pending = false;
  s.view.fit_pending = true;
  reparse_model(s);
  update_state(s);  // lowers the new graph now, so steps can be applied at once
  p.model_loaded = text;
  p.model_offer.clear();
}

// A step's trace= opened in the Trace view, mapped onto the model the step just loaded: what the
// player's notice says.
std::string open_step_trace(AppState& s, const lesson::Lesson& l, const lesson::LessonStep& step) {
  std::string path;
  try {
    path = lesson::resolve_lesson_path(step.trace, l.file);
  } catch (const lesson::RecordedError& e) {
    return e.what();
  }
  if (path != s.trace.path || !s.trace.trace) {
    if (std::string e = open_trace(s.trace, path); !e.empty()) return e;
  }
  refresh_trace(s);  // mapped onto this step's model in the frame the step opens
  return "trace " + step.trace;
}

// Enters step `index`. With `drive`, sets the workbench up as the step says: its model (unless
// the learner's edited text would be replaced: then it is offered), its machine, its view.
void enter_step(AppState& s, int index, bool drive) {
  LessonPlayer& p = s.lessons;
  if (!p.is_open()) return;
  const int n = static_cast<int>(p.lesson->steps.size());
  p.step = std::clamp(index, 0, std::max(n - 1, 0));
  ++p.scroll_serial;
  p.focus.clear();
  p.model_offer.clear();
  for (auto& [id, status] : p.checkpoints) status.attempted = false;
  p.step_entry_key = learner_key(s.workbench);
  if (!drive || n == 0) return;
  const lesson::Lesson& l = *p.lesson;
  std::string notice;
  const bool driving_before = p.driving;
  p.driving = true;
  const std::string model_id = step_model(l, p.step);
  bool loaded = false;  // the workbench now holds what the lesson put there, not the learner's
  if (!model_id.empty()) {
    std::string why;
    if (const auto text = lesson_model_text(l, model_id, why); !text) {
      notice = why;
    } else if (*text != s.model.text) {
      if (text_is_disposable(s)) {
        load_model(s, *text, model_label(l, model_id));
        loaded = true;
        notice = "loaded model " + model_id;
      } else {
        p.model_offer = model_id;
        notice = "this step uses model " + model_id + "; your edited model text was kept";
      }
    }
  }
  const std::string machine = step_machine(l, p.step);
  if (!machine.empty() && machine != s.workbench.machine_name) {
    if (const std::string e = workbench_set_machine(s.workbench, machine); !e.empty())
      notice += (notice.empty() ? "" : "; ") + e;
    else
      notice += (notice.empty() ? "" : "; ") + std::string("machine ") + machine;
  }
  const lesson::LessonStep& step = l.steps[static_cast<size_t>(p.step)];
  if (!step.trace.empty()) notice += (notice.empty() ? "" : "; ") + open_step_trace(s, l, step);
  if (!step.view.empty()) {
    if (const auto v = view_tab_from_name(step.view)) s.workbench.tab = *v;
  } else if (s.workbench.tab == ViewTab::Lessons) {
    s.workbench.tab = ViewTab::Graph;  // the lesson text is beside the workbench: show a view of it
  }
  if (s.workbench.tab == ViewTab::Graph) s.view.fit_pending = true;
  p.notice = notice;
  p.step_entry_key = learner_key(s.workbench);
  if (loaded) p.lesson_made.insert(p.step_entry_key);
  p.driving = driving_before;
}

// Opens catalogue entry `index` at the learner's first step not done (or `step_id`).
std::string open_lesson(AppState& s, size_t index, bool drive, const std::string& step_id = "") {
  LessonPlayer& p = s.lessons;
  const LessonEntry& entry = p.catalogue[index];
  if (!entry.lesson) return "lesson " + entry.id + " cannot be opened: " + entry.error;
  if (p.open == static_cast<int>(index) && p.is_open()) {
    if (drive) enter_step(s, p.step, true);
    return {};
  }
  lesson_close(p);
  p.open = static_cast<int>(index);
  p.lesson = entry.lesson;
  p.doc = lesson_document(*p.lesson);
  p.progress.emplace(*p.lesson);
  p.progress->set_tries(p.tries);
  std::string message;
  if (const auto it = p.saved.find(p.lesson->id); it != p.saved.end()) {
    try {
      p.progress->restore_json(it->second);
    } catch (const lesson::ProgressError& e) {
      message = "lesson " + p.lesson->id + ": its saved progress was not read (" + e.what() + ")";
    }
  }
  std::shared_ptr<const lesson::Lesson> lesson = p.lesson;
  p.job.start(lesson->id,
              [lesson](JobProgress& progress) { return compute_lesson(*lesson, progress); });
  int step = p.progress->current();
  if (step < 0) step = 0;
  for (size_t i = 0; i < lesson->steps.size(); ++i)
    if (lesson->steps[i].id == step_id) step = static_cast<int>(i);
  enter_step(s, step, drive);
  return message;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string_view take_word(std::string_view& rest) {
  rest = trim(rest);
  const size_t end = rest.find_first_of(" \t");
  const std::string_view word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view{} : trim(rest.substr(end));
  return word;
}

// A lesson named by its 1-based number, its id, or a prefix of its id ("02").
int find_lesson(const LessonPlayer& p, std::string_view name) {
  int number = 0;
  if (all_digits(name) && name.size() < 4) number = std::stoi(std::string(name));
  for (size_t i = 0; i < p.catalogue.size(); ++i)
    if (p.catalogue[i].id == name || p.catalogue[i].file == name) return static_cast<int>(i);
  int match = -1, matches = 0;
  for (size_t i = 0; i < p.catalogue.size(); ++i)
    if (p.catalogue[i].id.rfind(std::string(name) + "-", 0) == 0 ||
        (name.size() >= 3 && p.catalogue[i].id.rfind(std::string(name), 0) == 0)) {
      match = static_cast<int>(i);
      ++matches;
    }
  if (matches == 1) return match;
  if (number >= 1 && number <= static_cast<int>(p.catalogue.size())) return number - 1;
  return -1;
}

std::string lesson_names(const LessonPlayer& p) {
  std::string out;
  for (size_t i = 0; i < p.catalogue.size(); ++i)
    out += (out.empty() ? "" : ", ") + std::to_string(i + 1) + " " + p.catalogue[i].id;
  return out.empty() ? "none found in " + p.dir + "/" : out;
}

int find_step(const lesson::Lesson& l, std::string_view name) {
  for (size_t i = 0; i < l.steps.size(); ++i)
    if (l.steps[i].id == name) return static_cast<int>(i);
  if (all_digits(name) && name.size() < 4) {
    const int n = std::stoi(std::string(name));
    if (n >= 1 && n <= static_cast<int>(l.steps.size())) return n - 1;
  }
  return -1;
}

std::string step_names(const lesson::Lesson& l) {
  std::string out;
  for (size_t i = 0; i < l.steps.size(); ++i)
    out += (out.empty() ? "" : ", ") + std::to_string(i + 1) + " " + l.steps[i].id;
  return out;
}

const lesson::Block* find_block(const lesson::Lesson& l, lesson::BlockKind kind,
                                const std::string& id) {
  for (const lesson::Block& b : l.blocks)
    if (b.kind == kind && b.attr_value("id") == id) return &b;
  return nullptr;
}

}  // namespace

// [SECTION] Commands

std::string check_lesson_command(std::string_view args) {
  std::string_view rest = args;
  const std::string_view sub = take_word(rest);
  const auto need = [&](std::string_view what) -> std::string {
    return rest.empty() ? "lesson " + std::string(sub) + ": needs " + std::string(what) : "";
  };
  const auto none = [&]() -> std::string {
    return rest.empty() ? ""
                        : "lesson " + std::string(sub) + ": unexpected '" + std::string(rest) +
                              "' at the end";
  };
  if (sub == "open") return need("a lesson number or id (lesson open 2)");
  if (sub == "goto") return need("a step id or number");
  if (sub == "focus") return need("a block id");
  if (sub == "apply") return need("a steps block id");
  if (sub == "show-me") return need("a checkpoint id");
  if (sub == "draft") return need("a predict id");
  if (sub == "load-model") return need("a model block id");
  if (sub == "show-answer") return need("a predict id");
  if (sub == "tries") return need("a number of tries, 1 to 5 (0: each question's own)");
  if (sub == "predict") {
    take_word(rest);
    return rest.empty() ? "lesson predict: needs a predict id and the learner's answer "
                          "(lesson predict dram-ratio 2x)"
                        : "";
  }
  if (sub == "panel") {
    if (rest != "text" && rest != "model") return "lesson panel: expected text or model";
    return {};
  }
  if (sub == "next" || sub == "prev" || sub == "close" || sub == "restore-model" || sub == "reload")
    return none();
  if (sub == "reveal" || sub == "reset") return {};
  return "lesson: unknown sub-command '" + std::string(sub) +
         "' (open, next, prev, goto, focus, draft, predict, show-answer, tries, reveal, apply, "
         "show-me, load-model, restore-model, reset, panel, close, reload)";
}

std::string teacher_command(AppState& state, bool on) {
  state.lessons.teacher = on;
  return {};
}

namespace {

// `lesson open`, `lesson reload` and `lesson reset ID` for a lesson that is not open: the
// commands that act on the catalogue. nullopt when `sub` is none of them (or is a reset of the
// open lesson, which the caller carries out).
std::optional<std::string> lesson_catalogue_command(AppState& s, const std::string& sub,
                                                    const std::string& arg) {
  LessonPlayer& p = s.lessons;
  if (sub == "open") {
    const int i = find_lesson(p, arg);
    if (i < 0) return "lesson open: no lesson '" + arg + "' (lessons: " + lesson_names(p) + ")";
    s.start_here = false;
    return open_lesson(s, static_cast<size_t>(i), true);
  }
  if (sub == "reload") {
    const std::string open_id = p.is_open() ? p.lesson->id : std::string();
    const std::string step_id = p.current_step() ? p.current_step()->id : std::string();
    lesson_close(p);
    p.catalogue_loaded = false;
    lesson_ensure_catalogue(p);
    if (!open_id.empty())
      for (size_t i = 0; i < p.catalogue.size(); ++i)
        if (p.catalogue[i].id == open_id) return open_lesson(s, i, false, step_id);
    return std::string();
  }
  if (sub == "reset" && !arg.empty()) {
    if (p.is_open() && p.lesson->id == arg) {
      // falls through to resetting the open lesson in the caller
    } else {
      const int i = find_lesson(p, arg);
      if (i < 0) return "lesson reset: no lesson '" + arg + "' (lessons: " + lesson_names(p) + ")";
      p.saved.erase(p.catalogue[static_cast<size_t>(i)].id);
      if (p.open != i) return std::string();
    }
  }
  return std::nullopt;
}

// `lesson close`, `next`, `prev`, `goto` and `focus`: moving through the open lesson `l`.
// nullopt when `sub` is none of them.
std::optional<std::string> lesson_navigation_command(AppState& s, const lesson::Lesson& l,
                                                     const std::string& sub,
                                                     const std::string& arg) {
  LessonPlayer& p = s.lessons;
  if (sub == "close") {
    lesson_close(p);
    return std::string();
  }
  if (sub == "next" || sub == "prev") {
    const int n = static_cast<int>(l.steps.size());
    if (sub == "next") {
      if (p.step + 1 >= n) return "lesson next: this is the last step";
      // Moving on from a step that asked nothing of the learner is doing it.
      if (!step_has_work(l, p.step) && p.progress->mark_done(l.steps[size_t(p.step)].id))
        lesson_save_progress(p);
      enter_step(s, p.step + 1, true);
      // The last step has no next to move on with: reaching it, when it asks nothing, is doing
      // it (lessons stayed at 4/5 for ever: issue #26).
      if (p.step == n - 1 && !step_has_work(l, p.step) &&
          p.progress->mark_done(l.steps[size_t(p.step)].id))
        lesson_save_progress(p);
    } else {
      if (p.step <= 0) return "lesson prev: this is the first step";
      enter_step(s, p.step - 1, true);
    }
    return std::string();
  }
  if (sub == "goto") {
    const int i = find_step(l, arg);
    if (i < 0) return "lesson goto: no step '" + arg + "' (steps: " + step_names(l) + ")";
    // Jumping forward passes the steps between as `next` would.
    for (int k = p.step; k < i; ++k)
      if (!step_has_work(l, k)) p.progress->mark_done(l.steps[size_t(k)].id);
    lesson_save_progress(p);
    enter_step(s, i, true);
    return std::string();
  }
  if (sub == "focus") {
    bool known = false;
    for (const lesson::Block& b : l.blocks)
      known = known || b.attr_value("id") == arg ||
              (b.kind == lesson::BlockKind::Predict && b.predict.id == arg);
    if (!known) return "lesson focus: no block with id '" + arg + "'";
    p.focus = arg;
    ++p.scroll_serial;
    return std::string();
  }
  return std::nullopt;
}

// `lesson predict ID INPUT`: grades the learner's prediction and records it (`rest` is what
// follows the sub-command).
std::string lesson_predict(LessonPlayer& p, const lesson::Lesson& l, std::string_view rest) {
  std::string_view r = rest;
  const std::string id(take_word(r));
  const std::string input(r);
  const lesson::Block* b = find_predict(l, id);
  if (!b) {
    std::string known;
    for (const lesson::Block& o : l.blocks)
      if (o.kind == lesson::BlockKind::Predict) known += (known.empty() ? "" : ", ") + o.predict.id;
    return "lesson predict: no predict block '" + id +
           "' (this lesson has: " + (known.empty() ? "none" : known) + ")";
  }
  if (p.progress->prediction_settled(id))
    return "lesson predict: " + id + " is settled (its answer has been revealed)";
  if (!p.computed) return "lesson predict: the lesson is still being computed; try again soon";
  if (!p.computed->error.empty())
    return "lesson predict: the lesson could not be computed: " + p.computed->error;
  const auto a = p.computed->answers.find(id);
  if (a == p.computed->answers.end() || !a->second.ok)
    return "lesson predict: the answer to " + id + " cannot be computed on this machine: " +
           (a == p.computed->answers.end() ? std::string("no answer") : a->second.error);
  const lesson::Grade g = lesson::grade(b->predict, a->second, input);
  if (!g.understood || !g.graded) {
    // Not an attempt: nothing is revealed, the learner is told what was expected.
    p.notes[id] = g.message;
    return {};
  }
  p.notes.erase(id);
  p.drafts.erase(id);
  p.progress->record_prediction(id, input, g);
  if (!p.progress->prediction_settled(id)) {
    // A wrong try with tries left: which way and roughly how far, the hint, another try.
    const lesson::PredictionRecord* pr = p.progress->prediction(id);
    p.notes[id] =
        lesson::retry_hint(b->predict, g, p.progress->tries_for(id) - (pr ? pr->attempts : 0));
  }
  p.focus = id;  // the reveal (or the hint) is where the learner looks next
  ++p.scroll_serial;
  lesson_save_progress(p);
  lesson_refresh_done(p);
  return {};
}

// `lesson reveal [ID]`: shows a prediction's answer to the class (default: the current step's).
std::string lesson_reveal(LessonPlayer& p, const lesson::Lesson& l, const std::string& arg) {
  if (!arg.empty()) {
    if (!find_predict(l, arg)) return "lesson reveal: no predict block '" + arg + "'";
    p.revealed.insert(arg);
    p.focus = arg;
    ++p.scroll_serial;
    return {};
  }
  std::string first;
  for (int i : step_blocks(l, p.step))
    if (l.blocks[size_t(i)].kind == lesson::BlockKind::Predict) {
      p.revealed.insert(l.blocks[size_t(i)].predict.id);
      if (first.empty()) first = l.blocks[size_t(i)].predict.id;
    }
  if (first.empty()) return "lesson reveal: this step has no prediction to reveal";
  p.focus = first;  // the class looks at the answer
  ++p.scroll_serial;
  return {};
}

// `lesson draft`, `predict`, `show-answer`, `tries` and `reveal`: the prediction commands.
// nullopt when `sub` is none of them.
std::optional<std::string> lesson_prediction_command(LessonPlayer& p, const lesson::Lesson& l,
                                                     const std::string& sub, std::string_view rest,
                                                     const std::string& arg) {
  if (sub == "draft") {
    std::string_view r = rest;
    const std::string id(take_word(r));
    if (!find_predict(l, id)) return "lesson draft: no predict block '" + id + "'";
    p.drafts[id] = std::string(r).substr(0, lesson::kMaxPredictionInput);
    return std::string();
  }
  if (sub == "predict") return lesson_predict(p, l, rest);
  if (sub == "show-answer") {
    // The learner gives up on a prediction: the answer is shown, and graded as revealed.
    if (!find_predict(l, arg)) return "lesson show-answer: no predict block '" + arg + "'";
    if (!p.progress->reveal_prediction(arg))
      return "lesson show-answer: " + arg + " is already settled";
    p.notes.erase(arg);
    p.drafts.erase(arg);
    p.focus = arg;
    ++p.scroll_serial;
    lesson_save_progress(p);
    lesson_refresh_done(p);
    return std::string();
  }
  if (sub == "tries") {
    char* end = nullptr;
    const long n = std::strtol(arg.c_str(), &end, 10);
    if (end == arg.c_str() || *end != '\0' || n < 0 || n > lesson::kMaxPredictTries)
      return "lesson tries: expected 0 (each question's own) to " +
             std::to_string(lesson::kMaxPredictTries) + ", got '" + arg + "'";
    p.tries = static_cast<int>(n);
    p.progress->set_tries(p.tries);
    p.notice = n == 0 ? "each question allows its own number of tries"
                      : "every question allows " + arg + (n == 1 ? " try" : " tries");
    return std::string();
  }
  if (sub == "reveal") return lesson_reveal(p, l, arg);
  return std::nullopt;
}

// `lesson apply STEPS_ID`: loads the steps block's model and applies its steps.
std::string lesson_apply(AppState& s, const lesson::Lesson& l, const std::string& arg) {
  LessonPlayer& p = s.lessons;
  const lesson::Block* b = find_block(l, lesson::BlockKind::Steps, arg);
  if (!b) return "lesson apply: no steps block '" + arg + "' in this lesson";
  if (!p.computed) return "lesson apply: the lesson is still being computed; try again soon";
  const auto it = p.computed->programs.find(arg);
  if (it == p.computed->programs.end())
    return "lesson apply: steps '" + arg + "' could not be built: " +
           (p.computed->error.empty() ? "unknown reason" : p.computed->error);
  std::string why;
  const auto text = lesson_model_text(l, it->second.model, why);
  if (!text) return "lesson apply: " + why;
  load_model(s, *text, model_label(l, it->second.model));
  std::string joined;
  for (const std::string& step : it->second.steps) joined += (joined.empty() ? "" : "; ") + step;
  std::string e = joined.empty() ? std::string() : workbench_apply(s.workbench, joined);
  p.lesson_made.insert(learner_key(s.workbench));  // the lesson's steps: a goal met here is shown
  if (s.workbench.tab == ViewTab::Lessons || s.workbench.tab == ViewTab::Graph)
    s.workbench.tab = ViewTab::Schedule;
  p.notice = "applied " + arg + " to model " + it->second.model +
             (p.stash.empty() ? "" : " (your own model text is kept: restore it)");
  return e;
}

// `lesson show-me ID`: applies checkpoint ID's solution (shown, so not recorded as reached).
std::string lesson_show_me(AppState& s, const lesson::Lesson& l, const std::string& arg) {
  LessonPlayer& p = s.lessons;
  const lesson::Block* b = find_block(l, lesson::BlockKind::Checkpoint, arg);
  if (!b) return "lesson show-me: no checkpoint '" + arg + "' in this lesson";
  if (!p.computed) return "lesson show-me: the lesson is still being computed; try again soon";
  const auto it = p.computed->solutions.find(arg);
  if (it == p.computed->solutions.end() || !it->second.error.empty())
    return "lesson show-me: the solution of " + arg + " cannot be built: " +
           (it == p.computed->solutions.end() ? p.computed->error : it->second.error);
  load_model(
      s, it->second.model_text,
      model_label(l, it->second.steps.empty() ? b->checkpoint.solution : b->checkpoint.model));
  const std::string e =
      it->second.steps.empty() ? std::string() : workbench_apply(s.workbench, it->second.steps);
  const std::string machine = b->attr_value("machine");
  if (!machine.empty() && machine != s.workbench.machine_name)
    workbench_set_machine(s.workbench, machine);
  p.lesson_made.insert(learner_key(s.workbench));
  if (s.workbench.tab == ViewTab::Lessons || s.workbench.tab == ViewTab::Graph)
    s.workbench.tab = ViewTab::Schedule;
  p.notice = "the lesson's solution of " + arg + " is applied" +
             (it->second.steps.empty() ? "" : ": " + it->second.steps) +
             " (shown, so not counted as reached; undo it and try yourself)";
  return e;
}

// `lesson apply`, `show-me`, `load-model`, `restore-model`, `reset` and `panel`: the commands
// that change the workbench or the player's own state. nullopt when `sub` is none of them.
std::optional<std::string> lesson_workbench_command(AppState& s, const lesson::Lesson& l,
                                                    const std::string& sub,
                                                    const std::string& arg) {
  LessonPlayer& p = s.lessons;
  if (sub == "apply") return lesson_apply(s, l, arg);
  if (sub == "show-me") return lesson_show_me(s, l, arg);
  if (sub == "load-model") {
    std::string why;
    const auto text = lesson_model_text(l, arg, why);
    if (!text) return "lesson load-model: " + why;
    load_model(s, *text, model_label(l, arg));
    p.lesson_made.insert(learner_key(s.workbench));
    p.notice = "loaded model " + arg + (p.stash.empty() ? "" : " (your own text is kept)");
    return std::string();
  }
  if (sub == "restore-model") {
    if (p.stash.empty()) return "lesson restore-model: no text of yours was replaced";
    workbench_clear_schedule(s.workbench);
    s.model.text = std::move(p.stash);
    s.model.path = std::move(p.stash_path);
    s.model.path_chosen = false;  // the stash does not remember who chose it: ask again
    p.stash.clear();
    p.stash_path.clear();
    s.view.fit_pending = true;
    reparse_model(s);
    p.notice = "your model text is back";
    return std::string();
  }
  if (sub == "reset") {
    p.progress->reset();
    p.notes.clear();
    p.revealed.clear();
    p.checkpoints.clear();
    p.lesson_made.clear();
    lesson_save_progress(p);
    enter_step(s, 0, true);
    p.notice = "lesson " + l.id + " reset: no step done, no prediction made";
    return std::string();
  }
  if (sub == "panel") {
    p.side_shows_model = arg == "model";
    return std::string();
  }
  return std::nullopt;
}

}  // namespace

std::string lesson_command(AppState& s, std::string_view args) {
  LessonPlayer& p = s.lessons;
  // No checkpoint evaluation starts inside a command (loading a model calls update_state): the
  // state halfway through "load the model, then apply its steps" is not the learner's.
  struct DrivingGuard {
    bool& flag;
    bool before;
    ~DrivingGuard() { flag = before; }
  } guard{p.driving, p.driving};
  p.driving = true;
  lesson_ensure_catalogue(p);
  if (std::string e = check_lesson_command(args); !e.empty()) return e;
  std::string_view rest = args;
  const std::string sub(take_word(rest));
  const std::string arg(rest);

  if (auto r = lesson_catalogue_command(s, sub, arg)) return *r;
  if (!p.is_open()) return "lesson " + sub + ": no lesson is open (lesson open N)";
  const lesson::Lesson& l = *p.lesson;

  if (auto r = lesson_navigation_command(s, l, sub, arg)) return *r;
  if (auto r = lesson_prediction_command(p, l, sub, rest, arg)) return *r;
  if (auto r = lesson_workbench_command(s, l, sub, arg)) return *r;
  return "lesson: unknown sub-command '" + sub + "'";
}

namespace {

std::string type_phrase(const nlohmann::json& v) {
  return std::string(v.is_array() || v.is_object() ? "an " : "a ") + v.type_name();
}

}  // namespace

std::string restore_lesson_session(AppState& state, const nlohmann::json* lesson_j,
                                   const nlohmann::json* progress_j) {
  LessonPlayer& p = state.lessons;
  lesson_ensure_catalogue(p);
  std::vector<std::string> problems;
  if (progress_j) {
    if (!progress_j->is_object()) {
      problems.push_back("skipped lesson_progress (" + type_phrase(*progress_j) +
                         ", not an object)");
    } else {
      for (const auto& [id, value] : progress_j->items()) {
        const LessonEntry* entry = nullptr;
        for (const LessonEntry& e : p.catalogue)
          if (e.id == id && e.lesson) entry = &e;
        if (!entry) {
          p.saved[id] = value;  // a lesson not here now: kept as it was, for when it is back
          continue;
        }
        try {
          lesson::LessonProgress check(*entry->lesson);
          check.restore_json(value);
          p.saved[id] = check.to_json();
        } catch (const std::exception& e) {
          problems.push_back("skipped lesson_progress/" + io::printable(id, 60) + " (" +
                             io::printable(e.what(), 200) + ")");
        }
      }
    }
  }
  if (lesson_j) {
    if (!lesson_j->is_object()) {
      problems.push_back("skipped lesson (" + type_phrase(*lesson_j) + ", not an object)");
    } else {
      const auto string_of = [&](const char* key, std::string& out) {
        const auto it = lesson_j->find(key);
        if (it == lesson_j->end()) return false;
        if (!it->is_string()) {
          problems.push_back(std::string("skipped lesson/") + key + " (" + type_phrase(*it) +
                             ", not a string)");
          return false;
        }
        out = it->get<std::string>();
        return true;
      };
      if (const auto it = lesson_j->find("teacher"); it != lesson_j->end()) {
        if (it->is_boolean())
          p.teacher = it->get<bool>();
        else
          problems.push_back("skipped lesson/teacher (" + type_phrase(*it) + ", not a boolean)");
      }
      if (const auto it = lesson_j->find("tries"); it != lesson_j->end()) {
        if (it->is_number_integer() && it->get<int64_t>() >= 0 &&
            it->get<int64_t>() <= lesson::kMaxPredictTries)
          p.tries = it->get<int>();
        else
          problems.push_back("skipped lesson/tries (not a whole number from 0 to " +
                             std::to_string(lesson::kMaxPredictTries) + ")");
      }
      std::string panel, open, step, focus;
      if (string_of("panel", panel)) {
        if (panel == "model" || panel == "text")
          p.side_shows_model = panel == "model";
        else
          problems.push_back("skipped lesson/panel '" + io::printable(panel, 40) +
                             "' (text or model)");
      }
      string_of("model_loaded", p.model_loaded);
      string_of("step", step);
      string_of("focus", focus);
      if (string_of("open", open)) {
        const int i = find_lesson(p, open);
        if (i < 0 || p.catalogue[size_t(i)].id != open) {
          problems.push_back("lesson " + io::printable(open, 60) + " is no longer in " + p.dir +
                             "/");
        } else {
          const bool side = p.side_shows_model;
          if (std::string e = open_lesson(state, size_t(i), false, step); !e.empty())
            problems.push_back(e);
          p.side_shows_model = side;
          // Only a block of this lesson; an unknown id just leaves the text at the step.
          if (p.lesson)
            for (const lesson::Block& b : p.lesson->blocks)
              if (!focus.empty() &&
                  (b.attr_value("id") == focus ||
                   (b.kind == lesson::BlockKind::Predict && b.predict.id == focus)))
                p.focus = focus;
        }
      }
    }
  }
  std::string out;
  for (const std::string& s : problems) out += (out.empty() ? "" : "; ") + s;
  return out;
}

nlohmann::json lesson_state_json(const AppState& state) {
  const LessonPlayer& p = state.lessons;
  nlohmann::json j;
  j["teacher"] = p.teacher;
  j["start_here"] = state.start_here;
  j["catalogue"] = nlohmann::json::array();
  for (size_t i = 0; i < p.catalogue.size(); ++i) {
    const LessonEntry& e = p.catalogue[i];
    const auto [done, total] = lesson_steps_done(p, i);
    j["catalogue"].push_back({{"id", e.id},
                              {"file", e.file},
                              {"error", e.error},
                              {"steps_done", done},
                              {"steps", total}});
  }
  j["open"] = p.is_open() ? p.lesson->id : "";
  if (!p.is_open()) return j;
  const lesson::Lesson& l = *p.lesson;
  j["title"] = l.title;
  j["loading"] = p.loading();
  j["error"] = p.computed ? p.computed->error : "";
  j["step"] = p.step;
  j["step_id"] = p.current_step() ? p.current_step()->id : "";
  j["model_offer"] = p.model_offer;
  j["stash"] = !p.stash.empty();
  j["notice"] = p.notice;
  j["panel"] = p.side_shows_model ? "model" : "text";
  j["steps"] = nlohmann::json::array();
  for (const lesson::LessonStep& s : l.steps)
    j["steps"].push_back({{"id", s.id}, {"title", s.title}, {"done", p.progress->is_done(s.id)}});
  j["predictions"] = nlohmann::json::array();
  for (const lesson::Block& b : l.blocks) {
    if (b.kind != lesson::BlockKind::Predict) continue;
    const std::string& id = b.predict.id;
    nlohmann::json pj = {{"id", id}, {"step", b.step}};
    const lesson::PredictionRecord* r = p.progress->prediction(id);
    pj["made"] = r != nullptr;
    pj["revealed"] = answer_visible(p, state.presentation, id);
    if (const auto n = p.notes.find(id); n != p.notes.end()) pj["note"] = n->second;
    pj["tries"] = p.progress->tries_for(id);
    pj["settled"] = p.progress->prediction_settled(id);
    if (r) {
      pj["input"] = r->input;
      pj["pass"] = r->pass;
      pj["attempts"] = r->attempts;
      pj["gave_up"] = r->revealed && !r->pass;
      if (!r->choice) {
        pj["learner"] = lesson::format_quantity(r->value, b.predict.unit);
        pj["relative_error"] =
            std::isfinite(r->relative_error) ? nlohmann::json(r->relative_error) : nullptr;
      }
    }
    // What the screen shows of the answer: only once it is visible.
    if (pj["revealed"].get<bool>() && p.computed) {
      if (const auto a = p.computed->answers.find(id);
          a != p.computed->answers.end() && a->second.ok)
        pj["answer"] = a->second.shown;
      pj["explanation"] = b.predict.explain;
    }
    j["predictions"].push_back(pj);
  }
  const lesson::LessonGrade g = p.progress->grade();
  j["grade"] = {{"first_try", g.first_try}, {"after_retries", g.after_retries},
                {"revealed", g.revealed},   {"open", g.open},
                {"reached", g.reached},     {"shown", g.shown},
                {"not_yet", g.not_yet},     {"steps_done", g.steps_done},
                {"steps", g.steps}};
  j["checkpoints"] = nlohmann::json::array();
  for (const lesson::Block& b : l.blocks) {
    if (b.kind != lesson::BlockKind::Checkpoint) continue;
    const std::string& id = b.checkpoint.id;
    nlohmann::json cj = {{"id", id},
                         {"step", b.step},
                         {"reached", p.progress->checkpoint_reached(id)},
                         {"state", lesson::checkpoint_state_name(p.progress->checkpoint_state(id))},
                         {"current_step", p.current_step() && p.current_step()->id == b.step}};
    if (const auto it = p.checkpoints.find(id); it != p.checkpoints.end()) {
      const CheckpointStatus& st = it->second;
      cj["evaluated"] = st.evaluated;
      cj["pass"] = st.pass;
      cj["shown"] = st.shown;
      cj["hint_shown"] = st.attempted && !st.pass;
      if (!st.error.empty()) cj["error"] = st.error;
      cj["up_to_date"] = st.key == learner_key(state.workbench);
    }
    j["checkpoints"].push_back(cj);
  }
  j["checks"] = nlohmann::json::array();
  if (p.computed) {
    for (const auto& [index, results] : p.computed->checks) {
      size_t pass = 0;
      std::string first_failure;
      for (const lesson::CheckResult& r : results) {
        if (r.pass)
          ++pass;
        else if (first_failure.empty())
          first_failure = r.check.text + (r.error.empty() ? "" : ": " + r.error);
      }
      const lesson::Block& b = l.blocks[size_t(index)];
      j["checks"].push_back({{"line", b.loc.line},
                             {"step", b.step},
                             {"checks", results.size()},
                             {"pass", pass},
                             {"first_failure", first_failure}});
    }
  }
  return j;
}

}  // namespace tilescope::core
