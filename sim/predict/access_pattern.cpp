// Sequential vs strided line moves per tensor; see access_pattern.h.
#include "sim/predict/access_pattern.h"

#include <bit>
#include <stdexcept>

namespace tilescope::predict {

AccessPatternSink::AccessPatternSink(memory::AccessSink& next, uint32_t line_bytes,
                                     uint32_t page_bytes)
    : m_next(next) {
  if (!std::has_single_bit(line_bytes) || !std::has_single_bit(page_bytes) ||
      page_bytes < line_bytes)
    throw std::invalid_argument("access pattern: line and page sizes must be powers of two, "
                                "page ≥ line");
  m_line_shift = uint32_t(std::countr_zero(line_bytes));
  m_page_shift = uint32_t(std::countr_zero(page_bytes));
}

void AccessPatternSink::classify(const memory::Access& a) {
  if (a.space != memory::AddressSpace::Global) return;  // shared memory has no prefetcher
  const size_t i = a.tensor < 0 ? 0 : size_t(a.tensor) + 1;
  if (i >= m_patterns.size()) {
    m_patterns.resize(i + 1);
    m_last_line.resize(i + 1, ~uint64_t(0));
  }
  const uint64_t line = a.addr >> m_line_shift;
  const uint64_t last = m_last_line[i];
  if (line == last) return;
  m_last_line[i] = line;
  if (last == ~uint64_t(0)) return;  // the tensor's first line: nothing to follow yet
  TensorPattern& p = m_patterns[i];
  ++p.line_moves;
  const bool adjacent = line == last + 1 || line + 1 == last;
  const uint32_t per_page = m_page_shift - m_line_shift;
  if (!adjacent && (line >> per_page) != (last >> per_page)) ++p.strided_moves;
}

void AccessPatternSink::access(const memory::Access& a) {
  classify(a);
  m_next.access(a);
}

void AccessPatternSink::access_batch(const memory::Access* a, size_t n) {
  for (size_t k = 0; k < n; ++k) classify(a[k]);
  m_next.access_batch(a, n);
}

TensorPattern AccessPatternSink::pattern(int tensor) const {
  const size_t i = tensor < 0 ? 0 : size_t(tensor) + 1;
  return i < m_patterns.size() ? m_patterns[i] : TensorPattern{};
}

}  // namespace tilescope::predict
