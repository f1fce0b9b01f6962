// Recorded measurements (assets/recorded/*.json) as lesson checks read them: recorded(FILE, QUERY),
// and the folders a lesson's relative paths are looked for in.
#pragma once

#include "sim/lesson/value.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::lesson {

// A recorded file that cannot be read, is not JSON, or has nothing at the query's path; what()
// says which, naming the file and the part of the query that failed.
class RecordedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Path of a file a lesson names (recorded measurements, models): relative to the lesson's folder,
// else its parent (a lesson in lessons/ names "assets/recorded/…"), else the source tree; an
// absolute path as given. A lesson is a file from a stranger, so the file must lie in one of
// lesson_file_roots() once links and ".." are resolved: `recorded("/etc/shadow", …)` printed a
// secret, and errors quoted lines of any file (issue #25). Throws RecordedError for a file
// outside them, without looking at whether it exists. A file that does not exist comes back as
// its first in-bounds candidate, for the reader to say so.
std::string resolve_lesson_path(const std::string& path, const std::string& lesson_file);

// The folders a lesson may read files from: its own folder (and below) and tilescope's assets
// (recordings, models, machines) in the source tree.
std::vector<std::string> lesson_file_roots(const std::string& lesson_file);

// The number, string or list at `query` in the JSON file at `path` (read capped at
// io::kMaxRecordingBytes). Query parts are separated by '/': "key", "3" (an index) or "key=value"
// (the element of a list whose key equals value, compared as text or as a number). A boolean
// reads as 1 or 0; a list as a list, its objects and lists as their JSON text. Throws
// RecordedError.
Value recorded_value(const std::string& path, const std::string& query);

}  // namespace tilescope::lesson
