#pragma once
// One pass over a large tensor's elements on several threads. The judging of a problem's check
// reads KernelBench outputs of up to 8 GiB several times a trial; on one thread that cost 8-17 s
// a trial on the H200 while the machine's other cores sat idle.
//
// The elements are cut into blocks of a fixed size whatever the thread count, and the results
// come back in block order, so that a caller that combines them in that order (a sum, say) gets
// the same answer on any machine.
#include "compare/safetensors.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kbench::compare {

inline constexpr std::size_t kElementBlock = std::size_t{1} << 20;

// Threads for one pass: a few, not every core (checks run several at a time, each judging).
inline unsigned element_block_threads(std::size_t blocks) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<std::size_t>({blocks, cores, 8}));
}

// body(first, count) -> R for every block of [0, n). Once stop(result) is true for some block,
// blocks not yet started are left out (their entries stay empty): for passes that end at the
// first element that settles the answer.
template <typename R, typename Body, typename Stop>
std::vector<std::optional<R>> over_element_blocks(std::size_t n, const Body& body,
                                                  const Stop& stop) {
  const std::size_t blocks = (n + kElementBlock - 1) / kElementBlock;
  std::vector<std::optional<R>> results(blocks);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  std::exception_ptr failure; // the first block's exception, raised again on the caller's thread
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (std::size_t b = next++; b < blocks && !stopped.load(std::memory_order_relaxed);
           b = next++) {
        const std::size_t first = b * kElementBlock;
        results[b] = body(first, std::min(kElementBlock, n - first));
        if (stop(*results[b])) {
          stopped = true;
        }
      }
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      failure = failure ? failure : std::current_exception();
      stopped = true;
    }
  };
  const unsigned threads = element_block_threads(blocks);
  {
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t) { // none for a tensor of one block
      helpers.emplace_back(work);
    }
    work();
  } // joined here, before `results` is handed back
  if (failure) {
    std::rethrow_exception(failure);
  }
  return results;
}

// Elements [begin, begin + size) of `tensor` converted to double a chunk at a time (one dtype
// dispatch per chunk), each chunk handed to visit(values, count); visit returns false to stop.
template <typename Visit>
void decode_chunks(const Tensor& tensor, std::size_t begin, std::size_t size, const Visit& visit) {
  std::array<double, 2048> chunk{};
  for (std::size_t first = begin; first < begin + size; first += chunk.size()) {
    const std::size_t count = std::min(chunk.size(), begin + size - first);
    tensor.decode(first, count, chunk.data());
    if (!visit(chunk.data(), count)) {
      return;
    }
  }
}

template <typename R, typename Body>
std::vector<std::optional<R>> over_element_blocks(std::size_t n, const Body& body) {
  return over_element_blocks<R>(n, body, [](const R&) { return false; });
}

} // namespace kbench::compare
