// Learner quantities with units (see quantity.h): a number, then a suffix looked up in the unit's
// table of prefixes × base names.
#include "sim/lesson/quantity.h"
#include "sim/io/input.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tilescope::lesson {

namespace {

struct Scale {
  const char* prefix;
  double factor;
};

struct UnitSpec {
  const char* name;
  const char* noun;      // "'ms' is not a unit of <noun>"
  const char* expected;  // "a number of bytes, such as ..."
  std::vector<Scale> prefixes;
  std::vector<const char*> bases;  // lower case
  std::vector<Scale> alone;        // prefixes that stand for the unit on their own ("120k")
  double bare;                     // factor of a number typed without a suffix
};

const std::vector<Scale> kBytePrefixes = {{"", 1},
                                          {"k", 1e3},
                                          {"m", 1e6},
                                          {"g", 1e9},
                                          {"t", 1e12},
                                          {"p", 1e15},
                                          {"ki", 1024},
                                          {"mi", 1048576.0},
                                          {"gi", 1073741824.0},
                                          {"ti", 1099511627776.0},
                                          {"pi", 1125899906842624.0}};
const std::vector<Scale> kDecimalPrefixes = {{"", 1},    {"k", 1e3},  {"m", 1e6},
                                             {"g", 1e9}, {"t", 1e12}, {"p", 1e15}};
// U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU both read as micro.
const std::vector<Scale> kTimePrefixes = {
    {"", 1}, {"m", 1e-3}, {"u", 1e-6}, {"\xC2\xB5", 1e-6}, {"\xCE\xBC", 1e-6}, {"n", 1e-9}};
const std::vector<Scale> kNoPrefix = {{"", 1}};
// "48K" is 48 KiB, as machine files and sysfs write sizes (sim/model's parser reads them so).
const std::vector<Scale> kByteAlone = {{"k", 1024.0},
                                       {"m", 1048576.0},
                                       {"g", 1073741824.0},
                                       {"t", 1099511627776.0},
                                       {"p", 1125899906842624.0}};
const std::vector<Scale> kDecimalAlone = {
    {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15}};
const std::vector<Scale> kPercent = {{"", 0.01}};

const std::vector<UnitSpec>& units() {
  static const std::vector<UnitSpec> kUnits = {
      {"",
       "plain numbers",
       "a number, such as '2.5', '4e6', '3k' or '37%'",
       kNoPrefix,
       {"x", "\xC3\x97"},
       kDecimalAlone,
       1},
      {"bytes",
       "bytes",
       "a number of bytes, such as '2.5 MiB', '4e6' or '512 KB'",
       kBytePrefixes,
       {"b", "byte", "bytes"},
       kByteAlone,
       1},
      {"B/s",
       "bandwidth",
       "a bandwidth, such as '4.8 TB/s', '900 GB/s' or '5e12'",
       kBytePrefixes,
       {"b/s", "byte/s", "bytes/s"},
       {},
       1},
      {"s",
       "time",
       "a time, such as '1.2 ms', '350 us' or '0.004' (seconds)",
       kTimePrefixes,
       {"s"},
       {},
       1},
      {"FLOP",
       "FLOPs",
       "a number of FLOPs, such as '1.5 GFLOP', '67e6' or '2G'",
       kDecimalPrefixes,
       {"flop", "flops"},
       kDecimalAlone,
       1},
      {"FLOP/s",
       "FLOP rate",
       "a rate, such as '67 TFLOP/s', '900 GFLOPS' or '5e13'",
       kDecimalPrefixes,
       {"flop/s", "flops"},
       kDecimalAlone,
       1},
      {"x",
       "ratio",
       "a ratio, such as '3x', '2.5' or '4\xC3\x97'",
       kNoPrefix,
       {"x", "\xC3\x97", "times"},
       {},
       1},
      {"%", "percent", "a percentage, such as '37%' or '37'", kPercent, {"%"}, {}, 0.01},
  };
  return kUnits;
}

const UnitSpec* find_unit(const std::string& name) {
  for (const UnitSpec& u : units())
    if (name == u.name) return &u;
  return nullptr;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x80) c = static_cast<char>(std::tolower(c));
  return out;
}

