// The player's progress: marking steps (with times), the current step, checks and predictions
// completing steps, predictions recorded once, reset, and the JSON the app session embeds.
#include "sim/lesson/progress.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace tilescope::lesson;

namespace {

// Three steps; step-1 has two checks (one false), step-2 one true check, "last" none.
const char* kLesson =
    "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n"
    "```model id=m\nx: [2, 3]\nW: [4, 3] weight\ny = x @ W.T\n```\n"
    "```check\nops(m) == 1\n```\n"  // before any step: belongs to none
    "### Step 1: One\n```check\nops(m) == 1\nflops(matmul0) == 1\n```\n"
    "### Step 2: Two\n```check\nflops(matmul0) == 2*2*4*3\n```\n"
    "<!-- step: last -->\n## Wrap up\n";

}  // namespace

TEST_CASE("progress: steps are marked in any order; current is the first not done") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonProgress p(l);
  CHECK(p.step_count() == 3);
  CHECK(p.current() == 0);
  CHECK_FALSE(p.mark_done("nope"));
  CHECK(p.mark_done("step-2"));
  CHECK(p.current() == 0);
  CHECK(p.mark_done("step-1"));
  CHECK(p.current() == 2);
  CHECK_FALSE(p.finished());
  CHECK(p.mark_done("last"));
  CHECK(p.finished());
  CHECK(p.current() == -1);
  CHECK(p.done_count() == 3);
}

TEST_CASE("progress: a step is done by checks only when all of its checks pass") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonSession s(l);
  LessonProgress p(l);
  CHECK(p.apply_results(s.run_checks()) == 1);
  CHECK_FALSE(p.is_done("step-1"));  // flops(matmul0) == 1 is false
  CHECK(p.is_done("step-2"));
  CHECK_FALSE(p.is_done("last"));  // no checks: only the UI marks it
  CHECK(p.apply_results(s.run_checks()) == 0);
}

TEST_CASE("progress: save and restore ignore ids a lesson no longer has") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonProgress p(l);
  p.mark_done("last");
  p.mark_done("step-1");
  CHECK(p.done_ids() == std::vector<std::string>{"step-1", "last"});
  LessonProgress q(l);
  q.restore({"last", "removed-step"});
  CHECK(q.done_ids() == std::vector<std::string>{"last"});
}

// [SECTION] Times, predictions, reset, JSON

namespace {

// Two steps: "count" has a check and a numeric prediction (flops(matmul0) = 2·2·4·3 = 48), "pick"
// a multiple-choice prediction only.
const char* kPredictLesson =
    "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n"
    "```model id=m\nx: [2, 3]\nW: [4, 3] weight\ny = x @ W.T\n```\n"
    "### Step 1: Count\n```check\nops(m) == 1\n```\n"
    "```predict id=flops\nquestion: q\nanswer: flops(matmul0)\nwithin 10%\nexplain: e\n```\n"
    "### Step 2: Pick\n"
    "```predict id=kind\nquestion: q\nchoices: MatMul | Add\nanswer: kind(matmul0)\n"
    "explain: e\n```\n";

const Block& predict_block(const LessonSession& s, const std::string& id) {
  for (const Block& b : s.lesson().blocks)
    if (b.kind == BlockKind::Predict && b.predict.id == id) return b;
  FAIL("no predict block " << id);
  throw;
}

Grade graded(LessonSession& s, const std::string& id, const std::string& input) {
  const Block& b = predict_block(s, id);
  return grade(b.predict, evaluate_predict(s, b), input);
}

}  // namespace

TEST_CASE("progress: timestamps as UTC text, and back") {
  // 2026-12-01 09:30:00 UTC: 20788 days after 1970-01-01, plus 9.5 hours.
  const Timestamp t = Timestamp{20788} * 86400 + 9 * 3600 + 30 * 60;
  CHECK(timestamp_text(t) == "2026-12-01T09:30:00Z");
  CHECK(parse_timestamp("2026-12-01T09:30:00Z") == t);
  CHECK(parse_timestamp("1970-01-01T00:00:00Z") == Timestamp{0});
  CHECK_FALSE(parse_timestamp("2026-12-01 09:30:00").has_value());
  CHECK_FALSE(parse_timestamp("2026-13-01T09:30:00Z").has_value());
  CHECK_FALSE(parse_timestamp("2026-12-01T09:30:00Zjunk").has_value());
}

