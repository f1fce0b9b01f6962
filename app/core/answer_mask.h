// The one mask every view's text passes before it is drawn (issue #26): while a prediction is
// open, the numbers that give its answer away — the answer and the operands it is computed from
// (lesson::answer_operands) — show as "?" wherever they appear on screen, whichever view draws
// them. Pure text in, text out: the app applies it to everything ImGui draws (widgets/text_mask),
// tests apply it directly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

class AnswerMask {
 public:
  struct Hidden {
    double value = 0;
    double band = 0.01;  // relative: a number this close to `value` gives it away
    // When not empty, a number counts only with one of these words right after it ("16
    // wavefronts", "16-way"): a small count such as 16 is every loop extent and tile size too.
    std::vector<std::string> context;
  };
  void set(std::vector<Hidden> hidden) { m_hidden = std::move(hidden); }
  bool empty() const { return m_hidden.empty(); }
  const std::vector<Hidden>& hidden() const { return m_hidden; }

  // `text` with every number that could give a hidden value away replaced digit for digit by
  // '?'. A number is read as written — "67,174,400", "67.2 M", "48.2 KiB", "2.00x", "1.2e6",
  // "3.5 µs", "37.4%" — and matches a hidden value within its band, or that rounds to it at the
  // precision shown (67.2 M: anything from 67.15e6 to 67.25e6). Numbers shown to fewer than two
  // significant digits ("2", "64") are kept unless the value names its context words: they
  // would hide every small count on screen and say little about the answer.
  std::string apply(std::string_view text) const;

 private:
  std::vector<Hidden> m_hidden;
};

}  // namespace tilescope::core
