// Dinero IV din reader (streaming, line-numbered errors) and writer.
#include "sim/memory/din.h"

#include "sim/io/input.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

namespace tilescope::memory {

TraceError::TraceError(std::string file, uint64_t line, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                         ": error: " + message),
      m_file(std::move(file)),
      m_line(line) {}

namespace {

std::string_view next_field(std::string_view& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) {
    s = {};
    return {};
  }
  s.remove_prefix(b);
  size_t e = s.find_first_of(" \t\r");
  std::string_view f = s.substr(0, e);
  s.remove_prefix(e == std::string_view::npos ? s.size() : e);
  return f;
}

// One line of at most `limit` bytes into `text` (without the newline). False at the end of the
// stream; `too_long` when the line goes on past the limit (a binary file, /dev/zero), so the
// reader never buffers an endless line.
bool read_line(std::istream& in, std::string& text, size_t limit, bool& too_long) {
  text.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return !text.empty();
    }
    if (c == '\n') return true;
    if (text.size() == limit) {
      too_long = true;
      return true;
    }
    text.push_back(static_cast<char>(c));
  }
}

// A field echoed in an error: control characters escaped, a long token cut.
std::string shown(std::string_view f) { return io::printable(f, 40); }

bool parse_u64(std::string_view f, int base, uint64_t& out) {
  if (base == 16 && f.size() > 2 && f[0] == '0' && (f[1] == 'x' || f[1] == 'X')) f.remove_prefix(2);
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out, base);
  return ec == std::errc() && p == f.data() + f.size();
}

}  // namespace

uint64_t read_din(std::istream& in, const std::string& name, AccessSink& sink,
                  const DinOptions& options) {
  std::vector<Access> batch;
  batch.reserve(options.batch == 0 ? 1 : options.batch);
  std::string text;
  uint64_t line_no = 0, count = 0;
  bool too_long = false;
  while (read_line(in, text, io::kMaxStreamLineBytes, too_long)) {
    ++line_no;
    auto fail = [&](const std::string& msg) { throw TraceError(name, line_no, msg); };
    if (too_long)
      fail("the line is longer than " + std::to_string(io::kMaxStreamLineBytes) +
           " bytes; a din line is 'label address [size]' (is this a din trace? it starts '" +
           shown(text) + "')");
    std::string_view rest = text;
    std::string_view label = next_field(rest);
    if (label.empty() || label[0] == '#') continue;
    uint64_t lab = 0;
    if (!parse_u64(label, 16, lab))
      fail("label '" + shown(label) + "' is not a number (0 read, 1 write, 2 fetch)");
    if (lab > 2)
      fail("label " + shown(label) +
           " is not supported (0 read, 1 write, 2 instruction fetch; Dinero's escape records 3 "
           "and 4 are not)");
    std::string_view addr_f = next_field(rest);
    if (addr_f.empty()) fail("missing address after label " + shown(label));
    uint64_t addr = 0;
    if (!parse_u64(addr_f, 16, addr))
      fail("address '" + shown(addr_f) + "' is not a hexadecimal number");
    uint64_t size = options.default_size;
    std::string_view size_f = next_field(rest);
    if (!size_f.empty()) {
      bool hex = size_f.size() > 2 && size_f[0] == '0' && (size_f[1] == 'x' || size_f[1] == 'X');
      if (!parse_u64(size_f, hex ? 16 : 10, size))
        fail("size '" + shown(size_f) + "' is not a number of bytes");
      if (size == 0 || size > (1u << 20))
        fail("size " + shown(size_f) + " is not 1 .. 1 MiB");
    }
    std::string_view extra = next_field(rest);
    if (!extra.empty()) fail("unexpected '" + shown(extra) + "' after the size");
    if (addr + size < addr) fail("address + size overflows 64 bits");
    Access a;
    a.addr = addr;
    a.size = static_cast<uint32_t>(size);
    a.kind = static_cast<AccessKind>(lab);
    batch.push_back(a);
    ++count;
    if (batch.size() == batch.capacity()) {
      sink.access_batch(batch.data(), batch.size());
      batch.clear();
    }
  }
  if (!batch.empty()) sink.access_batch(batch.data(), batch.size());
  return count;
}

uint64_t read_din_file(const std::string& path, AccessSink& sink, const DinOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw TraceError(path, 0, "is a directory, not a din trace");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, "cannot open the trace file");
  return read_din(in, path, sink, options);
}

void DinWriter::access(const Access& a) {
  char buf[64];
  char* p = buf;
  *p++ = static_cast<char>('0' + static_cast<int>(a.kind));
  *p++ = ' ';
  p = std::to_chars(p, buf + sizeof buf, a.addr, 16).ptr;
  *p++ = ' ';
  p = std::to_chars(p, buf + sizeof buf, a.size).ptr;
  *p++ = '\n';
  m_out.write(buf, p - buf);
  ++m_written;
}

}  // namespace tilescope::memory
