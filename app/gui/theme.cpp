// Colours and fonts for the three themes (light, dark, projector).
#include "app/gui/theme.h"

#include <cstdio>
#include <filesystem>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

constexpr ImU32 rgb(unsigned hex, unsigned alpha = 255) {
  return IM_COL32((hex >> 16) & 0xFF, (hex >> 8) & 0xFF, hex & 0xFF, alpha);
}

// Okabe-Ito: orange E69F00, sky blue 56B4E9, bluish green 009E73, yellow F0E442, blue 0072B2,
// vermillion D55E00, reddish purple CC79A7.
constexpr unsigned kOrange = 0xE69F00, kSky = 0x56B4E9, kGreen = 0x009E73, kYellow = 0xF0E442,
                   kBlue = 0x0072B2, kVermillion = 0xD55E00, kPurple = 0xCC79A7;

Palette make_light() {
  Palette p{};
  p.canvas_bg = rgb(0xF7F7F4);
  p.grid = rgb(0xDADAD4);
  p.node_bg = rgb(0xFFFFFF);
  p.node_border = rgb(0x9A9A94);
  p.text = rgb(0x1C1C1C);
  p.subtext = rgb(0x5C5C58);
  p.edge = rgb(0x6E6E6A);
  p.edge_label = rgb(0x33332F);
  p.label_bg = rgb(0xF7F7F4, 230);
  p.selection = rgb(kVermillion);
  p.hover = rgb(kBlue);
  p.bar_bg = rgb(0xE4E4DE);
  p.error = rgb(0xB03A00);
  p.error_bg = rgb(kVermillion, 40);
  p.ok = rgb(0x00735A);
  p.stale_bg = rgb(0xFFF3D6);
  p.line_scale = 1.0f;
  const ImU32 cats[11] = {rgb(kBlue),    rgb(kGreen),  rgb(kOrange),     rgb(kPurple),
                          rgb(0x8C8C8C), rgb(kPurple), rgb(kVermillion), rgb(0x444444),
                          rgb(kSky),     rgb(kYellow), rgb(0x555555)};
  for (int i = 0; i < 11; ++i) p.category[i] = cats[i];
  return p;
}

Palette make_dark() {
  Palette p = make_light();
  p.canvas_bg = rgb(0x1B1D21);
  p.grid = rgb(0x2C2F35);
  p.node_bg = rgb(0x2A2D33);
  p.node_border = rgb(0x5A5E66);
  p.text = rgb(0xE8E8E8);
  p.subtext = rgb(0xA8ABB2);
  p.edge = rgb(0x9095A0);
  p.edge_label = rgb(0xD0D2D6);
  p.label_bg = rgb(0x1B1D21, 230);
  p.selection = rgb(kOrange);
  p.hover = rgb(kSky);
  p.bar_bg = rgb(0x3A3E46);
  p.error = rgb(0xFF8A4C);
  p.error_bg = rgb(kVermillion, 60);
  p.ok = rgb(0x4CC9A0);
  p.stale_bg = rgb(0x4A3B12);
  p.category[0] = rgb(0x3D9BE0);  // Okabe-Ito blue lifted so it reads on a dark background
  p.category[7] = rgb(0xBBBBBB);
  p.category[10] = rgb(0xBBBBBB);
  return p;
}

Palette make_projector() {
  // White background, black text, full-strength colours, thicker lines: projectors wash out
  // greys and thin strokes.
  Palette p = make_light();
  p.canvas_bg = rgb(0xFFFFFF);
  p.grid = rgb(0xE6E6E6);
  p.node_border = rgb(0x000000);
  p.text = rgb(0x000000);
  p.subtext = rgb(0x222222);
  p.edge = rgb(0x000000);
  p.edge_label = rgb(0x000000);
  p.label_bg = rgb(0xFFFFFF, 240);
  p.bar_bg = rgb(0xD8D8D8);
  p.line_scale = 1.8f;
  return p;
}

}  // namespace

