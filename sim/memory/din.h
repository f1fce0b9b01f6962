// Dinero IV "din" trace interchange: one access per line, "label address [size]".
//
// label: 0 read, 1 write, 2 instruction fetch (hex digits are accepted, as Dinero does);
// address: hexadecimal, with or without 0x; size: bytes, decimal (or 0x hex), default 4.
// Blank lines and lines starting with '#' are skipped. Reading streams: nothing is stored.
#pragma once

#include "sim/memory/access.h"

#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>

namespace tilescope::memory {

// A malformed trace line; what() is "file:line: error: ...".
class TraceError : public std::runtime_error {
 public:
  TraceError(std::string file, uint64_t line, const std::string& message);
  const std::string& file() const { return m_file; }
  uint64_t line() const { return m_line; }

 private:
  std::string m_file;
  uint64_t m_line;
};

struct DinOptions {
  uint32_t default_size = 4;
  size_t batch = 4096;  // accesses handed to the sink per access_batch() call
};

// Streams every access of `in` into `sink`; returns how many were read.
// `name` is used in error messages. Throws TraceError.
uint64_t read_din(std::istream& in, const std::string& name, AccessSink& sink,
                  const DinOptions& options = {});
uint64_t read_din_file(const std::string& path, AccessSink& sink, const DinOptions& options = {});

// An AccessSink that writes din lines (the size column is always written).
class DinWriter final : public AccessSink {
 public:
  explicit DinWriter(std::ostream& out) : m_out(out) {}
  void access(const Access& a) override;
  uint64_t written() const { return m_written; }

 private:
  std::ostream& m_out;
  uint64_t m_written = 0;
};

}  // namespace tilescope::memory
