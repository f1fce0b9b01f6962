// Bank-conflict degree of warp accesses to a banked scratchpad.
#include "sim/memory/scratchpad.h"

#include <algorithm>
#include <stdexcept>

namespace tilescope::memory {

std::string ScratchpadConfig::check() const {
  if (banks == 0) return "scratchpad " + name + ": banks must be at least 1";
  if (bank_width == 0) return "scratchpad " + name + ": bank width must be at least 1 byte";
  if (warp_size == 0) return "scratchpad " + name + ": warp size must be at least 1";
  if (banks > 1024) return "scratchpad " + name + ": more than 1024 banks is not supported";
  if (bank_width > 1024) return "scratchpad " + name + ": a bank wider than 1 KiB is not supported";
  if (warp_size > 1024) return "scratchpad " + name + ": a warp of more than 1024 lanes is not supported";
  return "";
}

namespace {

// Every distinct (word) touched by the warp, sorted; words are bank_width-byte units.
std::vector<uint64_t> distinct_words(std::span<const LaneAccess> lanes, uint32_t bank_width) {
  std::vector<uint64_t> words;
  words.reserve(lanes.size());
  for (const LaneAccess& l : lanes) {
    if (l.size == 0) continue;
    for (uint64_t w = l.addr / bank_width; w <= (l.addr + l.size - 1) / bank_width; ++w)
      words.push_back(w);
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

}  // namespace

uint32_t bank_conflict_degree(std::span<const LaneAccess> lanes, uint32_t banks,
                              uint32_t bank_width) {
  if (banks == 0 || bank_width == 0)
    throw std::invalid_argument("banks and bank width must be > 0");
  std::vector<uint64_t> words = distinct_words(lanes, bank_width);
  std::vector<uint32_t> per_bank(banks, 0);
  uint32_t degree = 0;
  for (uint64_t w : words) degree = std::max(degree, ++per_bank[w % banks]);
  return degree;
}

uint32_t ideal_wavefronts(std::span<const LaneAccess> lanes, uint32_t banks, uint32_t bank_width) {
  if (banks == 0 || bank_width == 0)
    throw std::invalid_argument("banks and bank width must be > 0");
  uint64_t n = distinct_words(lanes, bank_width).size();
  return static_cast<uint32_t>((n + banks - 1) / banks);
}

Scratchpad::Scratchpad(const ScratchpadConfig& config) : m_config(config) {
  if (std::string err = config.check(); !err.empty()) throw std::invalid_argument(err);
}

uint32_t Scratchpad::warp_access(std::span<const LaneAccess> lanes, bool write) {
  uint32_t degree = bank_conflict_degree(lanes, m_config.banks, m_config.bank_width);
  ++m_stats.requests;
  ++(write ? m_stats.writes : m_stats.reads);
  m_stats.lane_accesses += lanes.size();
  m_stats.wavefronts += degree;
  m_stats.ideal_wavefronts += ideal_wavefronts(lanes, m_config.banks, m_config.bank_width);
  for (const LaneAccess& l : lanes) m_stats.bytes += l.size;
  m_stats.max_degree = std::max(m_stats.max_degree, degree);
  ++m_stats.degree_histogram[std::min<uint32_t>(degree, 32)];
  return degree;
}

}  // namespace tilescope::memory
