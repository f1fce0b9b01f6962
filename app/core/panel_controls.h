// The side panels' controls: what a learner has chosen in a panel's widgets before it becomes a
// schedule step or a model edit — the Schedule panel's tile factor, bind target and stage / layout
// choices and its occupancy calculator's resources, the graph palette's fold and its half-typed
// form, the Memory view's measured run.
// They lived in function-local statics of the views; here they are app state, so a script sets them (`control NAME VALUE`), a session
// keeps them, and the views draw them and push `control` commands when a widget changes.
//
// Pure C++ (no ImGui): one table of named controls serves the command, the session and the tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope::core {

// The choices of the Schedule panel's combo boxes, in the order they are shown.
inline constexpr const char* kBindTargets[] = {"block.x",  "block.y",  "block.z",
                                               "thread.x", "thread.y", "thread.z"};
inline constexpr const char* kStageLevels[] = {"shared", "scratchpad", "registers"};
inline constexpr const char* kLayoutKinds[] = {"rowmajor", "transposed", "nchw", "nhwc"};
// The palette's dtypes for a new tensor (fp32, the first, is the model language's default).
inline constexpr const char* kPaletteDtypes[] = {"fp32", "fp16", "bf16", "int8"};

inline constexpr int kMinTileLog2 = 1, kMaxTileLog2 = 8;  // tile factors 2 … 256
inline constexpr int kMinBlockGroup = 1, kMaxBlockGroup = 64;
// The occupancy calculator's fields. Their maxima pass every GPU's limits (1024 threads and 227 KiB
// of shared memory a block, 255 registers a thread), so the panel can show why such a block cannot
// run instead of refusing the number; registers start at a count typical of a simple kernel.
inline constexpr int kMaxOccupancyThreads = 4096, kMaxOccupancyRegisters = 255;
inline constexpr int kMaxOccupancySmem = 1 << 20;
inline constexpr int kFirstOccupancyRegisters = 32;
// The palette's text fields hold at most this many bytes (the widgets' buffers, less the NUL).
inline constexpr size_t kPaletteNameBytes = 63, kPaletteFieldBytes = 127;

struct ScheduleControls {
  int tile_log2 = 4;      // schedule.tile-log2: the "tile" buttons split by 2^tile_log2
  int bind_target = 0;    // schedule.bind: index into kBindTargets
  int stage_tensor = 0;   // schedule.stage-tensor: index into the current kernel's tensors
  int stage_level = 0;    // schedule.stage-level: index into kStageLevels
  int stage_at = 0;       // schedule.stage-at: index into the current kernel's loops
  int layout_tensor = 0;  // schedule.layout-tensor: index into the current kernel's tensors
  int layout_kind = 0;    // schedule.layout: index into kLayoutKinds
  int block_group = 8;    // schedule.group: N of block_order(grouped, N)
  // The primitives without a button of their own: a free loop order, compute_at and pad.
  std::string reorder;       // schedule.reorder: "k, i, j" ("" = the kernel's current order)
  int compute_producer = 0;  // schedule.compute-producer: index into the producers it could take
  int compute_at = 0;        // schedule.compute-at: 0 = inline, n = the kernel's loop n - 1
  int pad_target = 0;        // schedule.pad-target: index into its tensors, then staged tiles
  int pad_dim = 0;           // schedule.pad-dim: the dimension padded
  int pad_amount = 1;        // schedule.pad-amount: elements added to it
};
inline constexpr int kMaxPadDim = 7, kMaxPadAmount = 64;
inline constexpr size_t kReorderTextBytes = 255;

struct PaletteControls {
  bool open = false;  // palette.open: folded at first, so the first screen shows the whole graph
  std::string name;   // palette.name: the new tensor's name
  std::string dims;   // palette.dims: its shape, "64,128"
  int dtype = 0;      // palette.dtype: index into kPaletteDtypes
  std::string args;   // palette.args: key=value arguments for the ops that take them
};

// The Memory and Timings views' choices among recordings, and the Schedule panel's occupancy
// calculator.
struct ViewControls {
  // memory.measured-run: index into the runs of the counters recording the Memory view shows
  // for the machine's kind (ncu's for a GPU, cachegrind's for a CPU)
  int measured_run = 0;
  // timings.report: index into the recordings the Timings view lists (newest first)
  int timings_report = 0;
  // occupancy.threads, occupancy.registers, occupancy.smem: one block's resources in the occupancy
  // calculator. 0 threads or 0 bytes follow the current kernel's launch, so the panel tracks the
  // schedule until the learner types a value; registers are the compiler's choice, which no
  // schedule shows, so they are always typed.
  int occupancy_threads = 0;
  int occupancy_registers = kFirstOccupancyRegisters;
  int occupancy_smem = 0;
};

struct PanelControls {
  ScheduleControls schedule;
  PaletteControls palette;
  ViewControls views;
};

// Sets control `name` from its script text ("schedule.bind thread.x", "palette.open on",
// "palette.name x2"); returns "" or why not (unknown name, value out of range), the controls
// then unchanged. Choices are given by name, kernel positions by index, text as it is.
std::string set_panel_control(PanelControls& controls, std::string_view name,
                              std::string_view value);

// Every control as (name, script text), in a fixed order: what a session saves, and what
// set_panel_control reads back to the same controls.
std::vector<std::pair<std::string, std::string>> panel_control_values(const PanelControls& c);

// The names set_panel_control knows, for messages: "schedule.tile-log2, schedule.bind, ...".
std::string panel_control_names();

}  // namespace tilescope::core
