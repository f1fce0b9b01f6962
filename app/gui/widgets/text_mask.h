// Every text ImGui draws passes here, whichever view or widget draws it: the executable is linked
// with ld's --wrap on ImDrawList::AddText (both overloads), so the answer mask of an open
// prediction (core::AnswerMask) is applied in one place, not by a rule per view (issue #26). The
// same hook can record a frame's text, so a test can assert that an answer appears nowhere, and
// can measure each text against its clip rectangle, so a test can assert that no label is cut.
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

// A text that runs past the right edge of the rectangle it is clipped to (a label cut off).
struct ClippedText {
  std::string window;  // the ImGui window (draw list owner) it was drawn in
  std::string text;
  float cut = 0.0f;    // pixels past the edge
};
// From now on every text is measured against its clip rectangle (the --layout-json runs: it costs
// a text measure per draw); clear_clipped_text() starts a frame, clipped_text() is what it cut.
void set_clip_check(bool on);
void clear_clipped_text();
const std::vector<ClippedText>& clipped_text();

}  // namespace tilescope::gui