using io::trim;

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// The number at the start of `s` without its thousands commas; `used` is how many bytes it took.
// Empty when `s` does not start with a number.
std::string leading_number(const std::string& s, size_t& used) {
  std::string n;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) n += s[i++];
  size_t digits = 0;
  while (i < s.size()) {
    if (digit(s[i])) {
      n += s[i++];
      ++digits;
    } else if (s[i] == ',' && digits > 0 && i + 3 < s.size() && digit(s[i + 1]) &&
               digit(s[i + 2]) && digit(s[i + 3]) && (i + 4 >= s.size() || !digit(s[i + 4]))) {
      i += 1;  // a thousands separator: exactly three digits follow
    } else {
      break;
    }
  }
  if (i < s.size() && s[i] == '.') {
    n += s[i++];
    while (i < s.size() && digit(s[i])) {
      n += s[i++];
      ++digits;
    }
  }
  if (digits == 0) return "";
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (k < s.size() && digit(s[k])) {
      n += s.substr(i, k - i);
      i = k;
      while (i < s.size() && digit(s[i])) n += s[i++];
    }
  }
  used = i;
  return n;
}

}  // namespace

const std::vector<std::string>& predict_units() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (const UnitSpec& u : units())
      if (*u.name) v.push_back(u.name);
    return v;
  }();
  return kNames;
}

bool is_predict_unit(const std::string& unit) {
  return !unit.empty() && find_unit(unit) != nullptr;
}

Quantity parse_quantity(std::string_view text, const std::string& unit) {
  Quantity q;
  const UnitSpec* u = find_unit(unit);
  if (!u) {
    q.error = "'" + unit + "' is not a unit tilescope knows";
    return q;
  }
  const std::string expected = std::string("type ") + u->expected;
  const std::string s = trim(text);
  if (s.empty()) {
    q.error = "nothing typed: " + expected;
    return q;
  }
  size_t used = 0;
  const std::string number = leading_number(s, used);
  if (number.empty()) {
    q.error = "'" + s + "' does not start with a number: " + expected;
    return q;
  }
  const double v = std::strtod(number.c_str(), nullptr);
  if (!std::isfinite(v)) {
    q.error = "'" + number + "' is too large: " + expected;
    return q;
  }
  const std::string suffix = lower_ascii(trim(std::string_view(s).substr(used)));
  double factor = 0;  // 0: the suffix is not one of the unit's
  if (suffix.empty()) {
    factor = u->bare;
  } else if (!*u->name && suffix == "%") {
    factor = 0.01;  // plain numbers accept "%" as hundredths
  } else {
    for (const Scale& p : u->prefixes)
      for (const char* base : u->bases)
        if (factor == 0 && suffix == std::string(p.prefix) + base) factor = p.factor;
    for (const Scale& p : u->alone)
      if (factor == 0 && suffix == p.prefix) factor = p.factor;
  }
  if (factor == 0) {
    q.error = "'" + trim(std::string_view(s).substr(used)) + "' is not " +
              (*u->name ? std::string("a unit of ") + u->noun
                        : std::string("a suffix of a plain number")) +
              ": " + expected;
    return q;
  }
  // "1e300 PiB" is finite as typed, not once scaled.
  if (!std::isfinite(v * factor)) {
    q.error = "'" + s + "' is too large: " + expected;
    return q;
  }
  q.ok = true;
  q.value = v * factor;
  return q;
}

std::string format_quantity(double value, const std::string& unit) {
  char buf[64];
  auto with = [&](double scaled, const char* suffix, bool space) {
    std::snprintf(buf, sizeof buf, "%.4g%s%s", scaled, space ? " " : "", suffix);
    return std::string(buf);
  };
  const double a = std::fabs(value);
  if (unit == "bytes") {
    static const char* const kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int p = 0;
    while (p < 5 && a >= std::pow(1024.0, p + 1)) ++p;
    return with(value / std::pow(1024.0, p), kBinary[p], true);
  }
  auto decimal = [&](const char* const names[6]) {
    int p = 0;
    while (p < 5 && a >= std::pow(1000.0, p + 1)) ++p;
    return with(value / std::pow(1000.0, p), names[p], true);
  };
  if (unit == "B/s") {
    static const char* const kNames[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    return decimal(kNames);
  }
  if (unit == "FLOP") {
    static const char* const kNames[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
    return decimal(kNames);
  }
  if (unit == "FLOP/s") {
    static const char* const kNames[] = {"FLOP/s",  "kFLOP/s", "MFLOP/s",
                                         "GFLOP/s", "TFLOP/s", "PFLOP/s"};
    return decimal(kNames);
  }
  if (unit == "s") {
    if (a >= 1 || a == 0) return with(value, "s", true);
    if (a >= 1e-3) return with(value * 1e3, "ms", true);
    if (a >= 1e-6) return with(value * 1e6, "\xC2\xB5s", true);
    return with(value * 1e9, "ns", true);
  }
  if (unit == "x") return with(value, "x", false);
  if (unit == "%") return with(value * 100, "%", false);
  return with(value, "", false);
}

}  // namespace tilescope::lesson
