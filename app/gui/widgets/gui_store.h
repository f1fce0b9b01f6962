// What the GUI keeps from one frame to the next besides the AppState and the views' ViewCaches:
// the named widgets drawn this frame, the content versions of textures, the decoded lesson
// images. One store per ImGui context: run_app creates it beside the context and attaches it as
// ImGui::GetIO().UserData, so it lives and dies with the window and its GL textures; no
// function-local static holds UI state (issue #27).
#pragma once

#include "app/core/panel_layout.h"

#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::gui {

// Window-pixel rects of named widgets drawn this frame (the lesson player's buttons and fields),
// written by --layout-json so GUI tests can click them. The frame loop clears the list.
struct WidgetRect {
  std::string name;
  core::Rect rect;
  bool visible = false;  // the rect's centre is inside its window (not scrolled away or clipped)
};

// A lesson image decoded into a GL texture (image_cache.h), or why it could not be.
struct LoadedImage {
  ImTextureID texture = nullptr;  // nullptr when it could not be loaded
  int width = 0, height = 0;
  std::string error;  // why it could not be loaded
};

struct GuiStore {
  std::vector<WidgetRect> widget_rects;                        // views.h: note_widget
  std::unordered_map<ImTextureID, uint64_t> texture_versions;  // frame_damage.h
  std::map<std::string, LoadedImage> images;                   // image_cache.h, by dir and path
};

// Attaches `store` to the current ImGui context (nullptr detaches).
void attach_gui_store(GuiStore* store);
// The current context's store. Drawing without one attached is a programming error: it says so
// on stderr and aborts.
GuiStore& gui_store();

}  // namespace tilescope::gui
