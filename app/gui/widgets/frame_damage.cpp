// FrameDamage, merge_rects and note_texture_changed (frame_damage.h).
#include "app/gui/widgets/frame_damage.h"
#include "app/gui/widgets/gui_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>

namespace tilescope::gui {

namespace {

// Content versions of textures whose pixels were replaced after they were first drawn.
std::unordered_map<ImTextureID, uint64_t>& texture_versions() {
  return gui_store().texture_versions;
}

// A 64-bit hash over words (a multiply-xorshift mix per word): a frame's lists are ~200 KB,
// hashed in well under 0.1 ms.
struct Hasher {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  void word(uint64_t w) {
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      word(w);
    }
    uint64_t tail = n;
    for (; i < n; ++i) tail = (tail << 8) | p[i];
    word(tail);
  }
  void f(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    word(u);
  }
};

// A command's clip rectangle in framebuffer pixels, rounded outwards, inside the framebuffer.
PixelRect clip_pixels(const ImDrawData& dd, const ImVec4& clip, int fb_w, int fb_h) {
  const ImVec2 off = dd.DisplayPos, scale = dd.FramebufferScale;
  PixelRect r;
  r.x0 = std::max(0, int(std::floor((clip.x - off.x) * scale.x)));
  r.y0 = std::max(0, int(std::floor((clip.y - off.y) * scale.y)));
  r.x1 = std::min(fb_w, int(std::ceil((clip.z - off.x) * scale.x)));
  r.y1 = std::min(fb_h, int(std::ceil((clip.w - off.y) * scale.y)));
  return r;
}

PixelRect unite(const PixelRect& a, const PixelRect& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

bool touch(const PixelRect& a, const PixelRect& b) {
  return a.x0 <= b.x1 && b.x0 <= a.x1 && a.y0 <= b.y1 && b.y0 <= a.y1;
}

bool same(const PixelRect& a, const PixelRect& b) {
  return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
}

}  // namespace

void note_texture_changed(ImTextureID id) {
  ++texture_versions()[id];
}

std::vector<PixelRect> merge_rects(std::vector<PixelRect> rects, size_t max_rects) {
  rects.erase(std::remove_if(rects.begin(), rects.end(), [](const PixelRect& r) { return r.empty(); }),
              rects.end());
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < rects.size() && !merged; ++i)
      for (size_t j = i + 1; j < rects.size(); ++j)
        if (touch(rects[i], rects[j])) {
          rects[i] = unite(rects[i], rects[j]);
          rects.erase(rects.begin() + std::ptrdiff_t(j));
          merged = true;
          break;
        }
  }
  if (rects.size() > max_rects) {
    PixelRect box;
    for (const PixelRect& r : rects) box = unite(box, r);
    rects = {box};
  }
  return rects;
}

std::vector<PixelRect> FrameDamage::update(const ImDrawData& dd, int fb_w, int fb_h, bool full) {
  const auto& versions = texture_versions();
  std::vector<ListPrint> now;
  now.reserve(size_t(std::max(0, dd.CmdListsCount)));
  std::map<std::string, int> occurrences;
  for (int l = 0; l < dd.CmdListsCount; ++l) {
    const ImDrawList& list = *dd.CmdLists[l];
    ListPrint p;
    const std::string owner = list._OwnerName ? list._OwnerName : "";
    p.key = owner + "#" + std::to_string(occurrences[owner]++);
    Hasher h;
    h.bytes(list.VtxBuffer.Data, size_t(list.VtxBuffer.Size) * sizeof(ImDrawVert));
    h.bytes(list.IdxBuffer.Data, size_t(list.IdxBuffer.Size) * sizeof(ImDrawIdx));
    for (const ImDrawCmd& cmd : list.CmdBuffer) {
      h.f(cmd.ClipRect.x), h.f(cmd.ClipRect.y), h.f(cmd.ClipRect.z), h.f(cmd.ClipRect.w);
      h.word(uint64_t(reinterpret_cast<uintptr_t>(cmd.TextureId)));
      if (const auto v = versions.find(cmd.TextureId); v != versions.end()) h.word(v->second);
      h.word(cmd.VtxOffset), h.word(cmd.IdxOffset), h.word(cmd.ElemCount);
      h.word(uint64_t(reinterpret_cast<uintptr_t>(cmd.UserCallback)));
      h.word(uint64_t(reinterpret_cast<uintptr_t>(cmd.UserCallbackData)));
      if (cmd.ElemCount > 0 || cmd.UserCallback)
        p.rect = unite(p.rect, clip_pixels(dd, cmd.ClipRect, fb_w, fb_h));
    }
    p.hash = h.h;
    now.push_back(std::move(p));
  }

  bool whole = full || fb_w != m_w || fb_h != m_h || now.size() != m_last.size();
  for (size_t i = 0; i < now.size() && !whole; ++i) whole = now[i].key != m_last[i].key;
  std::vector<PixelRect> rects;
  if (whole) {
    rects.push_back({0, 0, fb_w, fb_h});
  } else {
    for (size_t i = 0; i < now.size(); ++i)
      if (now[i].hash != m_last[i].hash || !same(now[i].rect, m_last[i].rect)) {
        rects.push_back(m_last[i].rect);
        rects.push_back(now[i].rect);
      }
  }
  m_last = std::move(now);
  m_w = fb_w;
  m_h = fb_h;
  return merge_rects(std::move(rects), kMaxRects);
}

}  // namespace tilescope::gui