TEST_CASE("progress: a step is done when its checks pass and its predictions are settled") {
  const Lesson l = parse_lesson(kPredictLesson, "p.md");
  LessonSession s(l);
  LessonProgress p(l);
  // flops is numeric: kDefaultPredictTries (2) tries; kind has 2 choices: 1 try (2 would let the
  // learner try both).
  CHECK(p.tries_for("flops") == 2);
  CHECK(p.tries_for("kind") == 1);
  // The check passes, but the prediction is missing: not done yet.
  CHECK(p.apply_results(s.run_checks(), 100) == 0);
  CHECK(p.predictions_missing("step-1") == std::vector<std::string>{"flops"});
  // A wrong first try (60 against 48, 25% off, 10% allowed) leaves it open, answer hidden.
  CHECK(p.record_prediction("flops", "60", graded(s, "flops", "60"), 110));
  CHECK_FALSE(p.prediction_settled("flops"));
  CHECK(p.predictions_missing("step-1") == std::vector<std::string>{"flops"});
  // The second try is right: settled, right after one retry.
  CHECK(p.record_prediction("flops", "48", graded(s, "flops", "48"), 115));
  CHECK(p.prediction_settled("flops"));
  CHECK(p.prediction("flops")->attempts == 2);
  CHECK_FALSE(p.prediction("flops")->revealed);
  CHECK(p.predictions_missing("step-1").empty());
  // Its one try wrong: kind is settled, its answer revealed.
  CHECK(p.record_prediction("kind", "B", graded(s, "kind", "B"), 120));
  CHECK(p.prediction("kind")->revealed);
  CHECK(p.apply_results(s.run_checks(), 130) == 2);
  CHECK(p.done_at("step-1") == Timestamp{130});
  CHECK(p.finished());
  CHECK(p.passed_predictions() == 1);
  // Settled once: a further input is not a try.
  CHECK_FALSE(p.record_prediction("flops", "1", graded(s, "flops", "1"), 140));
  CHECK(p.prediction("flops")->input == "48");
  // Not a prediction of this lesson; an input that did not parse is no prediction.
  CHECK_FALSE(p.record_prediction("nope", "1", graded(s, "flops", "48"), 150));
  LessonProgress q(l);
  CHECK_FALSE(q.record_prediction("flops", "lots", graded(s, "flops", "lots"), 150));
  CHECK(q.prediction("flops") == nullptr);
  // Bytes that are not UTF-8 are kept printable, so the progress can be written as JSON.
  const std::string odd = std::string("48\xff");
  CHECK(q.record_prediction("flops", odd, graded(s, "flops", "48"), 150));
  CHECK(q.prediction("flops")->input == "48\\xff");
  CHECK_NOTHROW((void)q.to_json().dump());
}

TEST_CASE("progress: JSON round trip of steps and predictions, then reset") {
  const Lesson l = parse_lesson(kPredictLesson, "lessons/07-p.md");
  LessonSession s(l);
  LessonProgress p(l);
  const Timestamp t = 1764581400;  // 2025-12-01T09:30:00Z
  p.mark_done("step-2", t);
  CHECK(p.record_prediction("flops", "60", graded(s, "flops", "60"), t + 1, /*tries=*/1));
  CHECK(p.record_prediction("kind", "a", graded(s, "kind", "a"), t + 2));
  const nlohmann::json j = p.to_json();
  CHECK(j["lesson"] == "07-p");
  CHECK(j["steps"][0]["id"] == "step-2");
  CHECK(j["steps"][0]["done"] == "2025-12-01T09:30:00Z");
  CHECK(j["predictions"][0]["id"] == "flops");
  CHECK(j["predictions"][0]["value"] == 60);
  CHECK(j["predictions"][0]["answer"] == 48);
  CHECK(j["predictions"][0]["relative_error"].get<double>() == doctest::Approx(12.0 / 48));
  CHECK(j["predictions"][0]["pass"] == false);
  CHECK(j["predictions"][0]["attempts"] == 1);
  CHECK(j["predictions"][0]["revealed"] == true);  // its one try (tries=1) was wrong
  CHECK(j["predictions"][1]["choice"] == 0);
  CHECK(j["predictions"][1]["answer_choice"] == 0);
  CHECK(j["predictions"][1]["pass"] == true);

  // Through text, as the app session stores it.
  LessonProgress q(l);
  q.restore_json(nlohmann::json::parse(j.dump()));
  CHECK(q.to_json() == j);
  CHECK(q.done_at("step-2") == t);
  CHECK_FALSE(q.is_done("step-1"));
  REQUIRE(q.prediction("flops") != nullptr);
  CHECK(q.prediction("flops")->value == 60);
  CHECK(q.prediction("flops")->when == t + 1);
  CHECK(q.prediction("kind")->pass);

  q.reset();
  CHECK(q.done_count() == 0);
  CHECK(q.predictions().empty());
  CHECK(q.to_json() == nlohmann::json{{"lesson", "07-p"},
                                      {"steps", nlohmann::json::array()},
                                      {"predictions", nlohmann::json::array()},
                                      {"checkpoints", nlohmann::json::array()}});
}

