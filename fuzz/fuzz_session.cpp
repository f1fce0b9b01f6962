// libFuzzer harness for session files: any bytes in, through the JSON parser, the field type
// checks and the whole restore (model parse, lowering, schedule steps, machine, view) into a fresh
// AppState, then saved back to text. A message is a correct answer; anything else (a crash, an
// exception out of session_from_json, a sanitizer report, a hang) is a bug.
//
// Build and run (new inputs go to the first folder, which .gitignore keeps out of the tree):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_session
//   build/fuzz/fuzz/fuzz_session -max_total_time=600 -rss_limit_mb=2048 -timeout=10 \
//       fuzz/corpus-run/session fuzz/corpus-session
#include "app/core/app_state.h"
#include "app/core/session.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>

using namespace tilescope::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As restore_session reads it: no exceptions from the parser, a bad document is discarded.
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  const SessionFields fields = check_session_fields(j);
  AppState state;
  const std::string problems = session_from_json(state, j);
  // A document check_session_fields refuses must change nothing and say why.
  if (!fields.unreadable.empty() && (problems.empty() || state.model.graph)) __builtin_trap();
  // Whatever was restored must save again (the autosave runs on the next frame).
  if (session_text(state).empty()) __builtin_trap();
  return 0;
}
