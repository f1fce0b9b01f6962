// Shared-memory bank conflicts (hand cases) and the Dinero din trace format (round trip, errors).
#include <doctest/doctest.h>

#include "sim/memory/din.h"
#include "sim/memory/hierarchy.h"
#include "sim/memory/scratchpad.h"

#include <sstream>
#include <vector>

using namespace tilescope::memory;

namespace {
std::vector<LaneAccess> warp(uint64_t stride_bytes, uint32_t size = 4) {
  std::vector<LaneAccess> lanes;
  for (uint64_t i = 0; i < 32; ++i) lanes.push_back({i * stride_bytes, size});
  return lanes;
}

class Recorder final : public AccessSink {
 public:
  void access(const Access& a) override { seen.push_back(a); }
  std::vector<Access> seen;
};
}  // namespace

TEST_CASE("bank conflict degree: 32 banks of 4 B") {
  CHECK(bank_conflict_degree(warp(4)) == 1);     // stride 1 word: one word per bank
  CHECK(bank_conflict_degree(warp(8)) == 2);     // stride 2 words: banks 0,2,…; two words each
  CHECK(bank_conflict_degree(warp(128)) == 32);  // stride 32 words: all lanes in bank 0
  CHECK(bank_conflict_degree(warp(132)) == 1);   // stride 33 words (padding): conflict-free
  CHECK(bank_conflict_degree(warp(0)) == 1);     // all lanes the same word: broadcast
  std::vector<LaneAccess> pairs;                 // lanes 2i and 2i+1 read the same word
  for (uint64_t i = 0; i < 32; ++i) pairs.push_back({(i / 2) * 128, 4});
  CHECK(bank_conflict_degree(pairs) == 16);  // 16 distinct words, all in bank 0
  // float4 per lane, contiguous: 128 words over 32 banks → 4 wavefronts, and 4 is also ideal.
  CHECK(bank_conflict_degree(warp(16, 16)) == 4);
  CHECK(ideal_wavefronts(warp(16, 16)) == 4);
}

TEST_CASE("shared-memory accesses in a trace are grouped per warp and counted") {
  HierarchyConfig cfg;
  CacheConfig l1;
  cfg.levels = {l1};
  cfg.scratchpad = ScratchpadConfig{};
  Hierarchy h(cfg);
  std::vector<Access> batch;
  for (int w = 0; w < 2; ++w)
    for (uint64_t lane = 0; lane < 32; ++lane) {
      Access a;
      a.addr = lane * (w == 0 ? 4 : 128);  // warp 0 conflict-free, warp 1 32-way
      a.warp = w;
      a.space = AddressSpace::Shared;
      batch.push_back(a);
    }
  h.access_batch(batch.data(), batch.size());
  h.finish();
  REQUIRE(h.scratchpad() != nullptr);
  CHECK(h.scratchpad()->stats().requests == 2);
  CHECK(h.scratchpad()->stats().wavefronts == 1 + 32);
  CHECK(h.scratchpad()->stats().max_degree == 32);
  CHECK(h.counters(0).accesses == 0);  // none of it went to the caches
}

TEST_CASE("din round trip keeps kind, address and size") {
  std::vector<Access> in = {{0x1000, 4, AccessKind::Read},
                            {0xdeadbeef0, 8, AccessKind::Write},
                            {0x40, 16, AccessKind::InstrFetch}};
  std::stringstream text;
  DinWriter writer(text);
  for (const Access& a : in) writer.access(a);
  CHECK(text.str() == "0 1000 4\n1 deadbeef0 8\n2 40 16\n");
  Recorder rec;
  CHECK(read_din(text, "t.din", rec) == 3);
  REQUIRE(rec.seen.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(rec.seen[i].addr == in[i].addr);
    CHECK(rec.seen[i].size == in[i].size);
    CHECK(rec.seen[i].kind == in[i].kind);
  }
}

TEST_CASE("din reader accepts comments, blank lines, 0x and a default size") {
  std::stringstream text("# a comment\n\n0 0x10\n1 20 8\n");
  Recorder rec;
  CHECK(read_din(text, "t.din", rec) == 2);
  CHECK(rec.seen[0].size == 4);
  CHECK(rec.seen[0].addr == 0x10);
  CHECK(rec.seen[1].addr == 0x20);
}

TEST_CASE("malformed din lines give file:line errors") {
  auto error_of = [](const std::string& s) {
    std::stringstream text(s);
    Recorder rec;
    try {
      read_din(text, "bad.din", rec);
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("0 10\n0 zz\n").rfind("bad.din:2: error: address 'zz'", 0) == 0);
  CHECK(error_of("0 10\n\n7 10\n").rfind("bad.din:3: error: label 7", 0) == 0);
  CHECK(error_of("0\n").rfind("bad.din:1: error: missing address", 0) == 0);
  CHECK(error_of("0 10 four\n").rfind("bad.din:1: error: size 'four'", 0) == 0);
  CHECK(error_of("0 10 4 extra\n").rfind("bad.din:1: error: unexpected 'extra'", 0) == 0);
  CHECK(error_of("x 10\n").rfind("bad.din:1: error: label 'x'", 0) == 0);
}
