// Formats Hierarchy counters as aligned text tables and as JSON.
#include "sim/memory/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tilescope::memory {

namespace {

std::string tensor_name(int id, const ReportOptions& o) {
  if (id < 0) return "(unknown)";
  if (static_cast<size_t>(id) < o.tensor_names.size()) return o.tensor_names[id];
  std::string name = "t";  // (not "t" + …: GCC 12 -O3 warns falsely on that, -Wrestrict)
  name += std::to_string(id);
  return name;
}

std::string level_name(const Hierarchy& h, int k) {
  return k == h.level_count() ? h.config().memory.name : h.config().levels[k].name;
}

std::string pct(uint64_t a, uint64_t b) {
  if (b == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(a) / static_cast<double>(b));
  return buf;
}

// A minimal column-aligned table: the first column left-aligned, numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { m_rows.push_back(std::move(header)); }
  void row(std::vector<std::string> r) { m_rows.push_back(std::move(r)); }
  std::string str() const {
    std::vector<size_t> w;
    for (const auto& r : m_rows)
      for (size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    std::ostringstream out;
    for (size_t ri = 0; ri < m_rows.size(); ++ri) {
      const auto& r = m_rows[ri];
      for (size_t i = 0; i < r.size(); ++i) {
        if (i) out << "  ";
        std::string pad(w[i] - r[i].size(), ' ');
        out << (i == 0 ? r[i] + pad : pad + r[i]);
      }
      out << "\n";
      if (ri == 0) {
        size_t total = 0;
        for (size_t x : w) total += x + 2;
        out << std::string(total - 2, '-') << "\n";
      }
    }
    return out.str();
  }

 private:
  std::vector<std::vector<std::string>> m_rows;
};

std::string n(uint64_t v) {
  return std::to_string(v);
}

nlohmann::json counters_json(const Counters& c, bool classified) {
  nlohmann::json j = {{"accesses", c.accesses},
                      {"reads", c.reads},
                      {"writes", c.writes},
                      {"hits", c.hits},
                      {"misses", c.misses},
                      {"sector_misses", c.sector_misses},
                      {"evictions", c.evictions},
                      {"writebacks", c.writebacks},
                      {"back_invalidations", c.back_invalidations},
                      {"read_bytes", c.read_bytes},
                      {"write_bytes", c.write_bytes}};
  if (classified) {
    j["compulsory"] = c.compulsory;
    j["capacity"] = c.capacity;
    j["conflict"] = c.conflict;
  }
  return j;
}

}  // namespace

std::string format_report(const Hierarchy& h, const ReportOptions& o) {
  const bool classified = h.options().classify_misses;
  std::ostringstream out;
  out << "Levels\n";
  std::vector<std::string> head = {"level", "config", "accesses", "hits", "misses", "miss rate"};
  if (classified) head.insert(head.end(), {"compulsory", "capacity", "conflict"});
  head.insert(head.end(), {"evictions", "write-backs"});
  Table levels(head);
  for (int k = 0; k < h.level_count(); ++k) {
    const CacheConfig& cfg = h.config().levels[k];
    Counters c = h.counters(k);
    std::string desc = format_bytes(static_cast<double>(cfg.size_bytes)) + " " +
                       (cfg.ways == 0 ? std::string("full") : std::to_string(cfg.ways) + "-way") +
                       " " + std::to_string(cfg.line_bytes) + "B " +
                       replacement_name(cfg.replacement);
    std::vector<std::string> r = {cfg.name,  desc,        n(c.accesses),
                                  n(c.hits), n(c.misses), pct(c.misses, c.accesses)};
    if (classified) r.insert(r.end(), {n(c.compulsory), n(c.capacity), n(c.conflict)});
    r.insert(r.end(), {n(c.evictions), n(c.writebacks)});
    levels.row(r);
  }
  out << levels.str() << "\nTraffic between levels (bytes requested of the lower level)\n";
  Table traffic({"from", "to", "read (fills)", "written", "total"});
  traffic.row(
      {"trace", level_name(h, 0), n(h.counters(0).read_bytes), n(h.counters(0).write_bytes),
       format_bytes(static_cast<double>(h.counters(0).read_bytes + h.counters(0).write_bytes))});
  for (int k = 0; k < h.level_count(); ++k) {
    Counters c = h.counters(k + 1);
    traffic.row({level_name(h, k), level_name(h, k + 1), n(c.read_bytes), n(c.write_bytes),
                 format_bytes(static_cast<double>(c.read_bytes + c.write_bytes))});
  }
  out << traffic.str();

  if (h.max_tensor() >= 0 || h.counters(0, -1).accesses > 0) {
    out << "\nPer tensor\n";
    Table t({"tensor", "level", "accesses", "hits", "misses", "miss rate", "bytes below"});
    for (int id = -1; id <= h.max_tensor(); ++id) {
      if (h.counters(0, id).accesses == 0) continue;
      for (int k = 0; k < h.level_count(); ++k) {
        Counters c = h.counters(k, id);
        Counters below = h.counters(k + 1, id);
        t.row({k == 0 ? tensor_name(id, o) : "", level_name(h, k), n(c.accesses), n(c.hits),
               n(c.misses), pct(c.misses, c.accesses),
               format_bytes(static_cast<double>(below.read_bytes + below.write_bytes))});
      }
    }
    out << t.str();
  }

  if (h.options().reuse_distance) {
    out << "\nReuse distance (distinct sectors between uses; log2 buckets)\n";
    std::vector<std::string> head2 = {"distance"};
    for (int k = 0; k < h.level_count(); ++k) head2.push_back(level_name(h, k));
    Table r(head2);
    int top = 0;
    for (int k = 0; k < h.level_count(); ++k)
      for (int b = 0; b < ReuseDistance::kBuckets; ++b)
        if (h.reuse(k)->histogram()[b]) top = std::max(top, b);
    for (int b = 0; b <= top; ++b) {
      std::string label =
          b <= 1 ? n(ReuseDistance::bucket_low(b))
                 : n(ReuseDistance::bucket_low(b)) + ".." + n(ReuseDistance::bucket_high(b));
      std::vector<std::string> row = {label};
      for (int k = 0; k < h.level_count(); ++k) row.push_back(n(h.reuse(k)->histogram()[b]));
      r.row(row);
    }
    std::vector<std::string> cold = {"cold"};
    for (int k = 0; k < h.level_count(); ++k) cold.push_back(n(h.reuse(k)->cold()));
    r.row(cold);
    out << r.str();
  }

  if (const Scratchpad* s = h.scratchpad(); s && s->stats().requests > 0) {
    const ScratchpadStats& st = s->stats();
    out << "\nScratchpad " << s->config().name << ": " << st.requests << " warp accesses, "
        << st.wavefronts << " wavefronts (ideal " << st.ideal_wavefronts << "), max degree "
        << st.max_degree << "\n";
  }
  return out.str();
}

