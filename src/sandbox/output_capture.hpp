#pragma once
// A capped capture of a worker's stdout or stderr: the first and the last bytes are kept, the
// middle is counted. A candidate that prints 100 MB costs us `2 * keep_bytes` of memory.
#include <cstddef>
#include <string>
#include <string_view>

namespace kbench::sandbox {

class OutputCapture {
public:
  explicit OutputCapture(std::size_t keep_bytes = 64 * 1024) : m_keep(keep_bytes) {}

  void append(std::string_view chunk);
  std::size_t total_bytes() const { return m_total; }
  bool truncated() const { return m_total > m_head.size() + m_tail.size(); }
  // Head and tail joined by a line that says how much was left out.
  std::string text() const;
  // The last `max_bytes` bytes (for error messages: tracebacks end there).
  std::string tail(std::size_t max_bytes) const;
  void clear();

private:
  std::size_t m_keep;
  std::size_t m_total = 0;
  std::string m_head;
  std::string m_tail; // ring semantics: trimmed from the front when it grows past m_keep
};

} // namespace kbench::sandbox
