// The side panels' controls in the app state (panel_controls.h): their first values are the
// ones the views' function-local statics started with, the `control` command sets each by name
// and refuses what the widgets could not show, the command and the session both round-trip them,
// and the palette's outline follows the model text.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/panel_controls.h"
#include "app/core/session.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace tilescope::core;

namespace {

const char* kModel = "x: [8, 16]\nW: [4, 16] weight\ny = x @ W.T\n";

using test::run;
using test::state_for;

}  // namespace

TEST_CASE("panel controls start where the views' statics did") {
  // view_schedule.cpp: tile_log2 = 4, group = 8, every combo at its first entry;
  // view_graph.cpp: the palette folded, an empty form with fp32.
  const PanelControls c;
  CHECK(c.schedule.tile_log2 == 4);
  CHECK(c.schedule.block_group == 8);
  CHECK(c.schedule.bind_target == 0);
  CHECK(std::string(kBindTargets[0]) == "block.x");
  CHECK(c.schedule.stage_tensor == 0);
  CHECK(c.schedule.stage_level == 0);
  CHECK(std::string(kStageLevels[0]) == "shared");
  CHECK(c.schedule.stage_at == 0);
  CHECK(c.schedule.layout_tensor == 0);
  CHECK(std::string(kLayoutKinds[0]) == "rowmajor");
  CHECK_FALSE(c.palette.open);
  CHECK(c.palette.name.empty());
  CHECK(c.palette.dims.empty());
  CHECK(c.palette.args.empty());
  CHECK(std::string(kPaletteDtypes[c.palette.dtype]) == "fp32");
  // The occupancy calculator follows the kernel's launch (0) and starts at 32 registers.
  CHECK(c.views.occupancy_threads == 0);
  CHECK(c.views.occupancy_registers == 32);
  CHECK(c.views.occupancy_smem == 0);
}

TEST_CASE("control sets each panel control by name, choices by their names") {
  AppState s = state_for(kModel);
  CHECK(run(s, "control schedule.tile-log2 6") == "");
  CHECK(s.controls.schedule.tile_log2 == 6);
  CHECK(run(s, "control schedule.bind thread.y") == "");
  CHECK(s.controls.schedule.bind_target == 4);  // block.x, block.y, block.z, thread.x, thread.y
  CHECK(run(s, "control schedule.stage-tensor 2") == "");
  CHECK(s.controls.schedule.stage_tensor == 2);
  CHECK(run(s, "control schedule.stage-level registers") == "");
  CHECK(s.controls.schedule.stage_level == 2);
  CHECK(run(s, "control schedule.stage-at 1") == "");
  CHECK(s.controls.schedule.stage_at == 1);
  CHECK(run(s, "control schedule.layout-tensor 1") == "");
  CHECK(s.controls.schedule.layout_tensor == 1);
  CHECK(run(s, "control schedule.layout nhwc") == "");
  CHECK(s.controls.schedule.layout_kind == 3);
  CHECK(run(s, "control schedule.group 64") == "");
  CHECK(s.controls.schedule.block_group == 64);
  CHECK(run(s, "control palette.open on") == "");
  CHECK(s.controls.palette.open);
  CHECK(run(s, "control palette.name x2") == "");
  CHECK(s.controls.palette.name == "x2");
  CHECK(run(s, "control palette.dims 64, 128") == "");
  CHECK(s.controls.palette.dims == "64, 128");
  CHECK(run(s, "control palette.dtype bf16") == "");
  CHECK(s.controls.palette.dtype == 2);
  CHECK(run(s, "control palette.args padding=1 stride=2") == "");
  CHECK(s.controls.palette.args == "padding=1 stride=2");
  CHECK(run(s, "control palette.args") == "");  // a text control may be emptied
  CHECK(s.controls.palette.args.empty());
  CHECK(run(s, "control occupancy.threads 256") == "");
  CHECK(s.controls.views.occupancy_threads == 256);
  CHECK(run(s, "control occupancy.registers 128") == "");
  CHECK(s.controls.views.occupancy_registers == 128);
  CHECK(run(s, "control occupancy.smem 49152") == "");
  CHECK(s.controls.views.occupancy_smem == 49152);
  // Nothing else moved: a control is a setting, not a step or an edit.
  CHECK(s.model.text == kModel);
  CHECK(s.workbench.steps_text().empty());
}

