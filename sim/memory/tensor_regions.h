// Labels accesses of an external trace (which carries no tensor ids) with tensors by address
// range, then forwards them: `--tensor A=0x1000+4096` on the CLI gives din traces per-tensor stats.
#pragma once

#include "sim/memory/access.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::memory {

struct TensorRegion {
  std::string name;
  uint64_t base = 0;
  uint64_t bytes = 0;
};

// Parses "NAME=BASE+BYTES" (each decimal, or hex with 0x). Throws std::invalid_argument naming
// the problem.
TensorRegion parse_tensor_region(const std::string& text);

class TensorRegionSink final : public AccessSink {
 public:
  // Tensor id i is regions[i]; regions must not overlap (throws std::invalid_argument).
  TensorRegionSink(std::vector<TensorRegion> regions, AccessSink& next);
  void access(const Access& a) override { access_batch(&a, 1); }
  void access_batch(const Access* accesses, size_t count) override;
  void step_boundary(uint64_t step) override { m_next.step_boundary(step); }
  std::vector<std::string> names() const;

 private:
  int16_t lookup(uint64_t addr) const;
  std::vector<TensorRegion> m_regions;  // as given (ids)
  std::vector<size_t> m_order;          // indices sorted by base
  AccessSink& m_next;
  std::vector<Access> m_buffer;
};

}  // namespace tilescope::memory
