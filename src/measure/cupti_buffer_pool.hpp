#pragma once
// The buffers CUPTI's activity API writes its records into. CUPTI asks for one through the
// buffer-requested callback, fills it, and returns it through the buffer-completed callback;
// between the two it is CUPTI's. The pool owns every buffer that is not CUPTI's and frees each
// exactly once; it keeps a few spares because a returned buffer's pages are already faulted in,
// and a timed loop goes through one every few calls.
//
// No CUPTI types (the buffers are bytes), so the pool is tested without CUPTI
// (tests/unit/test_cupti_buffer_pool.cpp). Not thread-safe: the tracer calls it under its lock.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace kbench::measure {

class CuptiBufferPool {
public:
  // Each buffer holds buffer_bytes (a multiple of alignment, as aligned_alloc requires) at an
  // address aligned to `alignment`; at most max_spare_buffers are kept once returned.
  CuptiBufferPool(std::size_t buffer_bytes, std::size_t alignment, std::size_t max_spare_buffers);
  // Move-only: each spare has one owner, which frees it.
  CuptiBufferPool(const CuptiBufferPool&) = delete;
  CuptiBufferPool& operator=(const CuptiBufferPool&) = delete;
  CuptiBufferPool(CuptiBufferPool&&) noexcept = default;
  CuptiBufferPool& operator=(CuptiBufferPool&&) noexcept = default;
  ~CuptiBufferPool() = default;

  // A spare, or a new buffer; null when memory ran out. Not the pool's until give_back.
  std::uint8_t* take();
  // Takes back a buffer from take() (null is ignored): kept as a spare or freed.
  void give_back(std::uint8_t* buffer);

  std::size_t buffer_bytes() const { return m_buffer_bytes; }
  std::size_t spare_buffers() const { return m_spares.size(); }

private:
  struct Free {
    void operator()(std::uint8_t* buffer) const noexcept { std::free(buffer); }
  };
  using Buffer = std::unique_ptr<std::uint8_t, Free>;

  std::size_t m_buffer_bytes;
  std::size_t m_alignment;
  std::size_t m_max_spare_buffers;
  std::vector<Buffer> m_spares;
};

} // namespace kbench::measure
