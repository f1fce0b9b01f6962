// Every text ImGui draws passes here, whichever view or widget draws it: the executable is linked
// with ld's --wrap on ImDrawList::AddText (both overloads), so the answer mask of an open
// prediction (core::AnswerMask) is applied in one place, not by a rule per view (issue #26). The
// same hook can record a frame's text, so a test can assert that an answer appears nowhere.
#pragma once

#include "app/core/answer_mask.h"

#include <string>
#include <vector>

namespace tilescope::gui {

// The mask for the frame being built (empty: draw text as it is).
void set_text_mask(core::AnswerMask mask);

// While one lives, text is drawn unmasked: a field shows what the learner typed.
class TextMaskPause {
 public:
  TextMaskPause();
  ~TextMaskPause();
  TextMaskPause(const TextMaskPause&) = delete;
  TextMaskPause& operator=(const TextMaskPause&) = delete;
};

// Starts recording every text drawn (as drawn: masked); take_frame_text() hands it over.
void record_frame_text();
std::vector<std::string> take_frame_text();

}  // namespace tilescope::gui
