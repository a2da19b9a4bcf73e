#include "sandbox/output_capture.hpp"

#include <algorithm>
#include <string>

namespace kbench::sandbox {

void OutputCapture::append(std::string_view chunk) {
  m_total += chunk.size();
  if (m_head.size() < m_keep) {
    const std::size_t take = std::min(m_keep - m_head.size(), chunk.size());
    m_head.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  if (chunk.empty()) {
    return;
  }
  if (chunk.size() >= m_keep) {
    m_tail.assign(chunk.substr(chunk.size() - m_keep));
    return;
  }
  m_tail.append(chunk);
  if (m_tail.size() > m_keep) {
    m_tail.erase(0, m_tail.size() - m_keep);
  }
}

std::string OutputCapture::text() const {
  if (!truncated()) {
    return m_head + m_tail;
  }
  const std::size_t omitted = m_total - m_head.size() - m_tail.size();
  return m_head + "\n[kbench: " + std::to_string(omitted) + " bytes of output left out]\n" + m_tail;
}

std::string OutputCapture::tail(std::size_t max_bytes) const {
  const std::string all = truncated() ? m_tail : m_head + m_tail;
  if (all.size() <= max_bytes) {
    return all;
  }
  return all.substr(all.size() - max_bytes);
}

void OutputCapture::clear() {
  m_total = 0;
  m_head.clear();
  m_tail.clear();
}

} // namespace kbench::sandbox
