// The benchmark report types: timing summary, relative error, derived rates, and the one place
// that spells the fields of schema "tilescope-bench/1".
#include "kernels/bench_types.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>

namespace tilescope::kernels {

using nlohmann::json;

std::vector<std::string> select_suites(const std::string& request,
                                       const std::vector<std::string>& all,
                                       const std::string& kind) {
  if (request.empty() || request == "all") return all;
  std::vector<std::string> chosen;
  std::size_t start = 0;
  while (start <= request.size()) {
    const std::size_t comma = std::min(request.find(',', start), request.size());
    const std::string name = request.substr(start, comma - start);
    if (std::find(all.begin(), all.end(), name) == all.end()) {
      std::string known;
      for (const std::string& s : all) known += (known.empty() ? "" : ", ") + s;
      throw BenchError("unknown " + kind + " suite '" + name + "': the suites are " + known);
    }
    chosen.push_back(name);
    start = comma + 1;
  }
  return chosen;
}

// [SECTION] Timing summary

bool RepeatRule::enough(int taken, double spent_ms) const {
  if (taken >= std::max(1, repeats)) return true;
  return taken >= std::max(1, min_repeats) && spent_ms > budget_ms;
}

Timing summarise_samples(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::invalid_argument("summarise_samples: no samples to summarise");
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  Timing t;
  t.repeats = static_cast<int>(n);
  t.min_ms = samples_ms.front();
  t.median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  return t;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// [SECTION] Verification

namespace {

template <typename T>
double relative_error_of(const T* got, const T* ref, std::size_t count) {
  double diff2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    const double d = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  if (ref2 == 0.0) return diff2 == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff2 / ref2);
}

}  // namespace

double relative_error(const float* got, const float* ref, std::size_t count) {
  return relative_error_of(got, ref, count);
}

double relative_error(const double* got, const double* ref, std::size_t count) {
  return relative_error_of(got, ref, count);
}

// [SECTION] Derived rates

namespace {

template <typename Results>
auto* find_version(Results& results, int version) {
  auto it = std::find_if(results.begin(), results.end(),
                         [version](const VersionResult& r) { return r.version == version; });
  return it == results.end() ? nullptr : &*it;
}

}  // namespace

void derive_rates(SuiteResult& suite, int reference_version, const PeakRates* peaks) {
  const VersionResult* reference = find_version(suite.results, reference_version);
  const double reference_ms = reference && reference->timing ? reference->timing->median_ms : 0.0;
  const bool memory_bound = suite.bound.value_or("compute") == "memory";
  for (VersionResult& r : suite.results) {
    r.gflops = r.gbps = r.pct_of_peak = r.pct_of_reference = std::nullopt;  // derived afresh
    if (!r.timing || r.timing->median_ms <= 0.0) continue;
    const double ms = r.timing->median_ms;
    r.gflops = suite.flops / (ms * 1e6);
    r.gbps = r.bytes.value_or(suite.min_bytes) / (ms * 1e6);
    if (peaks) {
      const double peak = memory_bound ? peaks->gbps : peaks->gflops_fp32;
      if (peak > 0.0) r.pct_of_peak = 100.0 * (memory_bound ? *r.gbps : *r.gflops) / peak;
    }
    if (reference_ms > 0.0) r.pct_of_reference = 100.0 * reference_ms / ms;
  }
  for (Comparison& c : suite.comparisons) {
    const VersionResult* slow = find_version(suite.results, c.slower);
    const VersionResult* fast = find_version(suite.results, c.faster);
    c.byte_ratio = std::nullopt;
    c.time_ratio = c.min_time_ratio = std::nullopt;
    if (slow && fast && slow->bytes && fast->bytes)
      c.byte_ratio = *slow->bytes / std::max(1.0, *fast->bytes);
    if (slow && fast && slow->timing && fast->timing) {
      c.time_ratio = slow->timing->median_ms / fast->timing->median_ms;
      // Interference from other processes only ever adds time, so on a shared machine the ratio
      // of the fastest runs is the steadier of the two.
      c.min_time_ratio = slow->timing->min_ms / fast->timing->min_ms;
    }
  }
}

int unverified_count(const BenchReport& report) {
  int count = 0;
  for (const SuiteResult& suite : report.suites)
    for (const VersionResult& r : suite.results) count += r.verified ? 0 : 1;
  return count;
}

// [SECTION] JSON
//
// Every field name of the schema appears in this section and nowhere else in the benches.

namespace {

template <typename T>
void put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

json number_or_null(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? json(*value) : json(nullptr);
}

// Reads one JSON object's fields, each at most once; what no one asked for are its details.
class Fields {
 public:
  Fields(const json& object, std::string where) : m_where(std::move(where)) {
    if (!object.is_object()) throw BenchSchemaError(m_where + " must be a JSON object");
    m_rest = object;
  }
  const std::string& where() const { return m_where; }
  void set_where(std::string where) { m_where = std::move(where); }

