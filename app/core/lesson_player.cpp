// The lesson player's logic: catalogue, document, the background job, entering steps (which
// drives the workbench), predictions, progress in the session, and the state JSON.
//
// Index:
//   [SECTION] Catalogue and document
//   [SECTION] The background job
//   [SECTION] Queries
//   [SECTION] Progress, closing
//   [SECTION] Checkpoints on the learner's state
//   [SECTION] Session JSON
#include "app/core/lesson_player.h"

#include "sim/io/input.h"
#include "sim/lesson/quantity.h"
#include "sim/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace tilescope::core {

namespace fs = std::filesystem;

// [SECTION] Catalogue and document

std::vector<LessonEntry> load_lesson_catalogue(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    if (p.extension() == ".md" && p.filename() != "README.md" && e.is_regular_file(ec))
      files.push_back(p.string());
  }
  std::sort(files.begin(), files.end());
  std::vector<LessonEntry> out;
  for (const std::string& file : files) {
    LessonEntry entry;
    entry.file = file;
    entry.id = fs::path(file).stem().string();
    try {
      auto lesson = std::make_shared<lesson::Lesson>(lesson::load_lesson_file(file));
      entry.id = lesson->id;
      entry.lesson = std::move(lesson);
    } catch (const std::exception& e) {
      // LessonError's text is already "file:line:col: error: message".
      entry.error = e.what();
    }
    out.push_back(std::move(entry));
  }
  return out;
}

namespace {

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

std::vector<LessonDocItem> lesson_document(const lesson::Lesson& lesson) {
  // Lines (1-based) where the player draws its own items.
  std::map<int, int> step_at;                   // line → step index
  std::map<int, std::pair<int, int>> block_at;  // first line → (block index, last line)
  for (size_t i = 0; i < lesson.steps.size(); ++i)
    step_at[lesson.steps[i].loc.line] = static_cast<int>(i);
  for (size_t i = 0; i < lesson.blocks.size(); ++i) {
    const lesson::Block& b = lesson.blocks[i];
    block_at[b.loc.line] = {static_cast<int>(i), b.body_line + count_lines(b.body)};
  }
  std::vector<std::string_view> lines;
  const std::string_view text = lesson.text;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  // The front matter ends at the second "---" line.
  size_t first = 0;
  if (!lines.empty() && lines[0].substr(0, 3) == "---") {
    for (size_t i = 1; i < lines.size(); ++i)
      if (lines[i].substr(0, 3) == "---") {
        first = i + 1;
        break;
      }
  }
  std::vector<LessonDocItem> items;
  std::string prose;
  const auto flush = [&] {
    if (prose.find_first_not_of(" \n\r\t") != std::string::npos) {
      LessonDocItem item;
      item.markdown = md::parse_markdown(prose);
      if (!item.markdown.empty()) items.push_back(std::move(item));
    }
    prose.clear();
  };
  for (size_t i = first; i < lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    if (const auto s = step_at.find(line); s != step_at.end()) {
      flush();
      LessonDocItem item;
      item.kind = LessonDocItem::Kind::Step;
      item.step = s->second;
      items.push_back(std::move(item));
    }
    if (const auto b = block_at.find(line); b != block_at.end()) {
      flush();
      LessonDocItem item;
      item.kind = LessonDocItem::Kind::Block;
      item.block = b->second.first;
      items.push_back(std::move(item));
      i = static_cast<size_t>(b->second.second) - 1;  // the loop's ++i passes the closing fence
      continue;
    }
    prose.append(lines[i]);
    prose.push_back('\n');
  }
  flush();
  return items;
}

// [SECTION] The background job

namespace {

// Lets a job's cancel flag stop the session's simulations for as long as the job runs (the
// session outlives the job; the flag does not). A cancel or a quit then ends a long check within
// a batch of accesses instead of waiting for it (issue #25).
class CancelBinding {
 public:
  CancelBinding(lesson::LessonSession& session, const std::atomic<bool>& cancel)
      : m_session(session) {
    m_session.set_cancel(&cancel);
  }
  ~CancelBinding() { m_session.set_cancel(nullptr); }
  CancelBinding(const CancelBinding&) = delete;
  CancelBinding& operator=(const CancelBinding&) = delete;

