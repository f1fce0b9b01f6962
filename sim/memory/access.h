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

// One warp instruction before it is coalesced (GPU traces with TraceOptions::lane_detail): the
// address each active lane asks for, in lane order. The sectors that follow it are what the
// hierarchy simulates; this is for sinks that draw coalescing (the Tiles view's GPU mode).
struct WarpRequest {
  int32_t warp = -1;  // global warp id, as Access::warp
  int16_t tensor = -1;
  AccessKind kind = AccessKind::Read;
  AddressSpace space = AddressSpace::Global;
  uint32_t lane_bytes = 4;
  const uint64_t* lane_addr = nullptr;  // `lanes` addresses
  uint32_t lanes = 0;
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
  // Called before the accesses of one warp instruction, only when the producer was asked for lane
  // detail; the accesses handed over before it are all from earlier instructions.
  virtual void warp_request(const WarpRequest& /*request*/) {}
};

}  // namespace tilescope::memory