TEST_CASE(
    "progress: restoring JSON drops what the lesson no longer has, rejects what is malformed") {
  const Lesson l = parse_lesson(kPredictLesson, "p.md");
  LessonProgress p(l);
  p.restore_json(nlohmann::json::parse(R"({"lesson": "p", "steps": [
      {"id": "step-1", "done": "2026-01-02T03:04:05Z"}, {"id": "gone", "done": "2026-01-02T03:04:05Z"}],
    "predictions": [{"id": "old", "input": "1", "pass": true, "when": "2026-01-02T03:04:05Z",
                     "value": 1, "answer": 1, "relative_error": 0},
                    {"id": "flops", "input": "1", "pass": false, "when": "2026-01-02T03:04:05Z",
                     "value": 1, "answer": 48, "relative_error": null}]})"));
  CHECK(p.done_ids() == std::vector<std::string>{"step-1"});
  REQUIRE(p.predictions().size() == 1);
  CHECK(std::isinf(p.prediction("flops")->relative_error));

  auto error_of = [&](const std::string& text) {
    try {
      p.restore_json(nlohmann::json::parse(text));
    } catch (const ProgressError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string ok_steps = R"("steps": [], )";
  CHECK(error_of(R"({"lesson": "other", "steps": [], "predictions": []})") ==
        "lesson progress: /lesson: this progress is lesson 'other''s, not 'p''s");
  CHECK(error_of(R"({"lesson": "p", "predictions": []})") ==
        "lesson progress: (top): missing \"steps\"");
  CHECK(error_of(R"({"lesson": "p", "steps": {}, "predictions": []})") ==
        "lesson progress: /steps: expected a list");
  CHECK(error_of(R"({"lesson": "p", "steps": [{"id": "step-1", "done": "yesterday"}],
                     "predictions": []})") ==
        "lesson progress: /steps/0/done: expected a UTC time such as \"2026-12-01T09:30:00Z\"");
  CHECK(error_of(R"({"lesson": "p", )" + ok_steps + R"("predictions": [{"id": "flops", "input":
        "1", "pass": "yes", "when": "2026-01-02T03:04:05Z"}]})") ==
        "lesson progress: /predictions/0/pass: expected true or false");
  CHECK(error_of(R"({"lesson": "p", )" + ok_steps + R"("predictions": [{"id": "kind", "input":
        "Z", "pass": true, "when": "2026-01-02T03:04:05Z", "choice": 30, "answer_choice": 0}]})") ==
        "lesson progress: /predictions/0/choice: expected a choice index from 0 to 25");
  CHECK(error_of(R"({"lesson": "p", )" + ok_steps + R"("predictions": [{"id": "flops", "input":
        "1", "pass": true, "when": "2026-01-02T03:04:05Z", "value": 1, "answer": 1,
        "relative_error": -1}]})") ==
        "lesson progress: /predictions/0/relative_error: expected a number of at least 0, or null");
  CHECK(error_of("[1, 2]") == "lesson progress: (top): expected an object");
  // A failed restore leaves the progress as it was.
  CHECK(p.done_ids() == std::vector<std::string>{"step-1"});
  CHECK(p.predictions().size() == 1);
}

TEST_CASE("progress: show-answer reveals, a teacher's tries override, the grade counts each") {
  const Lesson l = parse_lesson(kPredictLesson, "p.md");
  LessonSession s(l);
  LessonProgress p(l);
  // A teacher allows 3 tries everywhere: kind (2 choices) included.
  p.set_tries(3);
  CHECK(p.tries_for("flops") == 3);
  CHECK(p.record_prediction("kind", "B", graded(s, "kind", "B"), 100));
  CHECK_FALSE(p.prediction_settled("kind"));
  // The learner gives up: revealed, never a pass; a later input is not a try.
  CHECK(p.reveal_prediction("kind", 110));
  CHECK(p.prediction("kind")->revealed);
  CHECK_FALSE(p.reveal_prediction("kind", 111));
  CHECK_FALSE(p.record_prediction("kind", "A", graded(s, "kind", "A"), 120));
  // flops right at the first try.
  CHECK(p.record_prediction("flops", "48", graded(s, "flops", "48"), 130));
  // Hand count: 2 predictions — flops first try, kind revealed; 2 steps, both done after
  // apply_results; no checkpoints.
  p.apply_results(s.run_checks(), 140);
  const LessonGrade g = p.grade();
  CHECK(g.predictions == 2);
  CHECK(g.first_try == 1);
  CHECK(g.after_retries == 0);
  CHECK(g.revealed == 1);
  CHECK(g.open == 0);
  CHECK(g.steps == 2);
  CHECK(g.steps_done == 2);
  CHECK(g.checkpoints == 0);
}

TEST_CASE("progress: an old record (no attempts) was one try, settled, revealed unless right") {
  const Lesson l = parse_lesson(kPredictLesson, "p.md");
  LessonProgress p(l);
  p.restore_json(nlohmann::json::parse(R"({"lesson": "p", "steps": [],
    "predictions": [{"id": "flops", "input": "60", "pass": false, "when": "2026-01-02T03:04:05Z",
                     "value": 60, "answer": 48, "relative_error": 0.25}]})"));
  REQUIRE(p.prediction("flops") != nullptr);
  CHECK(p.prediction("flops")->attempts == 1);
  CHECK(p.prediction("flops")->revealed);
  CHECK(p.prediction_settled("flops"));
}
