// Opaque solid fills drawn without blending (opaque_draws.h): a pass over the frame's draw lists.
#include "app/gui/widgets/opaque_draws.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cmath>

namespace tilescope::gui {

namespace {

// The callback that opens an unblended run; ImDrawCallback_ResetRenderState closes it (the
// backend then sets up its whole state again, blending included).
void blend_off(const ImDrawList*, const ImDrawCmd*) {
  glDisable(GL_BLEND);
}

}  // namespace

double draw_opaque_fills_unblended(ImDrawData* draw_data, double min_pixels) {
  if (!draw_data) return 0;
  const ImTextureID atlas = ImGui::GetIO().Fonts->TexID;
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  double unblended = 0;
  ImVector<ImDrawCmd> out;
  for (int l = 0; l < draw_data->CmdListsCount; ++l) {
    ImDrawList* list = draw_data->CmdLists[l];
    const ImDrawVert* vtx = list->VtxBuffer.Data;
    const ImDrawIdx* idx = list->IdxBuffer.Data;
    out.resize(0);
    bool changed = false;
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback || cmd.TextureId != atlas || cmd.ElemCount < 6) {
        out.push_back(cmd);
        continue;
      }
      // Runs of consecutive triangles of one kind (opaque solid or not), with their area.
      unsigned run_start = 0;
      bool run_opaque = false;
      double run_area = 0;
      const auto flush = [&](unsigned end) {
        if (end == run_start) return;
        ImDrawCmd part = cmd;
        part.IdxOffset = cmd.IdxOffset + run_start;
        part.ElemCount = end - run_start;
        if (run_opaque && run_area >= min_pixels) {
          ImDrawCmd on = cmd;
          on.ElemCount = 0;
          on.UserCallback = blend_off;
          on.UserCallbackData = nullptr;
          ImDrawCmd off = on;
          off.UserCallback = ImDrawCallback_ResetRenderState;
          out.push_back(on);
          out.push_back(part);
          out.push_back(off);
          unblended += run_area;
          changed = true;
        } else if (!out.empty() && !out.back().UserCallback &&
                   out.back().TextureId == cmd.TextureId && out.back().VtxOffset == cmd.VtxOffset &&
                   out.back().IdxOffset + out.back().ElemCount == part.IdxOffset &&
                   out.back().ClipRect.x == cmd.ClipRect.x &&
                   out.back().ClipRect.y == cmd.ClipRect.y &&
                   out.back().ClipRect.z == cmd.ClipRect.z &&
                   out.back().ClipRect.w == cmd.ClipRect.w) {
          out.back().ElemCount += part.ElemCount;  // small opaque runs stay with their neighbours
        } else {
          out.push_back(part);
        }
        run_start = end;
        run_area = 0;
      };
      for (unsigned i = 0; i + 2 < cmd.ElemCount; i += 3) {
        const ImDrawVert& a = vtx[cmd.VtxOffset + idx[cmd.IdxOffset + i]];
        const ImDrawVert& b = vtx[cmd.VtxOffset + idx[cmd.IdxOffset + i + 1]];
        const ImDrawVert& c = vtx[cmd.VtxOffset + idx[cmd.IdxOffset + i + 2]];
        const auto solid = [&](const ImDrawVert& v) {
          return (v.col & IM_COL32_A_MASK) == IM_COL32_A_MASK && v.uv.x == white.x &&
                 v.uv.y == white.y;
        };
        const bool opaque = solid(a) && solid(b) && solid(c);
        if (opaque != run_opaque) {
          flush(i);
          run_opaque = opaque;
        }
        run_area += std::abs((b.pos.x - a.pos.x) * (c.pos.y - a.pos.y) -
                             (c.pos.x - a.pos.x) * (b.pos.y - a.pos.y)) *
                    0.5;
      }
      flush(cmd.ElemCount);
    }
    if (changed) list->CmdBuffer.swap(out);
  }
  return unblended;
}

}  // namespace tilescope::gui
