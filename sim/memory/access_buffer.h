// A fixed-size buffer between an address-stream producer and an AccessSink: producers push one
// access at a time and the sink receives them in batches (one virtual call per few thousand).
#pragma once

#include "sim/memory/access.h"

#include <cstddef>
#include <vector>

namespace tilescope::memory {

class AccessBuffer {
 public:
  explicit AccessBuffer(AccessSink& sink, size_t capacity = 4096)
      : m_sink(sink), m_buffer(capacity == 0 ? 1 : capacity) {}
  AccessBuffer(const AccessBuffer&) = delete;
  AccessBuffer& operator=(const AccessBuffer&) = delete;
  ~AccessBuffer() { flush(); }

  void push(const Access& a) {
    m_buffer[m_count++] = a;
    if (m_count == m_buffer.size()) flush();
  }
  // Step boundaries must reach the sink after every access of the step, hence the flush first.
  void step_boundary(uint64_t step) {
    flush();
    m_sink.step_boundary(step);
  }
  void flush() {
    if (m_count == 0) return;
    m_sink.access_batch(m_buffer.data(), m_count);
    m_count = 0;
  }

 private:
  AccessSink& m_sink;
  std::vector<Access> m_buffer;
  size_t m_count = 0;
};

}  // namespace tilescope::memory
