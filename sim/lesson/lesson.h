// Lesson files: Markdown readable on its own, with front matter and machine-readable fenced blocks.
//
//   ---                                  front matter (GitHub shows it as a table)
//   title: From model to graph           required
//   level: beginner                      required: beginner | intermediate | advanced
//   minutes: 15                          required: estimated minutes, 1..120
//   prerequisites: 01-model-to-graph     optional: comma-separated lesson ids (file stems)
//   ---
//   ```model id=tiny                     a model in the model language (or file=PATH, empty body;
//   x: [64, 1024] ...                    or train=OTHER [loss=mse|ce] [lr=0.01]: OTHER's training
//   ```                                  graph)
//   ```steps id=fused model=tiny         schedule steps as `tilescope-cli schedule --apply` takes
//   fuse(matmul0, add0, relu0)           them; from=OTHER_STEPS continues another block's result;
//   ```                                  expect=refused: the last step must be refused
//   ```check model=tiny machine=tiny     one claim per line (check_language.h); model= and
//   flops(matmul0) == 2*64*512*1024      machine= set the defaults for the lines
//   ```
//   <!-- step: load-model -->            a step id for the player; or a `### Step N: title`
//   ### Step 1: Load the model           heading (id "step-N"). Checks belong to the step above.
//
// Other fenced blocks are prose only when their info string is a display language (text, python,
// cpp, ...); anything else is an error, so a misspelt `chek` block is not silently ignored.
#pragma once

#include "sim/lesson/check_language.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

enum class BlockKind { Model, Steps, Check };
const char* block_kind_name(BlockKind);

struct Attribute {
  std::string key, value;
  graph::SourceLoc loc;  // where the key starts
};

struct Block {
  BlockKind kind = BlockKind::Model;
  std::vector<Attribute> attrs;
  std::string body;           // the lines between the fences, each ending in '\n'
  graph::SourceLoc loc;       // the opening fence
  int body_line = 0;          // first body line (1-based)
  std::vector<Check> checks;  // Check blocks: parsed lines
  std::string step;           // the step id this block belongs to ("" before any step)

  const Attribute* attr(const std::string& key) const;
  std::string attr_value(const std::string& key, const std::string& fallback = "") const;
};

struct LessonStep {
  std::string id;
  std::string title;
  graph::SourceLoc loc;
};

struct Lesson {
  std::string file;
  std::string id;  // the file stem unless the front matter gives one
  std::string title;
  std::string level;
  int minutes = 0;
  std::vector<std::string> prerequisites;
  std::string text;  // the whole file
  std::vector<Block> blocks;
  std::vector<LessonStep> steps;
};

// Parses the file's structure: front matter, fenced blocks (check lines parsed too), step markers.
// Names inside blocks are resolved later by the checker. Throws LessonError at file:line:col.
Lesson parse_lesson(std::string_view text, const std::string& file);
Lesson load_lesson_file(const std::string& path);  // a missing file is a LessonError too

// The text for a terminal: front matter as a header line, HTML comments dropped, block info
// strings kept so a reader sees which blocks the checker reads.
std::string render_for_terminal(const Lesson& lesson);

}  // namespace tilescope::lesson
