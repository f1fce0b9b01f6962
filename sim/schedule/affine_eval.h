// Fast evaluation of affine expressions during a loop-tree walk (interpreter, trace walker): each
// expression is compiled once to (slot, coefficient) pairs, then evaluated against slot values.
#pragma once

#include "sim/schedule/kernel.h"

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::schedule {

class AffineEnv {
 public:
  static constexpr int kDefDims = 8;  // def_var(0..7): the index variables of computed tensors

  explicit AffineEnv(const Kernel& k) {
    for (size_t i = 0; i < k.loops.size(); ++i) m_slot[k.loops[i].name] = int(i);
    m_loops = int(k.loops.size());
    for (int d = 0; d < kDefDims; ++d) m_slot[def_var(size_t(d))] = m_loops + d;
    m_val.assign(size_t(m_loops + kDefDims), 0);
  }

  void set_loop(int loop, int64_t v) { m_val[size_t(loop)] = v; }
  void set_def(size_t d, int64_t v) { m_val[size_t(m_loops) + d] = v; }
  int64_t loop_value(int loop) const { return m_val[size_t(loop)]; }

  // `a` must outlive the environment (it is cached by address).
  int64_t eval(const Affine& a) {
    // A direct-mapped table of recent expressions in front of the map: a trace walk evaluates the
    // same few expressions millions of times, and a hash-map lookup would cost more than the sum.
    Recent& r = m_recent[(reinterpret_cast<uintptr_t>(&a) >> 4) % kRecent];
    if (r.key != &a) {
      auto it = m_cache.find(&a);
      if (it == m_cache.end()) {
        Compiled c;
        c.c = a.constant;
        for (const auto& [n, k] : a.terms) {
          auto s = m_slot.find(n);
          if (s == m_slot.end()) throw ScheduleError("unknown loop variable '" + n + "'");
          c.t.emplace_back(s->second, k);
        }
        it = m_cache.emplace(&a, std::move(c)).first;
      }
      r = {&a, &it->second};  // map nodes never move
    }
    int64_t v = r.code->c;
    for (const auto& [s, k] : r.code->t) v += m_val[size_t(s)] * k;
    return v;
  }

 private:
  struct Compiled {
    int64_t c = 0;
    std::vector<std::pair<int, int64_t>> t;
  };
  struct Recent {
    const Affine* key = nullptr;
    const Compiled* code = nullptr;
  };
  static constexpr size_t kRecent = 64;
  std::unordered_map<std::string, int> m_slot;
  std::vector<int64_t> m_val;
  std::unordered_map<const Affine*, Compiled> m_cache;
  std::array<Recent, kRecent> m_recent{};
  int m_loops = 0;
};

}  // namespace tilescope::schedule
