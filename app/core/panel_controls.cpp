// The side panels' controls by name (panel_controls.h): one table read by the `control` command,
// the session and panel_control_values.
#include "app/core/panel_controls.h"

#include <charconv>

namespace tilescope::core {
namespace {

// A control's kind decides how its script text is read.
enum class ControlKind { Int, Choice, Flag, Text };

struct Control {
  const char* name;
  ControlKind kind;
  int ScheduleControls::*schedule_int = nullptr;  // Int and Choice fields of the schedule panel
  int PaletteControls::*palette_int = nullptr;    // Choice fields of the palette
  int ViewControls::*views_int = nullptr;         // Int fields of the other views
  bool PaletteControls::*palette_flag = nullptr;
  std::string PaletteControls::*palette_text = nullptr;
  std::string ScheduleControls::*schedule_text = nullptr;
  int min = 0, max = 0;                  // Int: the range; Choice: 0 and the count
  const char* const* choices = nullptr;  // Choice: the names
  size_t max_bytes = 0;                  // Text: the longest value
};

// Kernel positions (tensors, loops): no kernel has a million of either.
constexpr int kMaxIndex = 1000000;

template <size_t N>
constexpr int choice_count(const char* const (&)[N]) {
  return int(N);
}

const Control kControls[] = {
    {.name = "schedule.tile-log2",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::tile_log2,
     .min = kMinTileLog2,
     .max = kMaxTileLog2},
    {.name = "schedule.bind",
     .kind = ControlKind::Choice,
     .schedule_int = &ScheduleControls::bind_target,
     .max = choice_count(kBindTargets),
     .choices = kBindTargets},
    {.name = "schedule.stage-tensor",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::stage_tensor,
     .max = kMaxIndex},
    {.name = "schedule.stage-level",
     .kind = ControlKind::Choice,
     .schedule_int = &ScheduleControls::stage_level,
     .max = choice_count(kStageLevels),
     .choices = kStageLevels},
    {.name = "schedule.stage-at",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::stage_at,
     .max = kMaxIndex},
    {.name = "schedule.layout-tensor",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::layout_tensor,
     .max = kMaxIndex},
    {.name = "schedule.layout",
     .kind = ControlKind::Choice,
     .schedule_int = &ScheduleControls::layout_kind,
     .max = choice_count(kLayoutKinds),
     .choices = kLayoutKinds},
    {.name = "schedule.group",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::block_group,
     .min = kMinBlockGroup,
     .max = kMaxBlockGroup},
    {.name = "schedule.reorder",
     .kind = ControlKind::Text,
     .schedule_text = &ScheduleControls::reorder,
     .max_bytes = kReorderTextBytes},
    {.name = "schedule.compute-producer",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::compute_producer,
     .max = kMaxIndex},
    {.name = "schedule.compute-at",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::compute_at,
     .max = kMaxIndex},
    {.name = "schedule.pad-target",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::pad_target,
     .max = kMaxIndex},
    {.name = "schedule.pad-dim",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::pad_dim,
     .max = kMaxPadDim},
    {.name = "schedule.pad-amount",
     .kind = ControlKind::Int,
     .schedule_int = &ScheduleControls::pad_amount,
     .min = 1,
     .max = kMaxPadAmount},
    {.name = "palette.open", .kind = ControlKind::Flag, .palette_flag = &PaletteControls::open},
    {.name = "palette.name",
     .kind = ControlKind::Text,
     .palette_text = &PaletteControls::name,
     .max_bytes = kPaletteNameBytes},
    {.name = "palette.dims",
     .kind = ControlKind::Text,
     .palette_text = &PaletteControls::dims,
     .max_bytes = kPaletteFieldBytes},
    {.name = "palette.dtype",
     .kind = ControlKind::Choice,
     .palette_int = &PaletteControls::dtype,
     .max = choice_count(kPaletteDtypes),
     .choices = kPaletteDtypes},
    {.name = "palette.args",
     .kind = ControlKind::Text,
     .palette_text = &PaletteControls::args,
     .max_bytes = kPaletteFieldBytes},
    {.name = "memory.measured-run",
     .kind = ControlKind::Int,
     .views_int = &ViewControls::measured_run,
     .max = kMaxIndex},
    {.name = "timings.report",
     .kind = ControlKind::Int,
     .views_int = &ViewControls::timings_report,
     .max = kMaxIndex},
    {.name = "occupancy.threads",
     .kind = ControlKind::Int,
     .views_int = &ViewControls::occupancy_threads,
     .max = kMaxOccupancyThreads},
    {.name = "occupancy.registers",
     .kind = ControlKind::Int,
     .views_int = &ViewControls::occupancy_registers,
     .max = kMaxOccupancyRegisters},
    {.name = "occupancy.smem",
     .kind = ControlKind::Int,
     .views_int = &ViewControls::occupancy_smem,
     .max = kMaxOccupancySmem},
};

int& int_field(const Control& c, PanelControls& p) {
  if (c.views_int) return p.views.*c.views_int;
  return c.schedule_int ? p.schedule.*c.schedule_int : p.palette.*c.palette_int;
}

int int_field(const Control& c, const PanelControls& p) {
  if (c.views_int) return p.views.*c.views_int;
  return c.schedule_int ? p.schedule.*c.schedule_int : p.palette.*c.palette_int;
}

std::string& text_field(const Control& c, PanelControls& p) {
  return c.schedule_text ? p.schedule.*c.schedule_text : p.palette.*c.palette_text;
}

std::string choice_list(const Control& c) {
  std::string s;
  for (int i = 0; i < c.max; ++i) s += (i ? ", " : "") + std::string(c.choices[i]);
  return s;
}

}  // namespace

std::string set_panel_control(PanelControls& controls, std::string_view name,
                              std::string_view value) {
  for (const Control& c : kControls) {
    if (name != c.name) continue;
    const std::string head = "control " + std::string(name) + ": ";
    switch (c.kind) {
      case ControlKind::Int: {
        int v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < c.min ||
            v > c.max)
          return head + "expected a whole number from " + std::to_string(c.min) + " to " +
                 std::to_string(c.max) + ", got '" + std::string(value) + "'";
        int_field(c, controls) = v;
        return {};
      }
      case ControlKind::Choice:
        for (int i = 0; i < c.max; ++i)
          if (value == c.choices[i]) {
            int_field(c, controls) = i;
            return {};
          }
        return head + "expected one of " + choice_list(c) + ", got '" + std::string(value) + "'";
      case ControlKind::Flag:
        if (value != "on" && value != "off")
          return head + "expected on or off, got '" + std::string(value) + "'";
        controls.palette.*c.palette_flag = value == "on";
        return {};
      case ControlKind::Text:
        if (value.size() > c.max_bytes)
          return head + "at most " + std::to_string(c.max_bytes) + " bytes, got " +
                 std::to_string(value.size());
        if (value.find_first_of("\n\r") != std::string_view::npos)
          return head + "one line of text, without line breaks";
        text_field(c, controls) = std::string(value);
        return {};
    }
  }
  return "control: no control named '" + std::string(name) + "' (known: " + panel_control_names() +
         ")";
}

std::vector<std::pair<std::string, std::string>> panel_control_values(const PanelControls& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Control& c : kControls) {
    std::string v;
    switch (c.kind) {
      case ControlKind::Int:
        v = std::to_string(int_field(c, p));
        break;
      case ControlKind::Choice: {
        const int i = int_field(c, p);
        v = i >= 0 && i < c.max ? c.choices[i] : c.choices[0];
        break;
      }
      case ControlKind::Flag:
        v = p.palette.*c.palette_flag ? "on" : "off";
        break;
      case ControlKind::Text:
        v = c.schedule_text ? p.schedule.*c.schedule_text : p.palette.*c.palette_text;
        break;
    }
    out.emplace_back(c.name, std::move(v));
  }
  return out;
}

std::string panel_control_names() {
  std::string s;
  for (const Control& c : kControls) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

}  // namespace tilescope::core
