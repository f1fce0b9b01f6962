// Recorded measurements for lesson checks: a capped JSON read and the path query of recorded();
// where a lesson's relative paths are looked for.
#include "sim/lesson/recorded.h"

#include "build_paths.h"

#include "sim/io/input.h"
#include "sim/io/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace tilescope::lesson {

namespace {

std::string join(const std::vector<std::string>& v, size_t limit = 12) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > limit) s += ", ...";
  return s;
}

}  // namespace

std::vector<std::string> lesson_file_roots(const std::string& lesson_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(lesson_file).parent_path();
  std::vector<std::string> roots;
  for (const fs::path& root :
       {dir.empty() ? fs::path(".") : dir, fs::path(TILESCOPE_SOURCE_DIR) / "assets"}) {
    const fs::path real = fs::weakly_canonical(fs::absolute(root, ec), ec);
    if (!ec) roots.push_back(real.string());
  }
  return roots;
}

std::string resolve_lesson_path(const std::string& path, const std::string& lesson_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::vector<std::string> roots = lesson_file_roots(lesson_file);
  const auto inside = [&](const fs::path& p) {
    const fs::path real = fs::weakly_canonical(fs::absolute(p, ec), ec);
    if (ec) return std::string();
    for (const std::string& root : roots) {
      const fs::path rel = real.lexically_relative(root);
      if (!rel.empty() && *rel.begin() != "..") return real.string();
    }
    return std::string();
  };
  const fs::path dir = fs::path(lesson_file).parent_path();
  std::vector<fs::path> candidates;
  if (fs::path(path).is_absolute())
    candidates = {fs::path(path)};
  else
    candidates = {dir / path, dir / ".." / path, fs::path(TILESCOPE_SOURCE_DIR) / path};
  // Only candidates inside the roots are looked at, so a lesson cannot even learn whether a file
  // elsewhere exists.
  std::string first_inside;
  for (const fs::path& c : candidates) {
    const std::string real = inside(c);
    if (real.empty()) continue;
    if (first_inside.empty()) first_inside = real;
    if (fs::exists(real, ec)) return real;
  }
  if (!first_inside.empty()) return first_inside;
  std::string where;
  for (const std::string& r : roots) where += (where.empty() ? "" : ", ") + r;
  throw RecordedError("'" + io::printable(path) +
                      "' is outside the folders a lesson may read files from (its own folder "
                      "and tilescope's assets: " +
                      io::printable(where, 400) + ")");
}

Value recorded_value(const std::string& path, const std::string& query) {
  // Capped: the path is the lesson author's, and /dev/zero or a huge log must fail the check,
  // not fill memory.
  const io::TextInput input = io::read_text_input(path, io::kMaxRecordingBytes, "a recorded file");
  if (!input.ok) throw RecordedError(input.error);
  io::JsonInput parsed = io::parse_json(input.text);
  if (!parsed.ok)
    throw RecordedError("'" + io::printable(path) + "' is not JSON: " +
                        io::printable(parsed.error, 200));
  const nlohmann::json j = std::move(parsed.value);
  const nlohmann::json* node = &j;
  std::string walked;
  size_t begin = 0;
  while (begin <= query.size()) {
    size_t end = query.find('/', begin);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(begin, end - begin);
    begin = end + 1;
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq != std::string::npos) {
      if (!node->is_array())
        throw RecordedError("in " + path + ", '" + walked + "' is not a list to select '" + part +
                            "' from");
      const std::string key = part.substr(0, eq), want = part.substr(eq + 1);
      const nlohmann::json* found = nullptr;
      std::vector<std::string> seen;
      for (const auto& item : *node) {
        if (!item.is_object() || !item.contains(key)) continue;
        const auto& v = item[key];
        std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        seen.push_back(text);
        if (text == want) {
          found = &item;
          break;
        }
      }
      if (!found)
        throw RecordedError("in " + path + ", no element of '" + walked + "' has " + key + "=" +
                            want + " (there are: " + join(seen) + ")");
      node = found;
    } else if (node->is_array()) {
      const bool digits =
          std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoul(part) >= node->size())
        throw RecordedError("in " + path + ", '" + walked + "' is a list of " +
                            std::to_string(node->size()) + "; '" + part +
                            "' is not an index in it");
      node = &(*node)[std::stoul(part)];
    } else if (node->is_object()) {
      if (!node->contains(part)) {
        std::vector<std::string> keys;
        for (auto it = node->begin(); it != node->end(); ++it) keys.push_back(it.key());
        throw RecordedError("in " + path + ", '" + (walked.empty() ? "(top)" : walked) +
                            "' has no key '" + part + "' (keys: " + join(keys) + ")");
      }
      node = &(*node)[part];
    } else {
      throw RecordedError("in " + path + ", '" + walked + "' is a plain value, not a container");
    }
    walked += (walked.empty() ? "" : "/") + part;
  }
  auto scalar = [](const nlohmann::json& n, Value& out) {
    if (n.is_number())
      out = Value::of(n.get<double>());
    else if (n.is_string())
      out = Value::of(n.get<std::string>());
    else if (n.is_boolean())
      out = Value::of(n.get<bool>() ? 1.0 : 0.0);
    else
      return false;
    return true;
  };
  Value v;
  if (scalar(*node, v)) return v;
  // A list reads as a list (so a lesson can count a suite's versions with len()); an element that
  // is itself a list or an object reads as its JSON text.
  if (node->is_array()) {
    v.kind = Value::Kind::List;
    for (const auto& item : *node) {
      Value one;
      if (!scalar(item, one)) one = Value::of(item.dump());
      v.items.push_back(std::move(one));
    }
    return v;
  }
  throw RecordedError("in " + path + ", '" + walked +
                      "' is an object, not a number, a string or a list");
}

}  // namespace tilescope::lesson
