// Parts of the Memory view drawn by memory_panels.cpp (the "why this number" popup, the
// working-set meter and the set × way grids) and memory_measured.cpp (predicted vs measured).
// Any view may draw the meter (it needs only a kernel and a machine).
#pragma once

#include "app/gui/views/views.h"

#include <imgui.h>

namespace tilescope::gui {

// A number the learner can click for its formula: drawn as an underlined link at the cursor;
// pushes `memory formula TARGET` when clicked.
void formula_link(ViewContext& ctx, const std::string& text, const std::string& target);

// The popup for Workbench::memory_formula (nothing when it is empty).
void draw_formula_popup(ViewContext& ctx, const core::Rect& rect);

// Per cache level of the current machine, the current schedule's tile working set against the
// level's capacity, and the working set of every loop depth. Recomputed every frame (cheap).
void draw_working_set_meter(ViewContext& ctx);

// The set × way grids of MemoryResult::grids from `origin`, side by side while they fit in
// `width` (then below each other), each at most `height` tall, with a legend. Returns the size
// used.
ImVec2 draw_cache_grids(ViewContext& ctx, const core::MemoryResult& r, ImVec2 origin, float width,
                        float height);
// The same for any grids (the Tiles view's, at the animation's frame), their owners named by
// `tensor_names` (graph tensor ids) and `note` under the legend; a grid whose cells carry an age
// shades each line by it (log scale, pale = long unused).
ImVec2 draw_cache_grids(ViewContext& ctx, const std::vector<core::CacheGrid>& grids,
                        const std::vector<std::string>& tensor_names, ImVec2 origin, float width,
                        float height, const char* note);

// "Predicted vs measured": the committed counters recording for the machine's kind (ncu on the
// H200, cachegrind on a CPU), one run chosen from a list, each level's prediction beside the
// measurement with its error, its target and the likely cause of a miss (memory_measured.cpp).
void draw_measured_section(ViewContext& ctx);

// Baseline A against the current schedule (memory_baseline.cpp): the pin button or A's label with
// the table per level and the roofline bound (Memory view); the table per tensor (its side
// panel); the roofline bound and the times measured on this CPU (Timings side panel).
void draw_baseline_section(ViewContext& ctx);
void draw_baseline_tensors(ViewContext& ctx);
void draw_baseline_timings(ViewContext& ctx);

// The machine editor (machine_editor.cpp): "Edit a copy…", or the copy's fields by section, the
// parser's verdict and "Save as… and use".
void draw_machine_editor(ViewContext& ctx);

// Colour of a graph tensor id in the grids and their legend (Okabe-Ito; -1: grey).
ImU32 tensor_colour(int graph_id);

}  // namespace tilescope::gui