 private:
  lesson::LessonSession& m_session;
};

}  // namespace

LessonComputed compute_lesson(const lesson::Lesson& source, JobProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  LessonComputed out;
  progress.set_phase("building models and schedules");
  try {
    out.session = std::make_shared<lesson::LessonSession>(source);
  } catch (const std::exception& e) {
    out.error = e.what();
    out.session.reset();
    return out;
  }
  lesson::LessonSession& session = *out.session;
  const CancelBinding cancel(session, progress.cancel);
  // The session holds its own copy of the lesson: its blocks are the ones to evaluate.
  const std::vector<lesson::Block>& blocks = session.lesson().blocks;
  progress.set_phase("checking the lesson's claims");
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (progress.cancel) throw JobCancelled();
    progress.fraction = static_cast<double>(i) / static_cast<double>(blocks.size());
    const lesson::Block& b = blocks[i];
    if (b.kind == lesson::BlockKind::Check) {
      auto& results = out.checks[static_cast<int>(i)];
      for (const lesson::Check& c : b.checks) {
        try {
          results.push_back(session.run_check(b, c));
        } catch (const std::exception& e) {
          lesson::CheckResult r;
          r.check = c;
          r.step = b.step;
          r.error = e.what();
          results.push_back(std::move(r));
        }
      }
    } else if (b.kind == lesson::BlockKind::Predict) {
      try {
        out.answers[b.predict.id] = lesson::evaluate_predict(session, b);
        out.hidden[b.predict.id] =
            lesson::answer_operands(session, b, out.answers[b.predict.id]);
      } catch (const std::exception& e) {
        lesson::Answer a;
        a.error = e.what();
        out.answers[b.predict.id] = a;
      }
    } else if (b.kind == lesson::BlockKind::Checkpoint) {
      CheckpointSolution& sol = out.solutions[b.checkpoint.id];
      try {
        const auto [text, steps] = session.solution_of(b);
        sol.model_text = text;
        sol.steps = steps;
      } catch (const std::exception& e) {
        sol.error = e.what();
      }
    } else if (b.kind == lesson::BlockKind::Steps) {
      const std::string id = b.attr_value("id");
      if (const lesson::LessonProgram* p = session.program(id)) {
        out.programs[id] = {p->model, p->applied, p->refused, p->refusal};
      }
    }
  }
  progress.fraction = 1.0;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// [SECTION] Queries

const lesson::LessonStep* LessonPlayer::current_step() const {
  if (!is_open() || step < 0 || step >= static_cast<int>(lesson->steps.size())) return nullptr;
  return &lesson->steps[static_cast<size_t>(step)];
}

const lesson::Block* find_predict(const lesson::Lesson& lesson, const std::string& id) {
  for (const lesson::Block& b : lesson.blocks)
    if (b.kind == lesson::BlockKind::Predict && b.predict.id == id) return &b;
  return nullptr;
}

bool answer_visible(const LessonPlayer& p, bool presenting, const std::string& id) {
  // Settled (right, out of tries, or shown to the learner), not merely tried: a wrong try with
  // tries left keeps the answer hidden.
  if (p.progress && p.progress->prediction_settled(id)) return true;
  if (p.revealed.count(id)) return true;
  return p.teacher && !presenting;
}

bool after_checkpoint_closed(const LessonPlayer& p, bool presenting, const std::string& id) {
  if (p.teacher && !presenting) return false;
  return !p.progress || p.progress->checkpoint_state(id) == lesson::CheckpointState::NotYet;
}

std::vector<AnswerMask::Hidden> hidden_answers(const LessonPlayer& p, bool presenting) {
  std::vector<AnswerMask::Hidden> out;
  if (!p.is_open() || !p.computed) return out;
  for (const lesson::Block& b : p.lesson->blocks) {
    if (b.kind != lesson::BlockKind::Predict || answer_visible(p, presenting, b.predict.id))
      continue;
    const auto it = p.computed->hidden.find(b.predict.id);
    if (it == p.computed->hidden.end()) continue;
    const lesson::PredictBlock& q = b.predict;
    for (size_t i = 0; i < it->second.size(); ++i) {
      const lesson::AnswerOperand& o = it->second[i];
      AnswerMask::Hidden h{o.value, 0.01, {}};
      if (i == 0 && o.value != 0 && !q.is_choice())  // the answer: what its tolerance accepts
        h.band = std::clamp(q.relative ? q.tolerance : q.tolerance / std::fabs(o.value), 0.01,
                            0.10);
      // A small count (16) is also every loop extent and tile size on screen: it is masked only
      // beside the words that say what it counts ("16 wavefronts"), and not at all when the
      // lesson function is not one whose words are known.
      if (o.value == std::floor(o.value) && std::fabs(o.value) < 1000) {
        static const std::map<std::string, std::vector<std::string>> kCountWords = {
            {"conflicts", {"wavefront", "way"}}, {"kernels", {"kernel"}}, {"ops", {"op"}},
            {"blocks", {"block"}},   {"threads", {"thread"}},  {"waves", {"wave"}},
            {"sectors", {"sector"}}, {"cores", {"core", "SM"}}, {"misses", {"miss"}},
            {"applied", {"step"}},   {"trace_launches", {"GPU kernel", "kernel", "operator"}}};
        const auto words = kCountWords.find(o.function);
        if (words == kCountWords.end()) continue;
        h.context = words->second;
      }
      out.push_back(std::move(h));
    }
  }
  return out;
}

namespace {

// A catalogue entry's progress: the open lesson's live one, else the saved one (a progress that
// does not read counts as not started; the restore reported it when the session came back).
std::optional<lesson::LessonProgress> progress_of(const LessonPlayer& p, size_t entry) {
  if (entry >= p.catalogue.size() || !p.catalogue[entry].lesson) return std::nullopt;
  const lesson::Lesson& l = *p.catalogue[entry].lesson;
  if (p.is_open() && p.open == static_cast<int>(entry) && p.progress) return *p.progress;
  lesson::LessonProgress progress(l);
  if (const auto it = p.saved.find(l.id); it != p.saved.end()) {
    try {
      progress.restore_json(it->second);
    } catch (const lesson::ProgressError&) {
    }
  }
  return progress;
}

}  // namespace

std::pair<size_t, size_t> lesson_steps_done(const LessonPlayer& p, size_t entry) {
  const auto progress = progress_of(p, entry);
  return progress ? std::pair{progress->done_count(), progress->step_count()}
                  : std::pair<size_t, size_t>{0, 0};
}

lesson::LessonGrade lesson_grade(const LessonPlayer& p, size_t entry) {
  const auto progress = progress_of(p, entry);
  return progress ? progress->grade() : lesson::LessonGrade{};
}

std::optional<std::string> lesson_model_text(const lesson::Lesson& lesson, const std::string& id,
                                             std::string& why) {
  for (const lesson::Block& b : lesson.blocks) {
    if (b.kind != lesson::BlockKind::Model || b.attr_value("id") != id) continue;
    if (b.attr("train")) {
      why = "model " + id + " is the training graph of " + b.attr_value("train") +
            ", which the workbench cannot edit as text";
      return std::nullopt;
    }
    if (const lesson::Attribute* file = b.attr("file")) {
      try {
        return pipeline::read_model_file(file->value).text;
      } catch (const graph::GraphError& e) {
        why = e.message();
        return std::nullopt;
      }
    }
    return b.body;
  }
  why = "the lesson has no model block '" + id + "'";
  return std::nullopt;
}

// [SECTION] Progress, closing

void lesson_save_progress(LessonPlayer& p) {
  if (p.is_open() && p.progress) p.saved[p.lesson->id] = p.progress->to_json();
}

// A step with predictions or checkpoints is done once each prediction is made and each
// checkpoint reached (LessonProgress::mark_completed); a step with neither is done when the
// learner moves past it (see lesson next).
void lesson_refresh_done(LessonPlayer& p) {
  if (!p.is_open() || !p.progress) return;
  if (p.progress->mark_completed() > 0) lesson_save_progress(p);
}

bool step_has_work(const lesson::Lesson& lesson, int step_index) {
  for (int i : step_blocks(lesson, step_index)) {
    const lesson::BlockKind k = lesson.blocks[static_cast<size_t>(i)].kind;
    if (k == lesson::BlockKind::Predict || k == lesson::BlockKind::Checkpoint) return true;
  }
  return false;
}

namespace {

// Stops following the open lesson's job; one still running finishes on its own and is reaped.
void retire_job(LessonPlayer& p) {
  if (p.job.running()) {
    p.job.cancel();
    p.retired.push_back(std::move(p.job));
    p.job = Job<LessonComputed>();
  }
}

}  // namespace

void lesson_cancel_jobs(LessonPlayer& p) {
  p.job.cancel();
  p.checkpoint_job.cancel();
  for (auto& j : p.retired) j.cancel();
  for (auto& j : p.retired_checkpoints) j.cancel();
}

void lesson_close(LessonPlayer& p) {
  lesson_save_progress(p);
  retire_job(p);
  p.open = -1;
  p.lesson.reset();
  p.doc.clear();
  p.progress.reset();
  p.computed.reset();
  p.notes.clear();
  p.drafts.clear();
  p.revealed.clear();
  p.model_offer.clear();
  p.checkpoints.clear();
  p.lesson_made.clear();
  if (p.checkpoint_job.running()) {
    // Its session goes with the retired open job's; let it finish on its own, then drop it.
    p.checkpoint_job.cancel();
    p.retired_checkpoints.push_back(std::move(p.checkpoint_job));
    p.checkpoint_job = Job<CheckpointEvaluation>();
  }
  p.step = 0;
  p.side_shows_model = false;
}

// [SECTION] Checkpoints on the learner's state

std::optional<lesson::LearnerState> learner_state(const Workbench& wb,
                                                  const std::shared_ptr<const graph::Graph>& graph,
                                                  const std::string& graph_text) {
  if (!graph || !wb.history || wb.graph_text != graph_text) return std::nullopt;
  lesson::LearnerState ls;
  ls.graph = graph;
  ls.program = wb.history->current();
  const size_t cursor = wb.history->size();
  for (size_t i = 0; i < cursor && i < wb.step_texts.size(); ++i) {
    ls.applied.push_back(wb.step_texts[i]);
    ls.explanations.push_back(wb.history->explanation(i));
  }
  return ls;
}

std::string learner_key(const Workbench& wb) {
  return wb.memory_key();
}

namespace {

// Takes a finished checkpoint evaluation, and starts the next one when the learner's state has
// changed since the last (apply, undo, redo, a model edit, another machine: all change the key).
void poll_checkpoints(LessonPlayer& p, const Workbench& wb,
                      const std::shared_ptr<const graph::Graph>& graph,
                      const std::string& graph_text) {
  std::optional<CheckpointEvaluation> done;
  std::string error;
  if (p.checkpoint_job.poll(done, error)) {
    if (!done) {
      for (auto& [id, st] : p.checkpoints) st.error = error, st.evaluated = false;
    } else {
      bool recorded = false;
      for (auto& [id, r] : done->results) {
        CheckpointStatus& st = p.checkpoints[id];
        st.evaluated = r.error.empty();
        st.pass = r.pass;
        st.checks = r.checks;
        st.error = r.error;
        st.key = done->key;
        // A state the lesson itself made (a step's model, "Apply these steps", "Show me") meets
        // a goal for the learner to see, not by the learner: shown, never reached (issue #26).
        st.shown = p.lesson_made.count(done->key) > 0;
        // A failure after the learner acted on this step is an attempt: the hint shows from now
        // on (until the step is left).
        const bool on_step = r.block && p.current_step() && r.block->step == p.current_step()->id;
        if (!r.pass && on_step && done->key != p.step_entry_key) st.attempted = true;
        if (r.pass && p.progress &&
            p.progress->checkpoint_state(id) == lesson::CheckpointState::NotYet)
          recorded = p.progress->record_checkpoint(id, lesson::now_timestamp(),
                                                   st.shown ? lesson::CheckpointState::Shown
                                                            : lesson::CheckpointState::Reached) ||
                     recorded;
      }
      if (recorded) {
        lesson_save_progress(p);
        lesson_refresh_done(p);
      }
    }
  }
  // Not while a step is being set up: its model is loaded before its machine is chosen, and that
  // half-made state is not the learner's.
  if (!p.is_open() || !p.computed || !p.computed->session || p.checkpoint_job.running() ||
      p.driving)
    return;
  std::vector<int> blocks;
  for (int i : step_blocks(*p.lesson, p.step))
    if (p.lesson->blocks[size_t(i)].kind == lesson::BlockKind::Checkpoint) blocks.push_back(i);
  if (blocks.empty()) return;
  const std::string key = learner_key(wb);
  bool current = true;
  for (int i : blocks) {
    const auto it = p.checkpoints.find(p.lesson->blocks[size_t(i)].checkpoint.id);
    current = current && it != p.checkpoints.end() && it->second.key == key;
  }
  if (current) return;
  std::optional<lesson::LearnerState> ls = learner_state(wb, graph, graph_text);
  if (!ls) {
    for (int i : blocks) {
      CheckpointStatus& st = p.checkpoints[p.lesson->blocks[size_t(i)].checkpoint.id];
      st.evaluated = false;
      st.key = key;
      st.error = wb.lower_error.empty() ? "the model in the editor has no schedule yet"
                                        : "the model does not lower: " + wb.lower_error;
    }
    return;
  }
  p.checkpoint_job.start(
      key, [session = p.computed->session, blocks, key,
            state = std::move(*ls)](JobProgress& progress) {
        const CancelBinding cancel(*session, progress.cancel);
        CheckpointEvaluation out;
        out.key = key;
        for (int i : blocks) {
          const lesson::Block& b = session->lesson().blocks[size_t(i)];
          try {
            out.results[b.checkpoint.id] = session->run_checkpoint(b, state);
          } catch (const std::exception& e) {
            lesson::CheckpointResult r;
            r.error = e.what();
            out.results[b.checkpoint.id] = std::move(r);
          }
        }
        return out;
      });
}

}  // namespace

void lesson_ensure_catalogue(LessonPlayer& p) {
  if (p.catalogue_loaded) return;
  p.catalogue = load_lesson_catalogue(p.dir);
  p.catalogue_loaded = true;
}

void lesson_poll(LessonPlayer& p, const Workbench& wb,
                 const std::shared_ptr<const graph::Graph>& graph, const std::string& graph_text) {
  for (auto it = p.retired.begin(); it != p.retired.end();) {
    std::optional<LessonComputed> dropped;
    std::string error;
    if (it->poll(dropped, error) || !it->running())
      it = p.retired.erase(it);
    else
      ++it;
  }
  for (auto it = p.retired_checkpoints.begin(); it != p.retired_checkpoints.end();) {
    std::optional<CheckpointEvaluation> dropped;
    std::string error;
    if (it->poll(dropped, error) || !it->running())
      it = p.retired_checkpoints.erase(it);
    else
      ++it;
  }
  std::optional<LessonComputed> result;
  std::string error;
  if (p.job.poll(result, error)) {
    if (result) {
      p.computed = std::move(*result);
    } else {
      p.computed = LessonComputed{};
      p.computed->error = error;
    }
    lesson_refresh_done(p);
  }
  poll_checkpoints(p, wb, graph, graph_text);
}

// [SECTION] Session JSON

nlohmann::json lesson_session_json(const LessonPlayer& p) {
  nlohmann::json j = {{"teacher", p.teacher},
                      {"tries", p.tries},
                      {"panel", p.side_shows_model ? "model" : "text"},
                      {"model_loaded", p.model_loaded}};
  if (p.is_open()) {
    j["open"] = p.lesson->id;
    if (const lesson::LessonStep* s = p.current_step()) j["step"] = s->id;
    if (!p.focus.empty()) j["focus"] = p.focus;  // where the text was scrolled to
  }
  return j;
}

nlohmann::json lesson_progress_json(const LessonPlayer& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [id, progress] : p.saved) j[id] = progress;
  if (p.is_open() && p.progress) j[p.lesson->id] = p.progress->to_json();
  return j;
}

}  // namespace tilescope::core