const Palette& palette(Theme theme) {
  static const Palette light = make_light(), dark = make_dark(), projector = make_projector();
  switch (theme) {
    case Theme::Dark:
      return dark;
    case Theme::Projector:
      return projector;
    case Theme::Light:
      break;
  }
  return light;
}

ImU32 category_colour(const Palette& p, NodeCategory c) {
  return p.category[static_cast<int>(c)];
}

const char* category_name(NodeCategory c) {
  switch (c) {
    case NodeCategory::Contraction:
      return "matmul / conv";
    case NodeCategory::Elementwise:
      return "elementwise";
    case NodeCategory::Normalize:
      return "normalize";
    case NodeCategory::Pool:
      return "pool";
    case NodeCategory::Reshape:
      return "reshape";
    case NodeCategory::Reduce:
      return "reduce";
    case NodeCategory::Loss:
      return "loss";
    case NodeCategory::Update:
      return "update";
    case NodeCategory::Input:
      return "input";
    case NodeCategory::Weight:
      return "weight";
    case NodeCategory::Output:
      return "output";
  }
  return "";
}

void apply_imgui_style(Theme theme, float content_scale) {
  ImGuiStyle style;
  if (theme == Theme::Dark) {
    ImGui::StyleColorsDark(&style);
  } else {
    ImGui::StyleColorsLight(&style);
  }
  style.WindowRounding = 0.0f;
  style.WindowBorderSize = 1.0f;
  style.FrameRounding = 3.0f;
  style.FramePadding = ImVec2(6, 4);
  style.ItemSpacing = ImVec2(8, 6);
  style.CellPadding = ImVec2(6, 3);
  style.ScrollbarSize = 14.0f;
  ImVec4* c = style.Colors;
  if (theme == Theme::Light || theme == Theme::Projector) {
    c[ImGuiCol_WindowBg] = ImVec4(0.985f, 0.985f, 0.98f, 1.0f);
    c[ImGuiCol_FrameBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
    c[ImGuiCol_Border] = ImVec4(0.72f, 0.72f, 0.70f, 1.0f);
    c[ImGuiCol_Text] = ImVec4(0.10f, 0.10f, 0.10f, 1.0f);
    c[ImGuiCol_TextDisabled] = ImVec4(0.36f, 0.36f, 0.35f, 1.0f);
    c[ImGuiCol_Header] = ImVec4(0.00f, 0.45f, 0.70f, 0.18f);
    c[ImGuiCol_HeaderHovered] = ImVec4(0.00f, 0.45f, 0.70f, 0.28f);
    c[ImGuiCol_HeaderActive] = ImVec4(0.00f, 0.45f, 0.70f, 0.38f);
    c[ImGuiCol_TableHeaderBg] = ImVec4(0.92f, 0.92f, 0.90f, 1.0f);
  }
  if (theme == Theme::Dark) {
    // Neutral greys: the default dark style's blue frames fight the category colours.
    c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.09f, 0.10f, 1.0f);
    c[ImGuiCol_FrameBg] = ImVec4(0.13f, 0.14f, 0.16f, 1.0f);
    c[ImGuiCol_Border] = ImVec4(0.30f, 0.31f, 0.34f, 1.0f);
    c[ImGuiCol_Header] = ImVec4(0.24f, 0.61f, 0.88f, 0.25f);
    c[ImGuiCol_HeaderHovered] = ImVec4(0.24f, 0.61f, 0.88f, 0.35f);
    c[ImGuiCol_HeaderActive] = ImVec4(0.24f, 0.61f, 0.88f, 0.45f);
  }
  if (theme == Theme::Projector) {
    c[ImGuiCol_WindowBg] = ImVec4(1, 1, 1, 1);
    c[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
    c[ImGuiCol_TextDisabled] = ImVec4(0.15f, 0.15f, 0.15f, 1.0f);
    c[ImGuiCol_Border] = ImVec4(0, 0, 0, 1);
    style.FrameBorderSize = 1.0f;
    style.FramePadding = ImVec2(8, 6);
  } else {
    style.FrameBorderSize = 1.0f;
  }
  style.ScaleAllSizes(content_scale > 0 ? content_scale : 1.0f);
  ImGui::GetStyle() = style;
}

Fonts load_fonts(float content_scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  // Latin-1, Greek (lesson maths: α, σ, π), general punctuation (dashes, quotes, bullets, … —
  // parser messages use them), super- and subscripts (4096², xᵢ), arrows, mathematical operators
  // (≈ ≤ ≥ ×), ceilings and floors, shapes (● ▶ for steps), check marks (✓ ✗) and the
  // replacement character.
  static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2000, 0x206F, 0x2070,
                                    0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2308, 0x230B,
                                    0x2400, 0x2426, 0x2500, 0x257F, 0x25A0, 0x25FF, 0x2713,
                                    0x2717, 0xFFFD, 0xFFFD, 0};
  // What Inter and JetBrains Mono lack is merged in from DejaVu (each font's own glyphs win):
  // modifier letters (Wᵀ), letterlike symbols (ℝ), maths (∇ ∈ ⋯ ⌈ ⌉), control pictures (␀), box
  // drawing, shapes (▸), check marks and the replacement character; DejaVu has no control
  // pictures, so ␀ (a NUL byte shown in the editor) comes from JetBrains Mono. test_glyphs checks
  // that every character the app's texts and the lessons use has a glyph.
  static const ImWchar kFallbackRanges[] = {0x1D2C, 0x1D6A, 0x2100, 0x214F, 0x2190, 0x21FF,
                                            0x2200, 0x22FF, 0x2300, 0x23FF, 0x2500, 0x257F, 0x25A0, 0x25FF, 0x2713, 0x2717,
                                            0xFFFD, 0xFFFD, 0};
  static const ImWchar kControlPictures[] = {0x2400, 0x2426, 0};
  const char* kFallback = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* kFallbackMono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  const char* kRegular = "/usr/share/fonts/opentype/inter/Inter-Regular.otf";
  const char* kBold = "/usr/share/fonts/opentype/inter/Inter-SemiBold.otf";
  const char* kMono = "/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf";
  bool warned = false;  // one warning per load (the fonts load again when the UI scale changes)
  auto load = [&](const char* path, float px) -> ImFont* {
    if (std::filesystem::exists(path)) {
      ImFontConfig cfg;
      cfg.OversampleH = 2;
      cfg.OversampleV = 2;
      if (ImFont* f = io.Fonts->AddFontFromFileTTF(path, px, &cfg, kRanges)) return f;
    }
    if (!warned) {
      std::fprintf(stderr,
                   "tilescope: warning: font %s not found; using ImGui's built-in font "
                   "(install fonts-inter and fonts-jetbrains-mono)\n",
                   path);
      warned = true;
    }
    ImFontConfig cfg;
    cfg.SizePixels = px;
    return io.Fonts->AddFontDefault(&cfg);
  };
  // Merges the fallback's glyphs into the font just loaded (skipped when DejaVu is missing: the
  // few characters it adds then show as "?").
  auto merge_fallback = [&](const char* path, float px, const ImWchar* ranges) {
    if (!std::filesystem::exists(path)) return;
    ImFontConfig cfg;
    cfg.MergeMode = true;
    cfg.OversampleH = 2;
    cfg.OversampleV = 2;
    io.Fonts->AddFontFromFileTTF(path, px, &cfg, ranges);
  };
  Fonts fonts;
  for (Theme t : {Theme::Light, Theme::Projector}) {
    FontSet& set = t == Theme::Projector ? fonts.projector : fonts.desk;
    set.px = theme_font_px(t, content_scale);
    set.ui = load(kRegular, set.px);
    merge_fallback(kFallback, set.px, kFallbackRanges);
    merge_fallback(kMono, set.px, kControlPictures);
    set.ui_bold = load(kBold, set.px);
    merge_fallback(kFallback, set.px, kFallbackRanges);
    merge_fallback(kMono, set.px, kControlPictures);
    set.mono = load(kMono, set.px);
    merge_fallback(kFallbackMono, set.px, kFallbackRanges);
  }
  io.FontDefault = fonts.desk.ui;
  return fonts;
}

}  // namespace tilescope::gui