nlohmann::json report_json(const Hierarchy& h, const ReportOptions& o) {
  const bool classified = h.options().classify_misses;
  nlohmann::json j;
  j["trace_accesses"] = h.trace_accesses();
  j["levels"] = nlohmann::json::array();
  for (int k = 0; k <= h.level_count(); ++k) {
    nlohmann::json l;
    l["name"] = level_name(h, k);
    l["memory"] = k == h.level_count();
    if (k < h.level_count()) {
      const CacheConfig& c = h.config().levels[k];
      l["config"] = {{"size_bytes", c.size_bytes},
                     {"line_bytes", c.line_bytes},
                     {"sector_bytes", c.sector_size()},
                     {"ways", c.ways},
                     {"replacement", replacement_name(c.replacement)},
                     {"write_policy", write_policy_name(c.write_policy)},
                     {"write_allocate", c.write_allocate},
                     {"inclusion", inclusion_name(c.inclusion)}};
    }
    l["total"] = counters_json(h.counters(k), classified && k < h.level_count());
    nlohmann::json per = nlohmann::json::array();
    for (int id = -1; id <= h.max_tensor(); ++id) {
      Counters c = h.counters(k, id);
      if (c.accesses == 0) continue;
      nlohmann::json t = counters_json(c, classified && k < h.level_count());
      t["tensor"] = id;
      t["name"] = tensor_name(id, o);
      per.push_back(t);
    }
    l["tensors"] = per;
    if (k < h.level_count() && h.reuse(k)) {
      const auto& hist = h.reuse(k)->histogram();
      nlohmann::json buckets = nlohmann::json::array();
      for (int b = 0; b < ReuseDistance::kBuckets; ++b)
        if (hist[b])
          buckets.push_back({{"low", ReuseDistance::bucket_low(b)},
                             {"high", ReuseDistance::bucket_high(b)},
                             {"count", hist[b]}});
      l["reuse_distance"] = {{"buckets", buckets}, {"cold", h.reuse(k)->cold()}};
    }
    j["levels"].push_back(l);
  }
  if (const Scratchpad* s = h.scratchpad()) {
    const ScratchpadStats& st = s->stats();
    j["scratchpad"] = {{"name", s->config().name},
                       {"requests", st.requests},
                       {"lane_accesses", st.lane_accesses},
                       {"wavefronts", st.wavefronts},
                       {"ideal_wavefronts", st.ideal_wavefronts},
                       {"max_degree", st.max_degree},
                       {"degree_histogram", st.degree_histogram}};
  }
  return j;
}

}  // namespace tilescope::memory
