// One memory access as the simulator sees it, and the sink interface address streams flow through.
//
// Traces are streamed, never stored whole: a producer (a schedule walker, a .din reader) calls
// AccessSink::access() once per access, so memory stays bounded for any problem size.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>

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

// Thrown when a trace is stopped because its owner asked (CancelSink's default).
struct TraceCancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

// Hands accesses on to `next` and stops the trace, by throwing `Cancelled`, once `cancel` is set:
// a long simulation in a worker thread (a lesson's check, an autotune point) ends within a batch
// of a cancel or a quit.
template <class Cancelled = TraceCancelled>
class CancelSink final : public AccessSink {
 public:
  CancelSink(AccessSink& next, const std::atomic<bool>& cancel) : m_next(next), m_cancel(cancel) {}
  void access(const Access& a) override { access_batch(&a, 1); }
  void access_batch(const Access* a, size_t n) override {
    if (m_cancel.load(std::memory_order_relaxed)) throw Cancelled();
    m_next.access_batch(a, n);
  }
  void step_boundary(uint64_t step) override { m_next.step_boundary(step); }
  void warp_request(const WarpRequest& r) override { m_next.warp_request(r); }

 private:
  AccessSink& m_next;
  const std::atomic<bool>& m_cancel;
};

}  // namespace tilescope::memory
