// The curriculum's concepts and the steps that teach them. lessons/concepts.txt lists each concept
// once (a key, its source, the text); a step marker's `teaches=KEY,...` says which concepts the
// step lets a learner do and measure. concept_table() turns the two into the Markdown table of
// lessons/README.md, so the table is made from the lessons, never typed
// (`tilescope-cli lesson concepts`, scripts/lesson-counts.sh).
#pragma once

#include "sim/lesson/lesson.h"

#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

struct Concept {
  std::string key;     // "split-k": what teaches= names
  std::string source;  // "000", "001", "both" (the two source documents) or "review"
  std::string text;    // the table's first column
  graph::SourceLoc loc;
};

// Lines `KEY | SOURCE | TEXT`; blank lines and lines starting with '#' are skipped. Throws
// LessonError at file:line:col for a malformed line, an unknown source or a key given twice.
std::vector<Concept> parse_concepts(std::string_view text, const std::string& file);
std::vector<Concept> load_concepts_file(const std::string& path);

// The table, header first: one row per concept in the file's order, each linking every step
// that teaches it, in lesson and step order ("[11 · split-k](11-batch-size.md)"). Throws
// LessonError at a step's teaches= naming a key the file lacks, and at a concept no step teaches.
std::string concept_table(const std::vector<Concept>& concepts,
                          const std::vector<Lesson>& lessons);

}  // namespace tilescope::lesson
