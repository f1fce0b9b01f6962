// Frame-time help for software OpenGL: draws the large opaque solid fills of a frame without
// blending, which on llvmpipe is most of a shaded pixel's cost.
#pragma once

struct ImDrawData;

namespace tilescope::gui {

// Splits every draw command of `draw_data` into runs of consecutive triangles, and brackets the
// runs that are opaque solid fills (every vertex fully opaque, sampling the font atlas's white
// texel, so blending would write exactly the source colour) and cover at least `min_pixels` with
// callbacks that switch blending off and back on (ImDrawCallback_ResetRenderState). Drawing order
// and every pixel's result are unchanged; only the blend — reading and mixing the destination — is
// skipped where it cannot change anything. Call between ImGui::Render() and the renderer. Returns
// the area now drawn without blending, in pixels.
double draw_opaque_fills_unblended(ImDrawData* draw_data, double min_pixels = 4096);

}  // namespace tilescope::gui
