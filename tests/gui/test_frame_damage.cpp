// What a frame redraws (frame_damage.h): draw data built by hand — two panels side by side, each a
// list of one quad — and the rectangles FrameDamage asks for when one panel's vertices, clip or
// texture change, when lists come and go, and when nothing changes. Expected rectangles are the
// hand-placed panels' pixel bounds.
#include "app/gui/widgets/frame_damage.h"
#include "app/gui/widgets/gui_store.h"

#include <doctest/doctest.h>

#include <memory>
#include <vector>

using namespace tilescope::gui;

namespace {

constexpr int kW = 800, kH = 600;

// An ImGui context with its GuiStore, as run_app has them (texture versions live in the store).
struct GuiContext {
  GuiStore store;
  GuiContext() {
    ImGui::CreateContext();
    attach_gui_store(&store);
  }
  ~GuiContext() {
    attach_gui_store(nullptr);
    ImGui::DestroyContext();
  }
};

// One list owned by `name`: a quad from (x0, y0) to (x1, y1) clipped to the same rectangle,
// sampling `texture`.
std::unique_ptr<ImDrawList> panel(const char* name, float x0, float y0, float x1, float y1,
                                  ImTextureID texture = nullptr) {
  auto list = std::make_unique<ImDrawList>(nullptr);
  list->_OwnerName = name;
  const ImVec2 corners[4] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
  for (const ImVec2& p : corners) list->VtxBuffer.push_back(ImDrawVert{p, {0, 0}, 0xffffffffu});
  for (ImDrawIdx i : {0, 1, 2, 0, 2, 3}) list->IdxBuffer.push_back(i);
  ImDrawCmd cmd;
  cmd.ClipRect = ImVec4(x0, y0, x1, y1);
  cmd.TextureId = texture;
  cmd.ElemCount = 6;
  list->CmdBuffer.push_back(cmd);
  return list;
}

struct Frame {
  std::vector<std::unique_ptr<ImDrawList>> lists;
  std::vector<ImDrawList*> pointers;
  ImDrawData data;
  ImDrawData& build() {
    pointers.clear();
    for (auto& l : lists) pointers.push_back(l.get());
    data = ImDrawData();
    data.Valid = true;
    data.CmdLists = pointers.data();
    data.CmdListsCount = int(pointers.size());
    data.DisplayPos = ImVec2(0, 0);
    data.DisplaySize = ImVec2(kW, kH);
    data.FramebufferScale = ImVec2(1, 1);
    return data;
  }
};

Frame two_panels() {
  Frame f;
  f.lists.push_back(panel("Schedule", 0, 0, 300.5f, 600));
  f.lists.push_back(panel("Tiles", 300.5f, 0, 800, 600, reinterpret_cast<ImTextureID>(7)));
  return f;
}

bool equal(const PixelRect& r, int x0, int y0, int x1, int y1) {
  return r.x0 == x0 && r.y0 == y0 && r.x1 == x1 && r.y1 == y1;
}

}  // namespace

TEST_CASE("the first frame is redrawn whole, an unchanged one not at all") {
  GuiContext gui;
  FrameDamage damage;
  Frame f = two_panels();
  const auto first = damage.update(f.build(), kW, kH, false);
  REQUIRE(first.size() == 1);
  CHECK(equal(first[0], 0, 0, kW, kH));
  CHECK(damage.update(f.build(), kW, kH, false).empty());
  // Asked for whole (an exposed window), or resized: the whole framebuffer.
  const auto exposed = damage.update(f.build(), kW, kH, true);
  REQUIRE(exposed.size() == 1);
  CHECK(equal(exposed[0], 0, 0, kW, kH));
  const auto resized = damage.update(f.build(), kW, kH - 100, false);
  REQUIRE(resized.size() == 1);
  CHECK(equal(resized[0], 0, 0, kW, kH - 100));
}

TEST_CASE("a panel whose vertices change is redrawn alone, its clip rounded outwards") {
  GuiContext gui;
  FrameDamage damage;
  Frame f = two_panels();
  damage.update(f.build(), kW, kH, false);
  f.lists[1]->VtxBuffer[2].col = 0xff0000ffu;  // one corner's colour
  const auto rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 1);
  CHECK(equal(rects[0], 300, 0, 800, 600));  // 300.5 → pixel column 300
  CHECK(damage.update(f.build(), kW, kH, false).empty());
}

TEST_CASE("new pixels in a sampled texture redraw the lists that draw it") {
  GuiContext gui;
  FrameDamage damage;
  Frame f = two_panels();
  damage.update(f.build(), kW, kH, false);
  note_texture_changed(reinterpret_cast<ImTextureID>(7));
  const auto rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 1);
  CHECK(equal(rects[0], 300, 0, 800, 600));
  note_texture_changed(reinterpret_cast<ImTextureID>(8));  // drawn by no list
  CHECK(damage.update(f.build(), kW, kH, false).empty());
}

TEST_CASE("a panel that moves redraws where it was and where it is") {
  GuiContext gui;
  FrameDamage damage;
  Frame f;
  f.lists.push_back(panel("Popup", 10, 10, 110, 60));
  damage.update(f.build(), kW, kH, false);
  f.lists[0] = panel("Popup", 500, 400, 600, 450);
  const auto rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 2);  // apart: two rectangles, not their 590 × 440 bounding box
  CHECK(equal(rects[0], 10, 10, 110, 60));
  CHECK(equal(rects[1], 500, 400, 600, 450));
}

TEST_CASE("lists that appear, vanish or change order redraw the whole frame") {
  GuiContext gui;
  FrameDamage damage;
  Frame f = two_panels();
  damage.update(f.build(), kW, kH, false);
  f.lists.push_back(panel("Tooltip", 100, 100, 200, 130));
  auto rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 1);
  CHECK(equal(rects[0], 0, 0, kW, kH));
  f.lists.pop_back();
  rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 1);
  CHECK(equal(rects[0], 0, 0, kW, kH));
  std::swap(f.lists[0], f.lists[1]);
  rects = damage.update(f.build(), kW, kH, false);
  REQUIRE(rects.size() == 1);
  CHECK(equal(rects[0], 0, 0, kW, kH));
}

TEST_CASE("merge_rects: overlapping rectangles join, too many become their bounding box") {
  auto merged = merge_rects({{0, 0, 10, 10}, {5, 5, 20, 20}, {50, 50, 60, 60}, {0, 0, 0, 5}}, 4);
  REQUIRE(merged.size() == 2);  // the empty one dropped, the first two joined
  CHECK(equal(merged[0], 0, 0, 20, 20));
  CHECK(equal(merged[1], 50, 50, 60, 60));
  std::vector<PixelRect> many;
  for (int i = 0; i < 6; ++i) many.push_back({i * 100, 0, i * 100 + 10, 10});
  merged = merge_rects(many, 4);
  REQUIRE(merged.size() == 1);
  CHECK(equal(merged[0], 0, 0, 510, 10));
}
