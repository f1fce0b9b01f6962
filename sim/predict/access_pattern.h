// Which lines a prefetcher can see coming. Streams an address trace on to the next sink and, per
// tensor, sorts every move from one cache line to another into
//   sequential: the next (or previous) line, or another line of the same 4 KiB page — hardware
//               prefetchers follow streams and constant strides inside a page; and
//   strided:    a jump to a line of another page (a row-major matrix walked down its columns
//               with rows of 4 KiB or more, as naive ijk GEMM walks B) — no prefetcher follows.
// The roofline charges a tensor's share of strided moves at the machine's measured cost per
// strided line (`strided_line`, from `tilescope-cli probe`) instead of its streaming bandwidth.
#pragma once

#include "sim/memory/access.h"

#include <cstdint>
#include <vector>

namespace tilescope::predict {

struct TensorPattern {
  uint64_t line_moves = 0;     // accesses to a different line than the tensor's previous access
  uint64_t strided_moves = 0;  // of which to another page, not the next line
  double strided_fraction() const {
    return line_moves ? double(strided_moves) / double(line_moves) : 0.0;
  }
};

class AccessPatternSink final : public memory::AccessSink {
 public:
  explicit AccessPatternSink(memory::AccessSink& next, uint32_t line_bytes = 64,
                             uint32_t page_bytes = 4096);
  void access(const memory::Access& a) override;
  void access_batch(const memory::Access* a, size_t n) override;
  void step_boundary(uint64_t step) override { m_next.step_boundary(step); }

  // Index tensor + 1 (0 = accesses without a tensor); grows with the largest tensor id seen.
  const std::vector<TensorPattern>& by_tensor() const { return m_patterns; }
  TensorPattern pattern(int tensor) const;

 private:
  void classify(const memory::Access& a);

  memory::AccessSink& m_next;
  uint32_t m_line_shift, m_page_shift;
  std::vector<TensorPattern> m_patterns;
  std::vector<uint64_t> m_last_line;  // per tensor + 1; ~0 = none yet
};

}  // namespace tilescope::predict
