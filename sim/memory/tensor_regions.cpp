// Address-range → tensor labelling for traces without tensor ids.
#include "sim/memory/tensor_regions.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace tilescope::memory {

namespace {
bool parse_number(std::string_view s, uint64_t& out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

TensorRegion parse_tensor_region(const std::string& text) {
  size_t eq = text.find('='), plus = text.find('+');
  if (eq == std::string::npos || plus == std::string::npos || plus < eq || eq == 0)
    throw std::invalid_argument("tensor region '" + text +
                                "' is not NAME=BASE+BYTES (e.g. A=0x1000+4096)");
  TensorRegion r;
  r.name = text.substr(0, eq);
  if (!parse_number(std::string_view(text).substr(eq + 1, plus - eq - 1), r.base))
    throw std::invalid_argument("tensor region '" + text + "': base is not a number");
  if (!parse_number(std::string_view(text).substr(plus + 1), r.bytes) || r.bytes == 0)
    throw std::invalid_argument("tensor region '" + text + "': size is not a positive number");
  // base + bytes would wrap past 2^64 and the region would seem to end before it starts, so the
  // overlap check and the lookup would accept and mislabel it.
  if (r.bytes > UINT64_MAX - r.base)
    throw std::invalid_argument("tensor region '" + text +
                                "' ends past the top of the 64-bit address space (base + size > "
                                "0xffffffffffffffff)");
  return r;
}

TensorRegionSink::TensorRegionSink(std::vector<TensorRegion> regions, AccessSink& next)
    : m_regions(std::move(regions)), m_next(next) {
  if (m_regions.size() > 32767) throw std::invalid_argument("too many tensor regions");
  m_order.resize(m_regions.size());
  for (size_t i = 0; i < m_order.size(); ++i) m_order[i] = i;
  std::sort(m_order.begin(), m_order.end(),
            [&](size_t a, size_t b) { return m_regions[a].base < m_regions[b].base; });
  for (const TensorRegion& r : m_regions)
    if (r.bytes > UINT64_MAX - r.base)
      throw std::invalid_argument("tensor region " + r.name +
                                  " ends past the top of the 64-bit address space");
  for (size_t i = 1; i < m_order.size(); ++i) {
    const TensorRegion& p = m_regions[m_order[i - 1]];
    const TensorRegion& q = m_regions[m_order[i]];
    if (p.bytes > q.base - p.base)  // p's end passes q's start; q.base >= p.base (sorted)
      throw std::invalid_argument("tensor regions " + p.name + " and " + q.name + " overlap");
  }
}

int16_t TensorRegionSink::lookup(uint64_t addr) const {
  // Last region starting at or before addr.
  auto it = std::upper_bound(m_order.begin(), m_order.end(), addr,
                             [&](uint64_t a, size_t i) { return a < m_regions[i].base; });
  if (it == m_order.begin()) return -1;
  const TensorRegion& r = m_regions[*(it - 1)];
  return addr < r.base + r.bytes ? static_cast<int16_t>(*(it - 1)) : -1;
}

void TensorRegionSink::access_batch(const Access* accesses, size_t count) {
  m_buffer.assign(accesses, accesses + count);
  for (Access& a : m_buffer)
    if (a.tensor < 0) a.tensor = lookup(a.addr);
  m_next.access_batch(m_buffer.data(), m_buffer.size());
}

std::vector<std::string> TensorRegionSink::names() const {
  std::vector<std::string> out;
  for (const TensorRegion& r : m_regions) out.push_back(r.name);
  return out;
}

}  // namespace tilescope::memory