TEST_CASE("control refuses what the widgets could not show, and names the choices") {
  // The slider runs 1 … 8 (tile factors 2 … 256), the group field 1 … 64.
  CHECK_THROWS_WITH_AS(parse_command("control schedule.tile-log2 9"),
                       "control schedule.tile-log2: expected a whole number from 1 to 8, got '9'",
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control schedule.tile-log2 0"),
                       doctest::Contains("from 1 to 8"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control schedule.group 65"),
                       doctest::Contains("from 1 to 64, got '65'"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control schedule.group 2.5"),
                       doctest::Contains("whole number"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control schedule.stage-at -1"),
                       doctest::Contains("from 0 to"), CommandError);
  // Registers per thread stop at 255 (every GPU's most); threads and shared memory go past every
  // GPU's limits, so the panel can say why such a block cannot run.
  CHECK_THROWS_WITH_AS(parse_command("control occupancy.registers 256"),
                       doctest::Contains("from 0 to 255, got '256'"), CommandError);
  CHECK_NOTHROW(parse_command("control occupancy.threads 2048"));
  CHECK_THROWS_WITH_AS(parse_command("control occupancy.threads -32"),
                       doctest::Contains("from 0 to 4096"), CommandError);
  CHECK_THROWS_WITH_AS(
      parse_command("control schedule.bind warp.x"),
      "control schedule.bind: expected one of block.x, block.y, block.z, thread.x, thread.y, "
      "thread.z, got 'warp.x'",
      CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control palette.open yes"),
                       "control palette.open: expected on or off, got 'yes'", CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control palette.name " + std::string(64, 'n')),
                       "control palette.name: at most 63 bytes, got 64", CommandError);
  CHECK_NOTHROW(parse_command("control palette.name " + std::string(63, 'n')));
  CHECK_THROWS_WITH_AS(parse_command("control palette.dims 4\\n5"),
                       doctest::Contains("without line breaks"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control palette.colour red"),
                       doctest::Contains("no control named 'palette.colour' (known: "
                                         "schedule.tile-log2, schedule.bind"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("control"), doctest::Contains("control: needs a name"),
                       CommandError);
  // A script's bad control fails when the script is read, at its line.
  CHECK_THROWS_WITH_AS(parse_script("fit\ncontrol schedule.group 0\n", "s.txt"),
                       doctest::Contains("s.txt:2: "), CommandError);
  // A refusal at apply time (a view's command is not parsed) leaves the controls as they were.
  AppState s = state_for(kModel);
  Command c;
  c.kind = CommandKind::Control;
  c.text = "schedule.tile-log2 12";
  CHECK(apply_command(s, c) != "");
  CHECK(s.controls.schedule.tile_log2 == 4);
}

TEST_CASE("control commands print back to the line they came from") {
  for (const char* line : {"control schedule.tile-log2 5", "control schedule.bind thread.x",
                           "control palette.open off", "control palette.args padding=1 stride=2",
                           "control palette.name a\\\\b", "control palette.dims"}) {
    CAPTURE(line);
    CHECK(command_to_string(parse_command(line)) == line);
  }
  // A backslash survives the trip: the line "a\\b" is the name a\b.
  AppState s = state_for(kModel);
  CHECK(run(s, "control palette.name a\\\\b") == "");
  CHECK(s.controls.palette.name == "a\\b");
}

TEST_CASE("panel_control_values lists every control, and reads back to the same controls") {
  PanelControls c;
  c.schedule.tile_log2 = 7;
  c.schedule.bind_target = 5;
  c.schedule.stage_tensor = 3;
  c.schedule.stage_level = 1;
  c.schedule.stage_at = 2;
  c.schedule.layout_tensor = 1;
  c.schedule.layout_kind = 2;
  c.schedule.block_group = 16;
  c.schedule.reorder = "k, i, j";
  c.schedule.compute_producer = 1;
  c.schedule.compute_at = 2;
  c.schedule.pad_target = 4;
  c.schedule.pad_dim = 1;
  c.schedule.pad_amount = 8;
  c.palette.open = true;
  c.palette.name = "bias";
  c.palette.dims = "256";
  c.palette.dtype = 3;
  c.palette.args = "dim=1";
  c.views.measured_run = 3;
  c.views.timings_report = 2;
  c.views.occupancy_threads = 512;
  c.views.occupancy_registers = 64;
  c.views.occupancy_smem = 1024;
  const auto values = panel_control_values(c);
  // 14 schedule controls, 5 of the palette, 1 of the Memory view, 1 of the Timings view, 3 of the
  // occupancy calculator
  REQUIRE(values.size() == 24);
  CHECK(values[0] == std::pair<std::string, std::string>{"schedule.tile-log2", "7"});
  CHECK(values[1] == std::pair<std::string, std::string>{"schedule.bind", "thread.z"});
  CHECK(values[3] == std::pair<std::string, std::string>{"schedule.stage-level", "scratchpad"});
  CHECK(values[6] == std::pair<std::string, std::string>{"schedule.layout", "nchw"});
  CHECK(values[8] == std::pair<std::string, std::string>{"schedule.reorder", "k, i, j"});
  CHECK(values[9] == std::pair<std::string, std::string>{"schedule.compute-producer", "1"});
  CHECK(values[10] == std::pair<std::string, std::string>{"schedule.compute-at", "2"});
  CHECK(values[11] == std::pair<std::string, std::string>{"schedule.pad-target", "4"});
  CHECK(values[12] == std::pair<std::string, std::string>{"schedule.pad-dim", "1"});
  CHECK(values[13] == std::pair<std::string, std::string>{"schedule.pad-amount", "8"});
  CHECK(values[14] == std::pair<std::string, std::string>{"palette.open", "on"});
  CHECK(values[17] == std::pair<std::string, std::string>{"palette.dtype", "int8"});
  CHECK(values[19] == std::pair<std::string, std::string>{"memory.measured-run", "3"});
  CHECK(values[20] == std::pair<std::string, std::string>{"timings.report", "2"});
  CHECK(values[21] == std::pair<std::string, std::string>{"occupancy.threads", "512"});
  CHECK(values[22] == std::pair<std::string, std::string>{"occupancy.registers", "64"});
  CHECK(values[23] == std::pair<std::string, std::string>{"occupancy.smem", "1024"});
  // Out of range: a pad of 0 elements, a dimension past any tensor's.
  CHECK(set_panel_control(c, "schedule.pad-amount", "0").find("from 1 to 64") != std::string::npos);
  CHECK(set_panel_control(c, "schedule.pad-dim", "8").find("from 0 to 7") != std::string::npos);
  PanelControls back;
  for (const auto& [name, value] : values) CHECK(set_panel_control(back, name, value) == "");
  CHECK(panel_control_values(back) == values);
}

TEST_CASE("a session keeps the panel controls, and skips one it cannot use") {
  AppState s = state_for(kModel);
  REQUIRE(run(s, "control schedule.tile-log2 3") == "");
  REQUIRE(run(s, "control palette.open on") == "");
  REQUIRE(run(s, "control palette.name bias") == "");
  REQUIRE(run(s, "control occupancy.registers 96") == "");
  const nlohmann::json j = session_to_json(s);
  CHECK(j["controls"]["schedule.tile-log2"] == "3");
  CHECK(j["controls"]["palette.open"] == "on");
  AppState restored;
  CHECK(session_from_json(restored, j) == "");
  CHECK(restored.controls.schedule.tile_log2 == 3);
  CHECK(restored.controls.palette.open);
  CHECK(restored.controls.palette.name == "bias");
  CHECK(restored.controls.schedule.block_group == 8);
  CHECK(restored.controls.views.occupancy_registers == 96);

  // A session from before the controls: they stay at their first values.
  nlohmann::json old = j;
  old.erase("controls");
  AppState from_old;
  CHECK(session_from_json(from_old, old) == "");
  CHECK(from_old.controls.schedule.tile_log2 == 4);

  // One bad control is skipped, named; the others come back.
  nlohmann::json bad = j;
  bad["controls"]["schedule.group"] = "0";
  bad["controls"]["schedule.bind"] = 5;
  bad["controls"]["future.knob"] = "x";
  AppState partly;
  const std::string msg = session_from_json(partly, bad);
  CHECK(msg.find("control schedule.bind is a number, not a string") != std::string::npos);
  CHECK(msg.find("skipped control schedule.group: expected a whole number from 1 to 64, got '0'") !=
        std::string::npos);
  CHECK(msg.find("no control named 'future.knob'") != std::string::npos);
  CHECK(partly.controls.schedule.tile_log2 == 3);
  CHECK(partly.controls.schedule.block_group == 8);
  nlohmann::json not_object = j;
  not_object["controls"] = nlohmann::json::array();
  AppState arr;
  CHECK(session_from_json(arr, not_object) == "skipped controls is an array, not an object");
}

TEST_CASE("the palette's outline follows the model text once a frame") {
  AppState s = state_for(kModel);
  REQUIRE(s.outline_text == std::string(kModel));
  CHECK(named_tensors(s.outline) == std::vector<std::string>{"x", "W", "y"});
  REQUIRE(run(s, "palette input b 4") == "");
  update_state(s);  // the frame after the edit
  CHECK(s.outline_text == s.model.text);
  const std::vector<std::string> named = named_tensors(s.outline);
  CHECK(named.size() == 4);
  CHECK(std::find(named.begin(), named.end(), "b") != named.end());
}
