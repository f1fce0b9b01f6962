// libFuzzer harness for session files: any bytes in, through the JSON parser, the field type
// checks and the whole restore (model parse, lowering, schedule steps, machine, view, lesson
// player) into a fresh AppState, what the restored view computes first (the Schedule panel's fuse
// buttons), then saved back to text. A message is a correct answer; anything else (a crash, an
// exception out of session_from_json, a sanitizer report, a hang) is a bug.
//
// Build and run from the repository root (the lesson player reads lessons/; new inputs go to the
// first folder, which .gitignore keeps out of the tree; make_seeds.py writes the deep-nesting and
// long-chain seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_session
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_session -dict=fuzz/session.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/session fuzz/corpus-session \
//       fuzz/corpus-run/seeds/session
#include "app/core/app_state.h"
#include "app/core/fuse_options.h"
#include "app/core/session.h"
#include "sim/io/json.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace tilescope::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As restore_session and open-session read it: nesting bounded before parsing (copies of a
  // value recurse once per level), no exceptions, a refused document says why.
  const tilescope::io::JsonInput parsed =
      tilescope::io::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok) {
    if (parsed.error.empty()) __builtin_trap();
    return 0;
  }
  const nlohmann::json& j = parsed.value;
  const SessionFields fields = check_session_fields(j);
  AppState state;
  const std::string problems = session_from_json(state, j);
  // A document check_session_fields refuses must change nothing and say why.
  if (!fields.unreadable.empty() && (problems.empty() || state.model.graph)) __builtin_trap();
  // The first frame draws the restored view: on Schedule and Tiles, the panel's fuse buttons.
  const ViewTab tab = state.workbench.tab;
  if ((tab == ViewTab::Schedule || tab == ViewTab::Tiles) && state.workbench.program())
    (void)fuse_options(state.workbench);
  // Whatever was restored must save again (the autosave runs on the next frame).
  if (session_text(state).empty()) __builtin_trap();
  return 0;
}