  std::optional<json> take(const char* key) {
    const auto it = m_rest.find(key);
    if (it == m_rest.end()) return std::nullopt;
    std::optional<json> value = std::move(*it);
    m_rest.erase(it);
    return value;
  }
  bool has(const char* key) const { return m_rest.contains(key); }

  std::string need_string(const char* key) {
    const auto v = take(key);
    if (!v || !v->is_string()) fail("needs a string", key);
    return v->get<std::string>();
  }
  int need_int(const char* key) {
    const auto v = take(key);
    if (!v || !v->is_number_integer()) fail("needs an integer", key);
    return v->get<int>();
  }
  double need_number(const char* key) {
    const auto v = take(key);
    if (!v || !v->is_number()) fail("needs a number", key);
    return v->get<double>();
  }
  bool need_bool(const char* key) {
    const auto v = take(key);
    if (!v || !v->is_boolean()) fail("needs a boolean", key);
    return v->get<bool>();
  }
  json need_array(const char* key) {
    const auto v = take(key);
    if (!v || !v->is_array()) fail("needs an array", key);
    return *v;
  }

  // Absent (or null, for numbers) reads as empty; present with another type is an error.
  std::optional<std::string> string(const char* key) {
    const auto v = take(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail("needs a string (or no field)", key);
    return v->get<std::string>();
  }
  std::optional<double> number(const char* key) {
    const auto v = take(key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_number()) fail("needs a number, null or no field", key);
    return v->get<double>();
  }
  std::optional<int> integer(const char* key) {
    const auto v = take(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) fail("needs an integer (or no field)", key);
    return v->get<int>();
  }
  std::optional<bool> boolean(const char* key) {
    const auto v = take(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail("needs a boolean (or no field)", key);
    return v->get<bool>();
  }
  std::optional<json> object(const char* key) {
    const auto v = take(key);
    if (!v) return std::nullopt;
    if (!v->is_object()) fail("needs an object (or no field)", key);
    return v;
  }

  json rest() const { return m_rest; }

 private:
  [[noreturn]] void fail(const char* what, const char* key) const {
    throw BenchSchemaError(m_where + " " + what + " \"" + key + "\"");
  }
  std::string m_where;
  json m_rest;
};

VersionResult read_version(const json& j, const std::string& where) {
  Fields f(j, where);
  VersionResult r;
  r.version = f.need_int("version");
  r.name = f.need_string("name");
  r.verified = f.need_bool("verified");
  r.changed = f.string("changed").value_or("");
  r.source = f.string("source").value_or("hand");
  r.compiled = f.string("compiled");
  r.bytes = f.number("bytes");
  r.multithreaded = f.boolean("multithreaded");
  r.rel_error = f.number("rel_error");
  if (r.verified && !(f.has("median_ms") && j["median_ms"].is_number()))
    throw BenchSchemaError(where + " is verified but has no number \"median_ms\"");
  if (f.has("median_ms")) {
    Timing t;
    t.median_ms = f.need_number("median_ms");
    t.min_ms = f.need_number("min_ms");
    t.repeats = f.need_int("repeats");
    r.timing = t;
  }
  r.gflops = f.number("gflops");
  r.gbps = f.number("gbps");
  r.pct_of_peak = f.number("pct_of_peak");
  r.pct_of_reference = f.number("pct_of_reference");
  r.note = f.string("note");
  r.steps = f.string("steps");
  r.jit_command = f.string("jit_command");
  r.cache_key = f.string("cache_key");
  r.cache_hit = f.boolean("cache_hit");
  r.compile_seconds = f.number("compile_seconds");
  r.details = f.rest();
  return r;
}

Comparison read_comparison(const json& j, const std::string& where) {
  Fields f(j, where);
  Comparison c;
  c.label = f.need_string("label");
  c.slower = f.need_int("slower");
  c.faster = f.need_int("faster");
  c.time_ratio = f.number("time_ratio");
  c.min_time_ratio = f.number("min_time_ratio");
  c.byte_ratio = f.number("byte_ratio");
  return c;
}

// The first GPU spelling: {what, slower, faster, speedup}, speedup being the median time ratio.
Comparison read_legacy_ratio(const json& j, const std::string& where) {
  Fields f(j, where);
  Comparison c;
  c.label = f.need_string("what");
  c.slower = f.need_int("slower");
  c.faster = f.need_int("faster");
  c.time_ratio = f.number("speedup");
  return c;
}

SuiteResult read_suite(const json& j, const std::string& index) {
  Fields f(j, index);
  SuiteResult s;
  s.name = f.need_string("name");
  f.set_where(index + " (" + s.name + ")");
  const json results = f.need_array("results");
  s.error = f.string("error");
  if (!s.error) {
    s.problem = f.need_string("problem");
    s.reference = f.need_string("reference");
    s.flops = f.need_number("flops");
    s.min_bytes = f.need_number("min_bytes");
  }
  if (const auto sizes = f.object("sizes")) s.sizes = *sizes;
  s.bound = f.string("bound");
  s.tolerance = f.number("tolerance");
  s.rotations = f.integer("rotations");
  s.sm_clock_mhz_after = f.integer("sm_clock_mhz_after");
  for (std::size_t i = 0; i < results.size(); ++i)
    s.results.push_back(read_version(results[i], index + ".results[" + std::to_string(i) + "]"));
  const auto comparisons = f.take("comparisons");
  const auto legacy = f.take("ratios");  // derived from "comparisons" whenever both are present
  if (comparisons) {
    if (!comparisons->is_array())
      throw BenchSchemaError(f.where() + ": \"comparisons\" must be an array");
    for (std::size_t i = 0; i < comparisons->size(); ++i)
      s.comparisons.push_back(
          read_comparison((*comparisons)[i], index + ".comparisons[" + std::to_string(i) + "]"));
  } else if (legacy) {
    if (!legacy->is_array()) throw BenchSchemaError(f.where() + ": \"ratios\" must be an array");
    for (std::size_t i = 0; i < legacy->size(); ++i)
      s.comparisons.push_back(
          read_legacy_ratio((*legacy)[i], index + ".ratios[" + std::to_string(i) + "]"));
  }
  s.details = f.rest();
  return s;
}

json legacy_ratios(const SuiteResult& s) {
  json ratios = json::array();
  for (const Comparison& c : s.comparisons)
    if (c.time_ratio)
      ratios.push_back({{"what", c.label},
                        {"slower", c.slower},
                        {"faster", c.faster},
                        {"speedup", *c.time_ratio}});
  return ratios;
}

}  // namespace

void to_json(json& j, const VersionResult& r) {
  j = r.details.is_object() ? r.details : json::object();
  j["version"] = r.version;
  j["name"] = r.name;
  j["changed"] = r.changed;
  j["source"] = r.source;
  put(j, "compiled", r.compiled);
  put(j, "bytes", r.bytes);
  put(j, "multithreaded", r.multithreaded);
  j["verified"] = r.verified;
  j["rel_error"] = number_or_null(r.rel_error);
  if (r.timing) {
    j["median_ms"] = r.timing->median_ms;
    j["min_ms"] = r.timing->min_ms;
    j["repeats"] = r.timing->repeats;
  }
  put(j, "gflops", r.gflops);
  put(j, "gbps", r.gbps);
  put(j, "pct_of_peak", r.pct_of_peak);
  put(j, "pct_of_reference", r.pct_of_reference);
  put(j, "note", r.note);
  put(j, "steps", r.steps);
  put(j, "jit_command", r.jit_command);
  put(j, "cache_key", r.cache_key);
  put(j, "cache_hit", r.cache_hit);
  put(j, "compile_seconds", r.compile_seconds);
}

void to_json(json& j, const Comparison& c) {
  j = {{"label", c.label},
       {"slower", c.slower},
       {"faster", c.faster},
       {"time_ratio", number_or_null(c.time_ratio)},
       {"min_time_ratio", number_or_null(c.min_time_ratio)},
       {"byte_ratio", number_or_null(c.byte_ratio)}};
}

void to_json(json& j, const SuiteResult& s) {
  j = s.details.is_object() ? s.details : json::object();
  j["name"] = s.name;
  j["results"] = s.results;
  if (s.error) {  // a suite that never ran has nothing else to say
    j["error"] = *s.error;
    return;
  }
  j["problem"] = s.problem;
  j["reference"] = s.reference;
  if (!s.sizes.is_null()) j["sizes"] = s.sizes;
  j["flops"] = s.flops;
  j["min_bytes"] = s.min_bytes;
  put(j, "bound", s.bound);
  put(j, "tolerance", s.tolerance);
  put(j, "rotations", s.rotations);
  put(j, "sm_clock_mhz_after", s.sm_clock_mhz_after);
  j["comparisons"] = s.comparisons;
}

void to_json(json& j, const BenchReport& report) {
  j = report.details.is_object() ? report.details : json::object();
  j["schema"] = kBenchSchema;
  j["kind"] = report.kind;
  put(j, "date", report.date);
  if (report.host) {
    const HostDescription& h = *report.host;
    json host = {{"cpu", h.cpu}, {"cores", h.cores}};
    put(host, "caches", h.caches);
    put(host, "vector_isa", h.vector_isa);
    put(host, "load_average_before", h.load_average_before);
    put(host, "load_average_after", h.load_average_after);
    j["host"] = host;
  }
  put(j, "device", report.device);
  put(j, "compiler", report.compiler);
  put(j, "flags", report.flags);
  put(j, "quick", report.quick);
  if (report.peaks)
    j["peaks"] = {{"gflops_fp32", report.peaks->gflops_fp32}, {"gbps", report.peaks->gbps}};
  put(j, "peaks_source", report.peaks_source);
  json suites = json::array();
  for (const SuiteResult& s : report.suites) {
    json suite = s;
    if (report.kind == "gpu" && !s.error) {
      json ratios = legacy_ratios(s);
      if (!ratios.empty()) suite["ratios"] = std::move(ratios);
    }
    suites.push_back(std::move(suite));
  }
  j["suites"] = std::move(suites);
}

void from_json(const json& j, BenchReport& report) {
  if (!j.is_object()) throw BenchSchemaError("the report is not a JSON object");
  Fields f(j, "the report");
  const auto schema = f.take("schema");
  if (!schema || *schema != kBenchSchema)
    throw BenchSchemaError(std::string("field \"schema\" must be \"") + kBenchSchema + "\"");
  const auto kind = f.take("kind");
  if (!kind || (*kind != "cpu" && *kind != "gpu"))
    throw BenchSchemaError("field \"kind\" must be \"cpu\" or \"gpu\"");
  const auto suites = f.take("suites");
  if (!suites || !suites->is_array()) throw BenchSchemaError("field \"suites\" must be an array");

  BenchReport r;
  r.kind = kind->get<std::string>();
  for (std::size_t i = 0; i < suites->size(); ++i)
    r.suites.push_back(read_suite((*suites)[i], "suites[" + std::to_string(i) + "]"));
  r.date = f.string("date");
  if (const auto host = f.object("host")) {
    Fields h(*host, "host");
    HostDescription d;
    d.cpu = h.need_string("cpu");
    d.cores = h.need_int("cores");
    d.caches = h.string("caches");
    d.vector_isa = h.string("vector_isa");
    d.load_average_before = h.string("load_average_before");
    d.load_average_after = h.string("load_average_after");
    if (!h.rest().empty())
      throw BenchSchemaError("host has an unknown field \"" + h.rest().begin().key() + "\"");
    r.host = d;
  }
  r.device = f.object("device");
  r.compiler = f.string("compiler");
  r.flags = f.string("flags");
  r.quick = f.boolean("quick");
  if (const auto peaks = f.object("peaks")) {
    Fields p(*peaks, "peaks");
    r.peaks = PeakRates{p.need_number("gflops_fp32"), p.need_number("gbps")};
    if (!p.rest().empty())
      throw BenchSchemaError("peaks has an unknown field \"" + p.rest().begin().key() + "\"");
  }
  r.peaks_source = f.string("peaks_source");
  r.details = f.rest();
  report = std::move(r);
}

// [SECTION] Host

std::string host_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

}  // namespace tilescope::kernels
