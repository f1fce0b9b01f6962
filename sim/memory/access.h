// One memory access as the simulator sees it, and the sink interface address streams flow through.
//
// Traces are streamed, never stored whole: a producer (a schedule walker, a .din reader) calls
// AccessSink::access() once per access, so memory stays bounded for any problem size.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tilescope::memory {

enum class AccessKind : uint8_t { Read = 0, Write = 1, InstrFetch = 2 };

// Which address space an access targets: the cache hierarchy, or the per-SM scratchpad (CUDA
// shared memory), whose cost is bank conflicts rather than misses.
enum class AddressSpace : uint8_t { Global = 0, Shared = 1 };

struct Access {
  uint64_t addr = 0;  // byte address
  uint32_t size = 4;  // bytes (an element, or a coalesced sector request)
  AccessKind kind = AccessKind::Read;
  int16_t tensor = -1;  // graph TensorId the address belongs to, -1 when unknown (external traces)
  int32_t warp = -1;    // GPU traces: global warp id issuing it; -1 for CPU / element traces
  AddressSpace space = AddressSpace::Global;  // last, so positional initialisers above still work
};

class AccessSink {
 public:
  virtual ~AccessSink() = default;
  virtual void access(const Access& a) = 0;
  // Producers should buffer accesses and hand them over in batches: one virtual call per batch
  // instead of one per access keeps the simulator's hot loop free of indirect calls.
  virtual void access_batch(const Access* accesses, size_t count) {
    for (size_t i = 0; i < count; ++i) access(accesses[i]);
  }
  // Called between loop-nest steps so animations can snapshot state; `step` counts from 0.
  virtual void step_boundary(uint64_t /*step*/) {}
};

}  // namespace tilescope::memory
