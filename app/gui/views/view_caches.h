// What the views keep between frames that is not the learner's state: a folder's listing, the
// fuse options of a schedule, parsed lesson texts, the Tiles views' textures, each beside the key
// it was made for. The frame loop (app.cpp) owns one and hands it to every view in ViewContext,
// so no view hides state in a function-local static and a test can see what a view keeps.
#pragma once

#include "app/core/app_state.h"
#include "app/core/files.h"
#include "app/core/fuse_options.h"
#include "app/core/markdown.h"
#include "app/core/tile_grid.h"
#include "app/gui/widgets/image_texture.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilescope::gui {

struct ViewCaches {
  // The file browser's listing, read again when the folder or the mode changes, or after a
  // second (a file saved from elsewhere shows up).
  struct FolderListing {
    std::string dir;
    core::FileBrowser::Mode mode = core::FileBrowser::Mode::Closed;
    double listed_at = -10;
    std::vector<core::FolderEntry> entries;
    std::string error;
  } folder;
  // The Schedule view's fuse options, tried on the program once per schedule and machine.
  struct FuseChoices {
    std::string key;  // schedule_key() + "\n@" + machine
    std::vector<core::FuseOption> options;
  } fuse;
  // Short lesson texts (questions, explanations) parsed once: they hold `code` and $maths$.
  std::map<std::string, std::vector<core::md::Span>> lesson_spans;
  // One texture per grid and the pixels' buffer, per Tiles mode (the loop-nest walk, the GPU wave).
  struct GridTextures {
    std::vector<RgbaTexture> textures;
    std::vector<uint32_t> pixels;
  } tiles, tiles_gpu;
  // The counters-over-time plot's windows, computed once per recording (tiles_counters.cpp):
  // keyed by the recording's tiles key, its address and its frame count.
  struct CountersWindows {
    std::string key;
    const core::CountersOverTime* recording = nullptr;
    size_t frames = 0;
    std::vector<std::vector<core::LevelWindow>> windows;
    uint64_t max_memory_bytes = 1;
  } counters;
  // The machine editor's "Add a field" row while it is being filled in (machine_editor.cpp).
  struct MachineAddField {
    std::string section = "machine", key, value;
  } machine_add;
};

}  // namespace tilescope::gui
