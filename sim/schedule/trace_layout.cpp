// What a kernel's trace is laid out on and names, beside the walker (trace.cpp): where each tensor
// and the accumulator buffer start, the names reports give the buffers a transform made, and the
// first warp load of a tensor (the coalescing a lesson asks about).
#include "sim/schedule/trace.h"

#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <vector>

namespace tilescope::schedule {

TraceLayout trace_layout(const Kernel& k, const TraceOptions& o) {
  TraceLayout l;
  const uint64_t a = std::max<uint64_t>(o.alignment, 64);
  uint64_t next = uint64_t(1) << 20;  // keep address 0 unused
  for (const auto& t : k.tensors) {
    next = (next + a - 1) / a * a;
    l.tensor_base.push_back(next);
    next += t.buffer_bytes();
  }
  const AccumulatorHome home = accumulator_home(k, o.gpu);
  if (!home.registers) {
    l.acc_base = (next + a - 1) / a * a;
    l.acc_slot_bytes = (uint64_t(home.elems_per_acc) * 4 + 63) / 64 * 64;
    l.acc_bytes = l.acc_slot_bytes * uint64_t(home.num_accs);
    next = l.acc_base + l.acc_bytes;
  }
  l.scratch_base = (next + a - 1) / a * a;
  return l;
}
void name_accumulator_buffer(TraceOptions& o, std::vector<std::string>& tensor_names) {
  o.acc_tensor = int16_t(tensor_names.size());
  tensor_names.push_back(kAccumulatorBufferName);
}

void name_scratch_tensors(TraceOptions& o, std::vector<std::string>& tensor_names,
                          const Kernel& k) {
  std::string name;
  for (const KernelTensor& t : k.tensors)
    if (t.id < 0) name += (name.empty() ? "" : ", ") + t.name;
  if (name.empty()) return;
  o.scratch_tensor = int16_t(tensor_names.size());
  tensor_names.push_back(name);
}

namespace {

using memory::Access;
using memory::AccessKind;
using memory::AddressSpace;

class FirstWarpLoad final : public memory::AccessSink {
 public:
  struct Found {};
  FirstWarpLoad(int graph_id, uint32_t sector_bytes) : m_id(graph_id), m_sector(sector_bytes) {}
  void access(const Access&) override {}
  void access_batch(const Access*, size_t) override {}
  void warp_request(const memory::WarpRequest& q) override {
    if (q.warp != 0 || q.kind != AccessKind::Read || q.space != AddressSpace::Global ||
        q.tensor != m_id || q.lanes == 0)
      return;
    std::vector<uint64_t> sectors, words(q.lane_addr, q.lane_addr + q.lanes);
    for (uint64_t a : words) sectors.push_back(a / m_sector);
    std::sort(sectors.begin(), sectors.end());
    std::sort(words.begin(), words.end());
    const uint64_t bytes =
        uint64_t(std::unique(words.begin(), words.end()) - words.begin()) * q.lane_bytes;
    result.lanes = q.lanes;
    result.sectors = uint32_t(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    result.ideal_sectors = uint32_t((bytes + m_sector - 1) / m_sector);
    throw Found{};
  }
  WarpLoad result;

 private:
  int m_id;
  uint32_t m_sector;
};

}  // namespace

WarpLoad first_warp_load(const Kernel& k, const std::string& tensor, TraceOptions o) {
  const auto t = std::find_if(k.tensors.begin(), k.tensors.end(),
                              [&](const KernelTensor& kt) { return kt.name == tensor; });
  if (t == k.tensors.end())
    throw ScheduleError("kernel " + k.name + " has no tensor '" + tensor + "'");
  o.gpu = true;
  o.lane_detail = true;
  o.step_loop.clear();
  FirstWarpLoad sink(t->id, std::max<uint32_t>(o.sector_bytes, 1));
  try {
    trace_kernel(k, sink, o);
  } catch (const FirstWarpLoad::Found&) {
  }
  return sink.result;
}

}  // namespace tilescope::schedule
