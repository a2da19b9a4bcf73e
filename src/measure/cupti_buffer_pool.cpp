#include "measure/cupti_buffer_pool.hpp"

#include <utility>

namespace kbench::measure {

CuptiBufferPool::CuptiBufferPool(std::size_t buffer_bytes, std::size_t alignment,
                                 std::size_t max_spare_buffers)
    : m_buffer_bytes(buffer_bytes), m_alignment(alignment), m_max_spare_buffers(max_spare_buffers) {
  // So that give_back, which runs in CUPTI's callback, never allocates.
  m_spares.reserve(max_spare_buffers);
}

std::uint8_t* CuptiBufferPool::take() {
  if (!m_spares.empty()) {
    std::uint8_t* buffer = m_spares.back().release();
    m_spares.pop_back();
    return buffer;
  }
  return static_cast<std::uint8_t*>(std::aligned_alloc(m_alignment, m_buffer_bytes));
}

void CuptiBufferPool::give_back(std::uint8_t* buffer) {
  Buffer owned(buffer);
  if (owned && m_spares.size() < m_max_spare_buffers) {
    m_spares.push_back(std::move(owned));
  }
}

} // namespace kbench::measure
