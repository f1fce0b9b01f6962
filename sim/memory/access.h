// One memory access as the simulator sees it, and the sink interface address streams flow through.
//
// Traces are streamed, never stored whole: a producer (a schedule walker, a .din reader) calls
// AccessSink::access() once per access, so memory stays bounded for any problem size.
#pragma once

#include <cstdint>

namespace tilescope::memory {

enum class AccessKind : uint8_t { Read = 0, Write = 1, InstrFetch = 2 };

struct Access {
  uint64_t addr = 0;      // byte address
  uint32_t size = 4;      // bytes (an element, or a coalesced sector request)
  AccessKind kind = AccessKind::Read;
  int16_t tensor = -1;    // graph TensorId the address belongs to, -1 when unknown (external traces)
  int32_t warp = -1;      // GPU traces: global warp id issuing it; -1 for CPU / element traces
};

class AccessSink {
 public:
  virtual ~AccessSink() = default;
  virtual void access(const Access& a) = 0;
  // Called between loop-nest steps so animations can snapshot state; `step` counts from 0.
  virtual void step_boundary(uint64_t /*step*/) {}
};

}  // namespace tilescope::memory
